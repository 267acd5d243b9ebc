"""How many nodes of a pool the pending pods need: cluster-autoscaler's binpacking estimator
run with kubesched's own scheduling framework on the settled simulated cluster.

The simulation's scheduler holds the cluster as the run left it (pods placed, the
pending ones still pending). For one pool at a time, ``ClusterFork`` adds template
nodes and places pods straight into the scheduler's cache (so every plugin's
incremental counts see them, as they see a binding), and takes them all out again
afterwards: the cluster is loaded once, each added node costs one node add, each
packed pod one PreFilter and a filter pass over the new nodes, never a new simulation.

The estimate follows ``BinpackingNodeEstimator`` (``estimator/binpacking_estimator.go``):

* first, each equivalence group's first pod is checked against one empty template node
  (``SchedulablePodGroups``); groups that fail there are not packed, and the statuses
  say why;
* groups are packed in ``decreasing_order``; each pod is first tried on the nodes
  added so far (every filter, starting after the node the last pod went to), and the
  rest of its group, from the first pod that fits none, on new nodes: the last node
  added, else a new one; a pod that fits no empty new node stops its group (nodes
  would not help it), and a pod that cannot go to the last node while that node is
  still empty stops its group (another empty node would not help either);
* a node is added only while the pool's cap allows (``max_nodes``); the estimate is the
  number of added nodes that received a pod, and the pods placed.

Filters only (no scores), as cluster-autoscaler packs; Reserve is not run, so
dynamic resource claims are not allocated while packing (the check by a real
``simulate`` allocates them). Where cluster-autoscaler retries a pod whose hostname
spreading constraint the last node refused on any other node of the cluster, it is
retried here on the other new nodes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..framework.cycle_state import CycleState
from ..framework.outcomes import go_list
from ..framework.runtime import Framework
from ..framework.status import Code, Status
from ..framework.views import NodeTableView
from ..objects.node import Node
from ..objects.pod import PodInfo
from ..scheduler.scheduler import Scheduler
from .node_pools import HOSTNAME_LABEL, NodeTemplate
from .scale_up_groups import PodGroup, decreasing_order

__all__ = ["ClusterFork", "BinpackingEstimator", "Estimate", "GroupCheck"]

SPREAD_MISMATCH = "node(s) didn't match pod topology spread constraints"
_BATCH_FROM = 4  # rows tried one by one before the filters run in one batch over the rest


class ClusterFork:
    """Nodes and bound pods added to a scheduler's cache for a what-if, then taken out again
    (``revert``), leaving the cache, the plugins' counts and the queue as they were."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._nodes: list[str] = []
        self._added: list[PodInfo] = []  # bound pods that were not in the cluster (a template's)
        self._placed: list[tuple[PodInfo, PodInfo]] = []  # (pending pod, its bound copy)

    def add_node(self, node: Node, pods: Sequence[PodInfo]) -> int:
        """Add ``node`` with ``pods`` bound to it; its table row."""
        cache = self._scheduler.cache
        info = cache.add_node(node)
        self._nodes.append(node.name)
        handlers = self._scheduler.hub.pod_handlers
        for pod in pods:
            for handler in handlers:
                handler.on_pod_add(pod)
            cache.add_pod(pod)
            self._added.append(pod)
        return info.row

    def place(self, pod: PodInfo, node_name: str) -> None:
        """Bind the pending ``pod`` to ``node_name`` (what its binding would tell the plugins)."""
        bound = pod.copy_with(node_name=node_name, nominated_node_name="")
        for handler in self._scheduler.hub.pod_handlers:
            handler.on_pod_update(pod, bound)
        self._scheduler.cache.add_pod(bound)
        self._placed.append((pod, bound))

    def revert(self) -> None:
        cache = self._scheduler.cache
        handlers = self._scheduler.hub.pod_handlers
        for pending, bound in reversed(self._placed):
            cache.remove_pod(bound)
            for handler in handlers:
                handler.on_pod_update(bound, pending)
        for pod in reversed(self._added):
            cache.remove_pod(pod)
            for handler in handlers:
                handler.on_pod_delete(pod)
        for name in reversed(self._nodes):
            cache.remove_node(name)
        self._nodes, self._added, self._placed = [], [], []


@dataclass(slots=True)
class GroupCheck:
    """A group's first pod against one empty template node: None when it fits, else the
    status that rejected it (PreFilter's, the narrowing's, or the first failing filter's)."""

    status: Status | None
    pre_filter: bool = False  # the status is PreFilter's: no node of the cluster would do


