"""What a pod asks of a node's GPUs, read from the pod as the scheduler parsed it.

GPU sharing follows the FGD paper (Weng et al., USENIX ATC '23) and Alibaba's
open-gpu-share: a node has ``N`` GPU devices of 1,000 milli-GPU each; a pod asks for
a share of one device (less than 1,000 milli) or for whole devices. Kubernetes has no
notion of a device share, so the request travels in two places:

* the extended resource ``kubesched.io/gpu-milli``: the pod's total milli-GPU (a
  share: 1..999; whole devices: 1000 x devices). Nodes advertise ``1000 x devices`` of
  it, so NodeResourcesFit already turns away nodes without enough GPU in total;
* the annotation ``kubesched.io/gpu-model`` on the pod: the GPU models it accepts,
  ``|``-separated (empty: any), matched against the node label of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from kubesched.objects import PodInfo

__all__ = [
    "GPU_MILLI",
    "GPU_MODEL",
    "MILLI",
    "NO_GPU",
    "GpuRequest",
    "GpuRequestError",
    "gpu_request",
    "parse_models",
]

GPU_MILLI = "kubesched.io/gpu-milli"
"""Extended resource: milli-GPU requested by a pod (total), or held by a node (1000 per device)."""
GPU_MODEL = "kubesched.io/gpu-model"
"""Node label: the node's GPU model. Pod annotation: the models the pod accepts, ``A|B``."""
MILLI = 1000
"""Milli-GPU in one device."""


class GpuRequestError(ValueError):
    """A request that is neither a share of one GPU nor whole GPUs (say, 1,500 milli)."""


@dataclass(frozen=True, slots=True)
class GpuRequest:
    """``count`` devices with ``milli`` each: a share is ``count == 1, milli < 1000``."""

    milli: int
    count: int
    models: frozenset[str] = frozenset()

    @property
    def share(self) -> bool:
        return self.count == 1 and self.milli < MILLI

    @property
    def total(self) -> int:
        return self.milli * self.count

    @property
    def wants_gpu(self) -> bool:
        return self.count > 0

    def accepts(self, model: str) -> bool:
        """Whether a node with GPU ``model`` may run the pod ("" is a node without a model)."""
        return not self.models or model in self.models


NO_GPU = GpuRequest(0, 0)


def parse_models(spec: str) -> frozenset[str]:
    """``"V100M16|V100M32"`` -> both models; empty parts (and ``nan``, as pandas writes an
    empty cell) are ignored, so ``""`` accepts any model."""
    return frozenset(part.strip() for part in spec.split("|") if part.strip() and part.strip() != "nan")


def gpu_request(pod: PodInfo) -> GpuRequest:
    """The pod's GPU request; raises ``GpuRequestError`` for a total that is neither
    below 1,000 (a share) nor a multiple of 1,000 (whole devices)."""
    total = pod.requests.requests.get(GPU_MILLI)
    if total <= 0:
        return NO_GPU
    models = parse_models(_annotation(pod, GPU_MODEL))
    if total < MILLI:
        return GpuRequest(total, 1, models)
    if total % MILLI:
        raise GpuRequestError(
            f"{GPU_MILLI} request {total} is neither a share of one GPU (below {MILLI}) nor whole GPUs (a multiple of {MILLI})"
        )
    return GpuRequest(MILLI, total // MILLI, models)


def _annotation(pod: PodInfo, key: str) -> str:
    """An annotation of a pending pod (the scheduler keeps pending pods' documents)."""
    meta = pod.raw.get("metadata") if pod.raw is not None else None
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    value = annotations.get(key) if isinstance(annotations, Mapping) else None
    return value if isinstance(value, str) else ""
