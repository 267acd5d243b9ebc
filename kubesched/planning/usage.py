"""How full the nodes are after a run, and how much of the free room is stranded.

Utilisation of a resource on a node is requested / allocatable (nodes without that
resource are left out of its distribution). Fragmentation is measured against one pod
shape: the requests most common among the snapshot's pending pods (the pods this
cluster is asked to run). A node *fits the shape* when its free room (allocatable less
requested) holds one more pod of that shape, resources only: free cpu, memory and
extended resources at least the shape's, and a free pod slot. Free capacity on nodes
that do not fit it is stranded for that workload; the fragmentation of a resource is
the share of its free capacity that is stranded:

    fragmentation(r) = sum of free r on nodes that do not fit the shape / sum of free r on all nodes

0 means every free unit sits where the shape can still use it; 1 means none does.
Taints, affinity and ports are not considered: it measures how the room is cut, not
whether a particular pod may use it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from ..objects.resources import CPU, MEMORY, PODS, Resource, is_extended_resource

__all__ = ["ResourceUsage", "Fragmentation", "resource_usage", "fragmentation", "common_shape", "usage_resources"]

Shape = tuple[tuple[str, int], ...]  # (resource, amount) pairs, amounts > 0


@dataclass(slots=True)
class ResourceUsage:
    """One resource over the cluster: totals, and the distribution of per-node utilisation."""

    resource: str
    requested: int
    allocatable: int
    share: float  # requested / allocatable over the cluster
    mean: float  # per-node utilisation: mean, quantiles, extremes
    p10: float
    median: float
    p90: float
    min: float
    max: float
    node_shares: list[float] = field(default_factory=list)  # per node that has the resource, in node order


@dataclass(slots=True)
class Fragmentation:
    shape: dict[str, int]  # the most common pending pod's requests; empty when nothing is pending
    shape_pods: int  # pending pods of that shape
    nodes_fitting: int  # nodes with room for one more of the shape
    room: int  # how many more of the shape fit, node by node (resources only)
    stranded: dict[str, float]  # resource -> share of its free capacity on nodes the shape does not fit


def _amount(resource: Resource, name: str, pods: int) -> int:
    return pods if name == PODS else resource.get(name)


def usage_resources(infos: Sequence[NodeInfo]) -> list[str]:
    """cpu, memory, pods, then every extended resource some node offers."""
    extended = sorted({name for info in infos for name, amount in info.allocatable.scalar.items()
                       if amount > 0 and is_extended_resource(name)})
    return [CPU, MEMORY, PODS, *extended]


def resource_usage(infos: Sequence[NodeInfo], resources: Iterable[str]) -> list[ResourceUsage]:
    out = []
    for name in resources:
        requested = np.array([_amount(i.requested, name, len(i.pods)) for i in infos], dtype=np.float64)
        allocatable = np.array([_amount(i.allocatable, name, i.allocatable.allowed_pod_number) for i in infos],
                               dtype=np.float64)
        has = allocatable > 0
        shares = requested[has] / allocatable[has]
        total = float(allocatable.sum())
        if len(shares):
            p10, median, p90 = (float(q) for q in np.percentile(shares, [10, 50, 90]))
            stats = (float(shares.mean()), p10, median, p90, float(shares.min()), float(shares.max()))
        else:
            stats = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        out.append(ResourceUsage(name, int(requested.sum()), int(total),
                                 float(requested.sum()) / total if total else 0.0, *stats,
                                 node_shares=[round(float(s), 6) for s in shares]))
    return out


def _shape(pod: PodInfo) -> Shape:
    r = pod.requests.requests
    pairs = [(CPU, r.milli_cpu), (MEMORY, r.memory), *sorted(r.scalar.items())]
    return tuple((name, amount) for name, amount in pairs if amount > 0)


def common_shape(pods: Iterable[PodInfo]) -> tuple[Shape, int]:
    """The requests most pods share (the first seen among equals), and how many share them."""
    counts = Counter(_shape(p) for p in pods)
    if not counts:
        return (), 0
    shape, count = counts.most_common(1)[0]
    return shape, count


def fragmentation(infos: Sequence[NodeInfo], shape: Shape, shape_pods: int) -> Fragmentation:
    """See the module docstring. ``cpu`` is in millicores, the rest in units."""
    names = sorted({CPU, MEMORY} | {name for name, _ in shape})
    free = {name: np.array([max(0, i.allocatable.get(name) - i.requested.get(name)) for i in infos], dtype=np.int64)
            for name in names}
    free_slots = np.array([max(0, i.allocatable.allowed_pod_number - len(i.pods)) for i in infos], dtype=np.int64)
    if not shape_pods:
        return Fragmentation({}, 0, 0, 0, {})
    fits_times = free_slots.copy()
    for name, amount in shape:
        fits_times = np.minimum(fits_times, free[name] // amount)
    fits = fits_times > 0
    stranded = {}
    for name in names:
        total = int(free[name].sum())
        stranded[name] = float(free[name][~fits].sum()) / total if total else 0.0
    return Fragmentation(dict(shape), shape_pods, int(fits.sum()), int(fits_times.sum()), stranded)