@dataclass(slots=True)
class Estimate:
    """What packing found for one pool."""

    pool: str
    node_count: int  # added nodes that received a pod
    pods: list[PodInfo]  # the pods placed, in packing order
    placements: dict[str, str] = field(default_factory=dict)  # pod key -> added node
    limited: bool = False  # the pool's cap on new nodes stopped the packing


class _Checks:
    """PreFilter and Filter of the pod's profile, for a pod against given rows."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._narrowing: list[str] = []  # the plugins that narrowed the last PreFilter's node set

    def framework(self, pod: PodInfo) -> Framework:
        return self._scheduler.profiles[pod.scheduler_name]

    def pre_filter(self, pod: PodInfo) -> tuple[CycleState, frozenset[str] | None, GroupCheck | None]:
        """The cycle state, the node names PreFilter narrowed to (None: all), and a check
        that rejects every node when PreFilter did."""
        fwk = self.framework(pod)
        state = CycleState()
        result, status, narrowing = fwk.run_pre_filter(state, pod, self._scheduler.cache.snapshot())
        if status is not None and not status.is_success():
            if not status.is_rejected():
                status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, status.message, plugin=status.plugin)
            return state, frozenset(), GroupCheck(status, pre_filter=True)
        if result.node_names is None:
            return state, None, None
        self._narrowing = narrowing
        return state, result.node_names, None

    def on_row(self, state: CycleState, pod: PodInfo, row: int, allowed: frozenset[str] | None) -> Status | None:
        snapshot = self._scheduler.cache.snapshot()
        if allowed is not None and snapshot.table.names[row] not in allowed:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f"node(s) didn't satisfy plugin(s) {go_list(sorted(self._narrowing))}",
                          plugin=self._narrowing[0] if self._narrowing else "")
        return self.framework(pod).run_filters_on_row(state, pod, snapshot, row)

    def first_passing(self, state: CycleState, pod: PodInfo, rows: Sequence[int],
                      allowed: frozenset[str] | None) -> int | None:
        """The first of ``rows`` (in that order) where every filter passes.

        Rows without room for the pod's cpu, memory and one more pod are passed over
        first (NodeResourcesFit would reject them; its batch form answers for every row of
        the table, thousands, where a handful are asked): then the rest one by one, or
        in one batch over them when the first few fail.
        """
        snapshot = self._scheduler.cache.snapshot()
        table = snapshot.table
        rows = _with_room(table, pod, rows)
        for row in rows[:_BATCH_FROM]:
            if self.on_row(state, pod, row, allowed) is None:
                return row
        rows = rows[_BATCH_FROM:]
        if not rows:
            return None
        candidates = np.zeros(table.size, dtype=bool)
        candidates[list(rows)] = True
        if allowed is not None:
            names = table.names
            for row in rows:
                if names[row] not in allowed:
                    candidates[row] = False
        candidates.flags.writeable = False
        outcome = self.framework(pod).run_filters(state, pod, snapshot, candidates)
        passed = outcome.passed
        for row in rows:
            if passed[row]:
                return row
        return None


class BinpackingEstimator:
    """Estimates for one settled simulation's scheduler, pool after pool."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._checks = _Checks(scheduler)

    def check_groups(self, template: NodeTemplate, groups: Sequence[PodGroup]) -> list[GroupCheck]:
        """Each group's first pod against one empty node of ``template`` (in the cluster as
        it is), in the order of ``groups``."""
        fork = ClusterFork(self._scheduler)
        node, pods = template.instantiate("check")
        row = fork.add_node(node, pods)
        try:
            out = []
            for group in groups:
                pod = group.exemplar
                state, allowed, rejected = self._checks.pre_filter(pod)
                if rejected is not None:
                    out.append(rejected)
                    continue
                out.append(GroupCheck(self._checks.on_row(state, pod, row, allowed)))
            return out
        finally:
            fork.revert()

    def estimate(self, template: NodeTemplate, groups: Sequence[PodGroup], max_nodes: int) -> Estimate:
        """Pack ``groups`` (those that passed ``check_groups``) onto new nodes of ``template``,
        at most ``max_nodes`` of them."""
        packing = _Packing(self._scheduler, self._checks, template, max_nodes)
        try:
            nodes_left = True
            for group in decreasing_order(groups, template.node):
                rest = packing.on_added_nodes(group.pods)
                if nodes_left:
                    nodes_left = packing.on_new_nodes(rest)
            return packing.result()
        finally:
            packing.fork.revert()


