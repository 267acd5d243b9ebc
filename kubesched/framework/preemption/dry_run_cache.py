"""Remembering per-node what-if answers across cycles when nothing they read has changed.

Preemption dry-runs up to hundreds of nodes per attempt, and the next preemptor,
often a pod of the same shape, dry-runs mostly the same nodes again; filtering with
nominated pods re-filters every node a pod is nominated to, for every pod. When every
filter the pod runs reads only the node itself (its object and its pods) and the
pod, a node's answer depends on nothing else: not on other nodes, not on cluster
objects. Then the answer is kept, keyed by the node's state (its ``NodeInfo`` and
generation), the pod's shape, the pods nominated there and the budgets, and reused
while all of those are unchanged. Any other filter (pod affinity, spreading,
volumes) turns the cache off for that pod.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ..cycle_state import CycleState
from ..runtime import Framework
from .protocols import NominatedPods
from .pdb import DisruptionBudget
__all__ = ["NodeResultCache", "NODE_LOCAL_FILTERS", "pod_shape"]

T = TypeVar("T")

# In-tree filters whose verdict reads only the pod, the node object and the node's pods.
NODE_LOCAL_FILTERS = frozenset(
    {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit"})


def pod_shape(pod: PodInfo) -> Hashable | None:
    """What node-local filters and victim selection read of a pod; None if it cannot be keyed."""
    r = pod.requests.requests
    shape = (
        pod.namespace, tuple(sorted(pod.labels.items())), pod.priority, pod.node_name, pod.scheduler_name,
        (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number, tuple(sorted(r.scalar.items()))),
        pod.host_ports, pod.tolerations, tuple(sorted(pod.node_selector.items())), pod.required_node_affinity,
        pod.pod_affinity, pod.topology_spread_constraints,
    )
    try:
        hash(shape)
    except TypeError:
        return None
    return shape


class NodeResultCache(Generic[T]):
    """Answers by node, for one pod shape at a time (a new shape starts afresh)."""

    __slots__ = ("_key", "_entries", "_own", "hits", "misses")

    def __init__(self) -> None:
        self._key: Hashable | None = None
        self._entries: dict[str, tuple[NodeInfo, int, int, T]] = {}
        self._own: str | None = None  # the node the pod at hand is nominated to
        self.hits = 0
        self.misses = 0

    def start(self, fwk: Framework, state: CycleState, pod: PodInfo, pdbs: Sequence[DisruptionBudget] = (),
              nominator: NominatedPods | None = None) -> bool:
        """Prepare for one pod's questions; False when its answers cannot be cached."""
        self._own = nominator.node_of(pod.uid) if nominator is not None else None
        skip = state.skip_filter_plugins
        if any(name not in NODE_LOCAL_FILTERS and name not in skip for name in fwk.plugin_names("filter")):
            return False
        shape = pod_shape(pod)
        if shape is None:
            return False
        try:
            key = (id(fwk), shape, skip, tuple(pdbs))
            hash(key)
        except TypeError:
            return False
        if key != self._key:
            self._key = key
            self._entries.clear()
        return True

    def _nominated(self, node: NodeInfo, nominator: NominatedPods | None) -> int:
        """The version of the node's nominated pods; -1 (never cached) when the pod at hand
        is one of them, since it does not count against itself."""
        if nominator is None:
            return 0
        if self._own == node.name:
            return -1
        return nominator.node_version(node.name)

    def get(self, node: NodeInfo, pod: PodInfo, nominator: NominatedPods | None) -> T | None:
        name = node.node.name
        entry = self._entries.get(name)
        if entry is None or entry[0] is not node or entry[1] != node.generation or entry[2] < 0 \
                or self._own == name:
            self.misses += 1
            return None
        if entry[2] != (nominator.node_version(name) if nominator is not None else 0):
            self.misses += 1
            return None
        self.hits += 1
        return entry[3]

    def put(self, node: NodeInfo, pod: PodInfo, nominator: NominatedPods | None, answer: T) -> None:
        self._entries[node.name] = (node, node.generation, self._nominated(node, nominator), answer)
