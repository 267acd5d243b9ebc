"""GPU sharing and the GPU-fragmentation policies of the FGD paper, as plugins.

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
Fragmentation Gradient Descent" (USENIX ATC '23), on kubesched's plugin SDK:

* ``GpuShare`` (PreFilter, Filter, Reserve): per-device GPU accounting, shares of one
  device and whole devices, GPU models (``share``);
* six Score plugins, one per policy the paper compares: ``RandomScore``,
  ``DotProductScore``, ``GpuClusteringScore``, ``GpuPackingScore``, ``BestFitScore``
  and ``FGDScore``.

They are not upstream plugins, so the in-tree registry (upstream's names) does not
hold them: ``registry()`` does, and ``kubesched replay`` merges it in. Other commands
load it like any out-of-tree plugin: ``--plugin kubesched.plugins.gpushare:registry``.
How pods and nodes carry GPUs: ``request``.
"""

from __future__ import annotations

from kubesched.framework import Registry

from . import best_fit, dot_product, fgd, gpu_clustering, gpu_packing, random_score, share
from .cycle import DEVICE_CHOOSER, GPU_CYCLE, DeviceChooser, GpuCycle
from .devices import DeviceState, Placement
from .fgd import FGDScoreArgs, TypicalPodArgs
from .fragmentation import FragmentationModel, PodShape, TypicalPod, cluster_fragmentation, typical_pods
from .random_score import RandomScoreArgs
from .request import GPU_MILLI, GPU_MODEL, MILLI, GpuRequest, GpuRequestError, gpu_request, parse_models

__all__ = [
    "DEVICE_CHOOSER",
    "GPU_CYCLE",
    "GPU_MILLI",
    "GPU_MODEL",
    "GPU_SHARE",
    "MILLI",
    "POLICIES",
    "DeviceChooser",
    "DeviceState",
    "FGDScoreArgs",
    "FragmentationModel",
    "GpuCycle",
    "GpuRequest",
    "GpuRequestError",
    "Placement",
    "PodShape",
    "RandomScoreArgs",
    "TypicalPod",
    "TypicalPodArgs",
    "cluster_fragmentation",
    "gpu_request",
    "parse_models",
    "registry",
    "typical_pods",
]

GPU_SHARE = share.NAME

POLICIES: dict[str, str] = {
    "Random": random_score.NAME,
    "DotProduct": dot_product.NAME,
    "GpuClustering": gpu_clustering.NAME,
    "GpuPacking": gpu_packing.NAME,
    "BestFit": best_fit.NAME,
    "FGD": fgd.NAME,
}
"""The paper's policies, in its order: short name -> Score plugin name."""


def registry() -> Registry:
    """GpuShare and the six policies alone, to merge into the in-tree registry (or to
    load with ``--plugin kubesched.plugins.gpushare:registry``)."""
    reg = Registry()
    reg.register(share.spec)
    reg.register(random_score.spec)
    reg.register(dot_product.spec)
    reg.register(gpu_clustering.spec)
    reg.register(gpu_packing.spec)
    reg.register(best_fit.spec)
    reg.register(fgd.spec)
    return reg