class _Packing:
    """One estimate's state: the added nodes, where pods went, the rotation of the search."""

    def __init__(self, scheduler: Scheduler, checks: _Checks, template: NodeTemplate, max_nodes: int) -> None:
        self.fork = ClusterFork(scheduler)
        self._checks = checks
        self._template = template
        self._max_nodes = max_nodes
        self._rows: list[int] = []  # added nodes' rows, in the order added
        self._index_of: dict[int, int] = {}  # row -> index into _rows
        self._names: list[str] = []
        self._with_pods: set[int] = set()  # indexes into _rows
        self._last_match = -1  # index into _rows of the node the last pod went to (search starts after it)
        self._placed: list[PodInfo] = []
        self._placements: dict[str, str] = {}
        self._limited = False

    def result(self) -> Estimate:
        return Estimate(self._template.pool, len(self._with_pods), self._placed, self._placements, self._limited)

    def _place(self, pod: PodInfo, index: int) -> None:
        self.fork.place(pod, self._names[index])
        self._with_pods.add(index)
        self._placed.append(pod)
        self._placements[pod.key] = self._names[index]

    def _rotation(self, skip: int = -1) -> list[int]:
        """Indexes of the added nodes from the one after the last match, wrapping."""
        n = len(self._rows)
        start = self._last_match + 1
        return [(start + i) % n for i in range(n) if (start + i) % n != skip]

    def on_added_nodes(self, pods: list[PodInfo]) -> list[PodInfo]:
        """``tryToScheduleOnExistingNodes``: pods onto the nodes added so far until one fits
        none; the pods from that one on."""
        for i, pod in enumerate(pods):
            if not self._rows:
                return pods[i:]
            index = self._first_fit(pod, self._rotation())
            if index is None:
                return pods[i:]
            self._last_match = index
            self._place(pod, index)
        return []

    def _first_fit(self, pod: PodInfo, order: list[int]) -> int | None:
        state, allowed, rejected = self._checks.pre_filter(pod)
        if rejected is not None:
            return None
        row = self._checks.first_passing(state, pod, [self._rows[i] for i in order], allowed)
        return None if row is None else self._index_of[row]

    def on_new_nodes(self, pods: list[PodInfo]) -> bool:
        """``tryToScheduleOnNewNodes``: each pod onto the last added node, else a new one.
        False once the cap refused a node (no later group gets one either)."""
        for pod in pods:
            if self._rows:
                last = len(self._rows) - 1
                status = self._on(pod, last)
                if status is None:
                    self._place(pod, last)
                    continue
                if _hostname_spreading(pod) and SPREAD_MISMATCH in status.reasons and len(self._rows) > 1:
                    index = self._first_fit(pod, self._rotation(skip=last))
                    if index is not None:
                        self._last_match = index
                        self._place(pod, index)
                        continue
                if last not in self._with_pods:
                    return True  # it does not fit an empty node: another would not help
            if len(self._rows) >= self._max_nodes:
                self._limited = True
                return False
            index = self._add_node()
            if self._on(pod, index) is not None:
                break  # not even a new node takes it: the rest of its group are left
            self._place(pod, index)
        return True

    def _on(self, pod: PodInfo, index: int) -> Status | None:
        state, allowed, rejected = self._checks.pre_filter(pod)
        if rejected is not None:
            return rejected.status
        return self._checks.on_row(state, pod, self._rows[index], allowed)

    def _add_node(self) -> int:
        node, pods = self._template.instantiate(str(len(self._rows)))
        row = self.fork.add_node(node, pods)
        self._index_of[row] = len(self._rows)
        self._rows.append(row)
        self._names.append(node.name)
        return len(self._rows) - 1


def _hostname_spreading(pod: PodInfo) -> bool:
    return any(c.topology_key == HOSTNAME_LABEL for c in pod.topology_spread_constraints)


def _with_room(table: NodeTableView, pod: PodInfo, rows: Sequence[int]) -> list[int]:
    """``rows`` (in order) with room for one more pod and the pod's cpu and memory requests."""
    if not rows:
        return []
    at = np.asarray(rows, dtype=np.int64)
    requests = pod.requests.requests
    room = table.alloc_pods[at] > table.pod_count[at]
    if requests.milli_cpu:
        room &= table.req_cpu[at] + requests.milli_cpu <= table.alloc_cpu[at]
    if requests.memory:
        room &= table.req_mem[at] + requests.memory <= table.alloc_mem[at]
    kept: list[int] = at[room].tolist()
    return kept
