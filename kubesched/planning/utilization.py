"""A node's utilisation as cluster-autoscaler's scale-down measures it.

``simulator/utilization``: per resource, the pods' requests over the node's allocatable;
a node's utilisation is the larger of cpu and memory, or, on a node with GPUs, the GPU
one alone. DaemonSet and mirror pods count unless ``--ignore-daemonsets-utilization`` /
``--ignore-mirror-pods-utilization`` (both off by default), in which case their requests
come off the allocatable as well as off the sum. A node below the threshold
(``--scale-down-utilization-threshold``, 0.5; GPU nodes
``--scale-down-gpu-utilization-threshold``, 0.5) is underutilised: a candidate.

A resource the node does not offer makes cluster-autoscaler's computation fail; it then
goes on with a zero utilisation, and so does this.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..objects.pod import PodInfo
from ..objects.resources import Resource
from .drainability import is_daemonset_pod, is_mirror_pod

__all__ = ["Utilization", "node_utilization", "GPU_RESOURCE"]

GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True, slots=True)
class Utilization:
    """Requests over allocatable, per resource; ``value`` and ``resource`` are the one that
    decides (``resource`` "cpu", "memory" or the GPU resource)."""

    cpu: float = 0.0
    memory: float = 0.0
    gpu: float | None = None  # on a node with GPUs

    @property
    def resource(self) -> str:
        if self.gpu is not None:
            return GPU_RESOURCE
        return "cpu" if self.cpu > self.memory else "memory"

    @property
    def value(self) -> float:
        if self.gpu is not None:
            return self.gpu
        return self.cpu if self.cpu > self.memory else self.memory


def _amount(resource: Resource, name: str) -> int:
    if name == "cpu":
        return resource.milli_cpu
    if name == "memory":
        return resource.memory
    return resource.scalar.get(name, 0)


def _ratio(allocatable: Resource, pods: list[PodInfo], name: str, ignore_daemonsets: bool, ignore_mirror: bool) -> float:
    offered = _amount(allocatable, name)
    if offered == 0:
        raise ValueError(f"{name} is 0")
    requested = 0
    ignored = 0
    for pod in pods:
        amount = _amount(pod.requests.requests, name)
        if (ignore_daemonsets and is_daemonset_pod(pod)) or (ignore_mirror and is_mirror_pod(pod)):
            ignored += amount
            continue
        requested += amount
    left = offered - ignored
    return requested / left if left else float("inf") if requested else 0.0


def node_utilization(allocatable: Resource, pods: Iterable[PodInfo], ignore_daemonsets: bool = False,
                     ignore_mirror: bool = False) -> Utilization:
    """The utilisation of a node offering ``allocatable`` and running ``pods``."""
    listed = list(pods)
    try:
        if allocatable.scalar.get(GPU_RESOURCE, 0) > 0:
            return Utilization(gpu=_ratio(allocatable, listed, GPU_RESOURCE, ignore_daemonsets, ignore_mirror))
        return Utilization(_ratio(allocatable, listed, "cpu", ignore_daemonsets, ignore_mirror),
                           _ratio(allocatable, listed, "memory", ignore_daemonsets, ignore_mirror))
    except ValueError:
        return Utilization()
