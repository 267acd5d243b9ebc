"""PodTopologySpread: spread a pod's group evenly over topology domains (upstream v1.36 semantics).

Filter (``whenUnsatisfiable: DoNotSchedule``): a node passes a constraint when
``matching pods in its domain + (1 if the pod matches its own selector) - global
minimum <= maxSkew``. Domains and counts come from *eligible* nodes only: nodes
carrying every constraint's topology key and, per constraint, passing the pod's
nodeSelector / required node affinity (``nodeAffinityPolicy: Honor``, the default)
and its tolerations of NoSchedule/NoExecute taints (``nodeTaintsPolicy: Honor``).
The global minimum is the smallest count over those domains, or 0 when there are
fewer of them than ``minDomains``. A node without a constraint's key fails as
unresolvable.

Score (``ScheduleAnyway``): per constraint, the node's domain count times
``log(number of domains + 2)`` plus ``maxSkew - 1``; the hostname key uses the
node's own count and the number of feasible nodes. Lower is better: normalisation
maps the sum onto ``100 * (max + min - score) / max``. Nodes missing a key score 0.

A pod with no constraints of its own gets the cluster-level default constraints
(``defaultingType: System`` or ``List``) when it belongs to a Service,
ReplicationController, ReplicaSet or StatefulSet, selecting its siblings by their
selectors.

Counting never walks the pods: ``MatchCounts`` keeps, per (namespace, selector), the
number of matching pods on each node row, updated by the cache on every placement;
domain totals are one ``np.bincount`` over the node table.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ...framework.cycle_state import CycleState
from ...framework.events import ClusterEventWithHint, QueueingHint
from ...framework.handle import Handle, JSONObject
from ...framework.interfaces import NodeVerdicts, PreFilterResult
from ...framework.signing import SignFragment
from ...framework.status import SKIP, Code, Status
from ...framework.views import BoolArray, IntArray, NodeTableView, RowArray, SnapshotView
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .args import PodTopologySpreadArgs
from .common import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, Constraint, compile_constraints
from .counts import MatchCounts
from .domains import NodeLayouts
from .filtering import PRE_FILTER_KEY, FilterState, filter_node, filter_state, filter_verdicts, update_with_pod
from .hints import node_change_hint, pod_change_hint, spread_events
from .names import ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, NAME
from .scoring import PRE_SCORE_KEY, normalize_scores, score_node, score_rows, score_state
from .workloads import WORKLOAD_RESOURCES, WorkloadIndex

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "new",
]


class PodTopologySpread:
    """The plugin: its constraints (a pod's own or the defaults) and its extension points.

    PreFilter / Filter are in ``filtering.py``, PreScore / Score in ``scoring.py``, the
    queueing hints in ``hints.py``; the node layouts both cycles read, cached until a
    node changes, in ``domains.py``.
    """

    name = NAME

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle | None, match_label_keys: bool = True) -> None:
        self.args = args
        self.system_defaulted = args.system_defaulted
        self.default_constraints = args.effective_default_constraints()
        self.match_label_keys = match_label_keys
        self.workloads = WorkloadIndex()
        self.counts = MatchCounts(handle) if handle is not None else None
        if handle is not None:  # the selectors of system default constraints: watched as upstream's listers
            for api_version, kind, plural in WORKLOAD_RESOURCES:
                handle.object_store(api_version, kind, plural).add_handler(_WorkloadFeed(self.workloads, kind))
        self.layouts = NodeLayouts()

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: spreading depends on where other pods are, so a pod with
        constraints (its own, or the profile's defaults, which every pod gets) has no signature."""
        if pod.topology_spread_constraints:
            return [], Status(Code.UNSCHEDULABLE, "pods with topology constraints are not signable")
        if self.default_constraints:
            return [], Status(Code.UNSCHEDULABLE, "pods with default topology constraints are not signable")
        return [], None

    # -- workloads (default constraints) -----------------------------------------
    def set_workloads(self, objects: Iterable[JSONObject]) -> None:
        """Replace every Service, ReplicationController, ReplicaSet and StatefulSet known."""
        self.workloads.replace(objects)

    def workload_changed(self, obj: JSONObject) -> None:
        self.workloads.upsert(obj)

    def workload_deleted(self, obj: JSONObject) -> None:
        self.workloads.delete(obj)

    # -- constraints -------------------------------------------------------------
    def constraints(self, pod: PodInfo, action: str) -> tuple[Constraint, ...]:
        """``getConstraints`` / the soft half of ``initPreScoreState``."""
        if pod.topology_spread_constraints:
            return compile_constraints(pod.topology_spread_constraints, pod.labels, action, self.match_label_keys)
        if not self.default_constraints or not self.workloads:
            return ()
        compiled = compile_constraints(self.default_constraints, pod.labels, action, self.match_label_keys)
        if not compiled:
            return ()
        selector = self.workloads.default_selector(pod)
        if selector is None:
            return ()
        return tuple(
            Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.honor_node_affinity, c.honor_node_taints)
            for c in compiled
        )

    # -- PreFilter / Filter ---------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP
        state.write(PRE_FILTER_KEY, filter_state(pod, constraints, snapshot.table, self.layouts, self.counts))
        return None, None

    def _state_for_filter(self, state: CycleState, pod: PodInfo, table: NodeTableView) -> FilterState | None:
        found = state.get(PRE_FILTER_KEY)
        if found is None:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
            if not constraints:
                return None
            found = filter_state(pod, constraints, table, self.layouts, self.counts)
            state.write(PRE_FILTER_KEY, found)
        return found

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            raise RuntimeError(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        return filter_node(s, node)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray
    ) -> NodeVerdicts:
        table = snapshot.table
        s = self._state_for_filter(state, pod, table)
        if s is None or not s.domains:
            return NodeVerdicts.passing(table.size)
        return filter_verdicts(s, self.layouts)

    # -- PreFilterExtensions (preemption's what-if) ---------------------------------
    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        update_with_pod(state.get(PRE_FILTER_KEY), pod_to_schedule, pod_to_add, node, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        update_with_pod(state.get(PRE_FILTER_KEY), pod_to_schedule, pod_to_remove, node, -1)
        return None

    # -- PreScore / Score --------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        if snapshot.num_nodes == 0:
            return SKIP
        constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        rows = np.asarray(rows, dtype=np.int64)
        s = score_state(pod, constraints, snapshot.table, rows, self.layouts, self.counts, self.system_defaulted)
        state.write(PRE_SCORE_KEY, s)
        return None

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        return score_rows(state.read(PRE_SCORE_KEY), rows)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return score_node(state.read(PRE_SCORE_KEY), pod, node)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return normalize_scores(state.get(PRE_SCORE_KEY), scores)

    # -- queueing hints -------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return spread_events(self.hint_after_pod_change, self.hint_after_node_change)

    def _all_constraints(self, pod: PodInfo) -> tuple[Constraint, ...]:
        """``getConstraints``: upstream's hints look at the DoNotSchedule constraints only."""
        return self.constraints(pod, DO_NOT_SCHEDULE)

    def hint_after_pod_change(self, pod: PodInfo, old_obj: object | None, new_obj: object | None) -> QueueingHint:
        """``isSchedulableAfterPodChange``."""
        return pod_change_hint(pod, old_obj, new_obj, self._all_constraints)

    def hint_after_node_change(self, pod: PodInfo, old_obj: object | None, new_obj: object | None) -> QueueingHint:
        """``isSchedulableAfterNodeChange``."""
        return node_change_hint(pod, old_obj, new_obj, self._all_constraints)


class _WorkloadFeed:
    """Feeds one kind's object store into the workload index (objects of a watch carry no ``kind``)."""

    __slots__ = ("_index", "_kind")

    def __init__(self, index: WorkloadIndex, kind: str) -> None:
        self._index = index
        self._kind = kind

    def _typed(self, obj: JSONObject) -> JSONObject:
        return obj if obj.get("kind") == self._kind else {**obj, "kind": self._kind}

    def on_object_add(self, obj: JSONObject) -> None:
        self._index.upsert(self._typed(obj))

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self._index.upsert(self._typed(new))

    def on_object_delete(self, obj: JSONObject) -> None:
        self._index.delete(self._typed(obj))


def new(args: PodTopologySpreadArgs | None, handle: Handle | None) -> PodTopologySpread:
    return PodTopologySpread(args or PodTopologySpreadArgs(), handle)
