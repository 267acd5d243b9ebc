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

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...framework.cycle_state import CycleState, StateKey
from ...framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ...framework.handle import Handle, JSONObject
from ...framework.interfaces import MAX_NODE_SCORE, NodeVerdicts, PreFilterResult
from ...framework.status import SKIP, Code, Status
from ...framework.views import BoolArray, IntArray, NodeTableView, RowArray, SnapshotView
from ...objects.node import Node
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ...objects.selectors import LabelSelector, selector_from_set
from ...objects.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated_taint
from .args import PodTopologySpreadArgs
from .common import (
    DO_NOT_SCHEDULE,
    HOSTNAME_LABEL,
    MAX_INT32,
    SCHEDULE_ANYWAY,
    Constraint,
    compile_constraints,
    counts_pods,
    go_log,
    go_round,
    node_has_all_keys,
)
from .counts import Counts, DomainMap, MatchCounts
from .workloads import WORKLOAD_RESOURCES, WorkloadIndex

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "new",
]

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
_SKEW_STATUS = Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
_LABEL_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
_PRE_FILTER_KEY: StateKey[_FilterState] = StateKey("PreFilter" + NAME)
_PRE_SCORE_KEY: StateKey[_ScoreState] = StateKey("PreScore" + NAME)
_FILTER_TAINT_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)

FloatArray = npt.NDArray[np.float64]
CodeArray = npt.NDArray[np.int32]
_ColumnCache = dict[tuple[str, LabelSelector], Counts]
_NO_COUNTS: Counts = np.zeros(0, dtype=np.int32)  # ``_ScoreTerm`` fields a term of the other kind does not use
_NO_TOTALS: IntArray = np.zeros(0, dtype=np.int64)
_NO_SCORES: FloatArray = np.zeros(0, dtype=np.float64)


# -- node layout, cached until a node changes -----------------------------------
@dataclass(slots=True)
class _KeyLayout:
    """How the node table's rows fall into the domains of one topology key.

    Domain ids are the node table's value ids (``label_column``). Two extra-slot views
    let one gather answer for every row: ``ext`` sends rows without the key (and freed
    rows) to slot ``size``; ``slot`` sends them to the domain of value "" instead, as
    upstream's scoring does for nodes that need not carry every key.
    """

    ids: DomainMap  # per row: value id, -1 if absent
    vocab: Mapping[str, int]
    size: int  # number of values
    ext: DomainMap  # per row: value id, or ``size``
    slot: DomainMap  # per row: value id, or the id of "" (``size`` when no node has it)
    present: BoolArray  # per value id: some live node has it


@dataclass(slots=True)
class _KeySet:
    """Rows carrying every key of a set of constraints (``nodeLabelsMatchSpreadConstraints``)."""

    mask: BoolArray  # alive and carrying every key
    complete: bool  # every live row carries every key


# -- per-cycle state ------------------------------------------------------------
@dataclass(slots=True)
class _Domains:
    """One constraint's view of the node table: domain of each row, totals per domain."""

    constraint: Constraint
    layout: _KeyLayout
    eligible: BoolArray | None  # per row: counted; None means every row in ``layout.present`` domains
    present: BoolArray  # per domain id: at least one eligible node has it
    totals: IntArray  # per domain id: matching pods on its eligible nodes
    self_match: int
    _minimum: int | None = None

    def min_match(self) -> int:
        """``minMatchNum``: the global minimum, 0 below ``minDomains`` domains."""
        if self._minimum is None:
            domains = int(np.count_nonzero(self.present))
            if domains < self.constraint.min_domains:
                self._minimum = 0
            elif domains == 0:
                self._minimum = MAX_INT32
            else:
                self._minimum = int(self.totals[self.present].min())
        return self._minimum

    def is_eligible(self, row: int, has_all: bool) -> bool:
        return has_all if self.eligible is None else bool(self.eligible[row])

    def changed(self) -> None:
        self._minimum = None

    def clone(self) -> _Domains:
        return _Domains(self.constraint, self.layout, self.eligible, self.present.copy(), self.totals.copy(), self.self_match)


@dataclass(slots=True)
class _FilterState:
    constraints: tuple[Constraint, ...]
    domains: list[_Domains]
    namespace: str

    def clone(self) -> _FilterState:
        return _FilterState(self.constraints, [d.clone() for d in self.domains], self.namespace)


@dataclass(slots=True)
class _ScoreTerm:
    constraint: Constraint
    layout: _KeyLayout
    weight: float  # log(domains + 2)
    hostname: bool
    own_counts: Counts  # hostname: matching pods per row (else ``_NO_COUNTS``)
    slot_totals: IntArray  # other keys, per ``layout.slot``: matching pods on eligible nodes (else ``_NO_TOTALS``)
    by_slot: FloatArray  # other keys, per slot: the node's term of the score (else ``_NO_SCORES``)
    mask_missing: bool  # rows without the key must be zeroed per row


@dataclass(slots=True)
class _ScoreState:
    terms: list[_ScoreTerm]
    require_all: bool
    has_all: _KeySet
    ignored_rows: BoolArray  # aligned with the rows PreScore saw

    def ignored(self, row: int) -> bool:
        return self.require_all and not bool(self.has_all.mask[row])

    def clone(self) -> _ScoreState:
        return self


class PodTopologySpread:
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
        self._layout_generation: tuple[int, int, int] | None = None
        self._layouts: dict[str, _KeyLayout] = {}
        self._key_sets: dict[tuple[str, ...], _KeySet] = {}
        self._codes_memo: dict[tuple[int, bytes], CodeArray] = {}

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
        if not self.default_constraints or not len(self.workloads):
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

    def _column(self, namespace: str, constraint: Constraint, table: NodeTableView, cache: _ColumnCache) -> Counts:
        """Matching pods per row; only for a selector that counts pods (``counts_pods``)."""
        if self.counts is None:
            raise RuntimeError(f"{NAME} needs the scheduler cache (a handle) to count pods")
        key = (namespace, constraint.selector)
        found = cache.get(key)
        if found is None:
            found = cache[key] = self.counts.column(namespace, constraint.selector, table.size)
        return found

    def _domain_totals(self, namespace: str, selector: LabelSelector, domain_of_row: DomainMap, slots: int) -> IntArray:
        if self.counts is None:
            raise RuntimeError(f"{NAME} needs the scheduler cache (a handle) to count pods")
        return self.counts.domain_totals(namespace, selector, domain_of_row, slots)

    # -- cached node layouts ----------------------------------------------------------
    def _layouts_for(self, table: NodeTableView) -> dict[str, _KeyLayout]:
        """The layouts by key; this and ``_key_sets`` and ``_codes_memo`` are emptied on a node change."""
        if self._layout_generation != (id(table), table.node_generation, table.size):
            self._layout_generation = (id(table), table.node_generation, table.size)
            self._layouts = {}
            self._key_sets = {}
            self._codes_memo = {}
        return self._layouts

    def _layout(self, table: NodeTableView, key: str) -> _KeyLayout:
        layouts = self._layouts_for(table)
        found = layouts.get(key)
        if found is None:
            ids, vocab = table.label_column(key)
            n = table.size
            ids = ids[:n]
            size = len(vocab)
            has = ids >= 0
            ext = np.where(has, ids, size)
            empty = vocab.get("", size)
            slot = ext if empty == size else np.where(has, ids, empty)
            present = np.zeros(size + 1, dtype=bool)
            present[ext[table.alive[:n] & has]] = True
            found = layouts[key] = _KeyLayout(ids, vocab, size, ext, slot, present[:size])
        return found

    def _key_set(self, table: NodeTableView, keys: tuple[str, ...]) -> _KeySet:
        self._layouts_for(table)
        key_sets = self._key_sets
        found = key_sets.get(keys)
        if found is None:
            n = table.size
            alive = table.alive[:n]
            mask = alive.copy()
            for key in keys:
                mask &= self._layout(table, key).ids >= 0
            found = key_sets[keys] = _KeySet(mask, bool((mask == alive).all()))
        return found

    def _inclusion_masks(
        self, pod: PodInfo, constraints: tuple[Constraint, ...], table: NodeTableView
    ) -> tuple[BoolArray | None, BoolArray | None]:
        """Rows passing the pod's required node affinity, and rows whose taints the pod
        tolerates; None when no row is excluded."""
        n = table.size
        affinity: BoolArray | None = None
        if any(c.honor_node_affinity for c in constraints) and (pod.node_selector or pod.required_node_affinity is not None):
            affinity = np.ones(n, dtype=bool)
            if pod.node_selector:
                for req in selector_from_set(pod.node_selector).requirements:
                    affinity &= table.requirement_mask(req)
            if pod.required_node_affinity is not None:
                affinity &= table.selector_mask(pod.required_node_affinity)
        tolerated: BoolArray | None = None
        if any(c.honor_node_taints for c in constraints):
            ids, taint_sets = table.taint_sets()
            ok = np.fromiter(
                (find_untolerated_taint(t, pod.tolerations, _FILTER_TAINT_EFFECTS) is None for t in taint_sets),
                dtype=bool,
                count=len(taint_sets),
            )
            if not ok.all():
                tolerated = ok[ids[:n]]
        return affinity, tolerated

    @staticmethod
    def _eligible(
        base: _KeySet, c: Constraint, affinity: BoolArray | None, tolerated: BoolArray | None
    ) -> BoolArray | None:
        """Counted rows for one constraint; None when that is every row carrying its key."""
        eligible = None if base.complete else base.mask
        if c.honor_node_affinity and affinity is not None:
            eligible = base.mask & affinity
        if c.honor_node_taints and tolerated is not None:
            eligible = (base.mask if eligible is None else eligible) & tolerated
        return eligible

    # -- PreFilter / Filter ---------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, self._filter_state(pod, constraints, snapshot.table))
        return None, None

    def _filter_state(self, pod: PodInfo, constraints: tuple[Constraint, ...], table: NodeTableView) -> _FilterState:
        base = self._key_set(table, tuple(c.topology_key for c in constraints))
        affinity, tolerated = self._inclusion_masks(pod, constraints, table)
        column_cache: _ColumnCache = {}
        domains: list[_Domains] = []
        for c in constraints:
            layout = self._layout(table, c.topology_key)
            eligible = self._eligible(base, c, affinity, tolerated)
            size = layout.size
            if not counts_pods(c.selector):
                totals = np.zeros(size, dtype=np.int64)
            elif eligible is None:
                totals = self._domain_totals(pod.namespace, c.selector, layout.ext, size + 1)[:size]
            else:
                counts = self._column(pod.namespace, c, table, column_cache)
                totals = np.bincount(layout.ext, weights=counts * eligible, minlength=size + 1)[:size].astype(np.int64)
            if eligible is None:
                present = layout.present
            else:
                present = np.bincount(layout.ext, weights=eligible, minlength=size + 1)[:size] > 0
            domains.append(_Domains(c, layout, eligible, present, totals, int(c.selector.matches(pod.labels))))
        return _FilterState(constraints, domains, pod.namespace)

    def _state_for_filter(self, state: CycleState, pod: PodInfo, table: NodeTableView) -> _FilterState | None:
        found = state.get(_PRE_FILTER_KEY)
        if found is None:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
            if not constraints:
                return None
            found = self._filter_state(pod, constraints, table)
            state.write(_PRE_FILTER_KEY, found)
        return found

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(_PRE_FILTER_KEY)
        if s is None:
            raise RuntimeError(f'reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        labels = node.node.labels
        for d in s.domains:
            value = labels.get(d.constraint.topology_key)
            if value is None:
                return _LABEL_STATUS
            domain = d.layout.vocab.get(value)
            match_num = int(d.totals[domain]) if domain is not None and domain < len(d.totals) else 0
            if match_num + d.self_match - d.min_match() > d.constraint.max_skew:
                return _SKEW_STATUS
        return None

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray
    ) -> NodeVerdicts:
        table = snapshot.table
        n = table.size
        s = self._state_for_filter(state, pod, table)
        if s is None or not s.domains:
            return NodeVerdicts.passing(n)
        codes = self._domain_codes(s.domains[0])
        for d in s.domains[1:]:
            codes = np.where(codes == 0, self._domain_codes(d), codes)
        return NodeVerdicts(codes, [_SKEW_STATUS, _LABEL_STATUS])

    def _domain_codes(self, d: _Domains) -> CodeArray:
        """Per row: 1 when its domain's skew is too large, 2 without the key (the extra slot)."""
        by_slot = np.empty(d.layout.size + 1, dtype=np.int32)
        by_slot[:-1] = d.totals + (d.self_match - d.min_match()) > d.constraint.max_skew
        by_slot[-1] = 2
        return self._codes(d.layout, by_slot)

    def _codes(self, layout: _KeyLayout, by_slot: CodeArray) -> CodeArray:
        """``by_slot[layout.ext]``, remembered: domain verdicts change far less often than pods."""
        memo = self._layouts_for_codes()
        key = (id(layout), by_slot.tobytes())
        found = memo.get(key)
        if found is None:
            if len(memo) >= 64:
                memo.clear()
            found = by_slot[layout.ext]
            found.flags.writeable = False
            memo[key] = found
        return found

    def _layouts_for_codes(self) -> dict[tuple[int, bytes], CodeArray]:
        return self._codes_memo

    # -- PreFilterExtensions (preemption's what-if) ---------------------------------
    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        self._update_with_pod(state, pod_to_schedule, pod_to_add, node, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        self._update_with_pod(state, pod_to_schedule, pod_to_remove, node, -1)
        return None

    def _update_with_pod(
        self, state: CycleState, preemptor: PodInfo, pod: PodInfo, node: NodeInfo | None, delta: int
    ) -> None:
        s = state.get(_PRE_FILTER_KEY)
        if s is None or pod.namespace != preemptor.namespace or node is None or pod.terminating:
            return
        labels = node.node.labels
        if not node_has_all_keys(labels, s.constraints):
            return
        for d in s.domains:
            if not d.constraint.selector.matches(pod.labels) or not d.is_eligible(node.row, True):
                continue
            domain = d.layout.vocab.get(labels[d.constraint.topology_key])
            if domain is not None:
                d.totals = d.totals.copy()  # may be shared with the incremental counts
                d.totals[domain] += delta
                d.changed()

    # -- PreScore / Score --------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        if snapshot.num_nodes == 0:
            return SKIP
        constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        state.write(_PRE_SCORE_KEY, self._score_state(pod, constraints, snapshot.table, np.asarray(rows, dtype=np.int64)))
        return None

    def _score_state(
        self, pod: PodInfo, constraints: tuple[Constraint, ...], table: NodeTableView, rows: RowArray
    ) -> _ScoreState:
        # Only non-default constraints need every key on a node; system defaults let
        # nodes without a zone still spread by hostname.
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        has_all = self._key_set(table, tuple(c.topology_key for c in constraints))
        if require_all and not has_all.complete:
            ignored_rows = ~has_all.mask[rows]
            scored_rows = rows[~ignored_rows]
            counted = has_all
        else:
            ignored_rows = np.zeros(len(rows), dtype=bool)
            scored_rows = rows
            counted = _KeySet(table.alive[: table.size], True)
        affinity, tolerated = self._inclusion_masks(pod, constraints, table)
        column_cache: _ColumnCache = {}
        terms: list[_ScoreTerm] = []
        for c in constraints:
            layout = self._layout(table, c.topology_key)
            if c.topology_key == HOSTNAME_LABEL:
                if counts_pods(c.selector):
                    own = self._column(pod.namespace, c, table, column_cache)
                else:
                    own = np.zeros(table.size, dtype=np.int32)
                mask_missing = not (require_all and has_all.complete)
                weight = go_log(float(len(scored_rows) + 2))
                terms.append(_ScoreTerm(c, layout, weight, True, own, _NO_TOTALS, _NO_SCORES, mask_missing))
                continue
            slots = layout.size + 1
            registered = np.zeros(slots, dtype=bool)
            registered[layout.slot[scored_rows]] = True
            weight = go_log(float(int(np.count_nonzero(registered)) + 2))
            if not counts_pods(c.selector):
                totals = np.zeros(slots, dtype=np.int64)
            else:
                eligible = self._eligible(counted, c, affinity, tolerated)
                if eligible is None:
                    totals = self._domain_totals(pod.namespace, c.selector, layout.slot, slots)
                else:
                    counts = self._column(pod.namespace, c, table, column_cache)
                    totals = np.bincount(layout.slot, weights=counts * eligible, minlength=slots).astype(np.int64)
            # np.float64(weight): numpy's stubs type an int array times a Python float as floating[Any]
            by_slot = totals * np.float64(weight) + float(c.max_skew - 1)
            mask_missing = False
            if not (require_all and has_all.complete):
                if layout.vocab.get("", layout.size) == layout.size:
                    by_slot[layout.size] = 0.0  # rows without the key score nothing for it
                else:
                    mask_missing = True
            terms.append(_ScoreTerm(c, layout, weight, False, _NO_COUNTS, totals, by_slot, mask_missing))
        return _ScoreState(terms, require_all, has_all, ignored_rows)

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        s = state.read(_PRE_SCORE_KEY)
        rows = np.asarray(rows, dtype=np.int64)
        terms = s.terms  # one per constraint, never empty
        total = _term_scores(terms[0], rows)
        for t in terms[1:]:
            total = total + _term_scores(t, rows)
        scores = go_round(total)
        if s.require_all and not s.has_all.complete:
            scores[~s.has_all.mask[rows]] = 0
        return scores

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        s = state.read(_PRE_SCORE_KEY)
        if s.ignored(node.row):
            return 0
        labels = node.node.labels
        total = 0.0
        for t in s.terms:
            value = labels.get(t.constraint.topology_key)
            if value is None:
                continue
            if t.hostname:
                cnt = _count_pods_match(node.pods.values(), t.constraint, pod.namespace)
            else:
                cnt = int(t.slot_totals[t.layout.vocab[value]])
            total += float(cnt) * t.weight + float(t.constraint.max_skew - 1)
        floor = math.floor(total)
        return int(floor + (total - floor >= 0.5))

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        s = state.get(_PRE_SCORE_KEY)
        scores = np.asarray(scores, dtype=np.int64)
        if s is None:
            return scores
        if len(scores) == 0:
            return scores
        ignored = s.ignored_rows if len(s.ignored_rows) == len(scores) and s.ignored_rows.any() else None
        valid = scores if ignored is None else scores[~ignored]
        if len(valid) == 0:
            return np.zeros(len(scores), dtype=np.int64)
        lowest = int(valid.min())
        highest = max(int(valid.max()), 0)
        if highest == 0:
            out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        else:
            out = MAX_NODE_SCORE * (highest + lowest - scores) // highest
        if ignored is not None:
            out[ignored] = 0
        return out

    # -- queueing hints -------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, pod_actions), self.hint_after_pod_change),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATIONS),
                self.hint_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
                ),
                self.hint_after_node_change,
            ),
        ]

    def _all_constraints(self, pod: PodInfo) -> tuple[Constraint, ...]:
        """``getConstraints``: upstream's hints look at the DoNotSchedule constraints only."""
        return self.constraints(pod, DO_NOT_SCHEDULE)

    def hint_after_pod_change(self, pod: PodInfo, old_obj: object | None, new_obj: object | None) -> QueueingHint:
        """``isSchedulableAfterPodChange``."""
        old, new = _pod_or_none(old_obj), _pod_or_none(new_obj)

        def involved(other: PodInfo) -> bool:
            return other.uid == pod.uid or (bool(other.node_name) and other.namespace == pod.namespace)

        if (new is not None and not involved(new)) or (old is not None and not involved(old)):
            return QueueingHint.SKIP
        constraints = self._all_constraints(pod)
        if new is not None and old is not None:
            if (
                new.uid == pod.uid
                and new.tolerations != old.tolerations
                and any(c.honor_node_taints for c in constraints)
            ):
                return QueueingHint.QUEUE
            if new.labels == old.labels:
                return QueueingHint.SKIP
            for c in constraints:
                if c.selector.matches(old.labels) != c.selector.matches(new.labels):
                    return QueueingHint.QUEUE
            return QueueingHint.SKIP
        changed = new if new is not None else old
        if changed is not None and any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def hint_after_node_change(self, pod: PodInfo, old_obj: object | None, new_obj: object | None) -> QueueingHint:
        """``isSchedulableAfterNodeChange``."""
        old, new = _node_or_none(old_obj), _node_or_none(new_obj)
        constraints = self._all_constraints(pod)
        old_ok = old is not None and node_has_all_keys(old.labels, constraints)
        new_ok = new is not None and node_has_all_keys(new.labels, constraints)
        if old is not None and new is not None:
            if old_ok != new_ok:
                return QueueingHint.QUEUE
            if new_ok and (
                any(old.labels.get(c.topology_key) != new.labels.get(c.topology_key) for c in constraints)
                or old.taints != new.taints
            ):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_ok else QueueingHint.SKIP
        if old is not None:
            return QueueingHint.QUEUE if old_ok else QueueingHint.SKIP
        return QueueingHint.SKIP


def _term_scores(t: _ScoreTerm, rows: RowArray) -> FloatArray:
    """One constraint's term of the score of each of ``rows``."""
    if t.hostname:
        term = t.own_counts[rows] * np.float64(t.weight) + float(t.constraint.max_skew - 1)  # float64, see _score_state
    else:
        term = t.by_slot[t.layout.slot[rows]]
    if t.mask_missing:
        term = np.where(t.layout.ids[rows] >= 0, term, 0.0)
    return term


def _pod_or_none(obj: object | None) -> PodInfo | None:
    """A pod event's object; anything else raises (a hint that raises counts as QUEUE)."""
    if obj is None or isinstance(obj, PodInfo):
        return obj
    raise TypeError(f"{NAME}: a pod event carries a {type(obj).__name__}, not a PodInfo")


def _node_or_none(obj: object | None) -> Node | None:
    """A node event's object; anything else raises (a hint that raises counts as QUEUE)."""
    if obj is None or isinstance(obj, Node):
        return obj
    raise TypeError(f"{NAME}: a node event carries a {type(obj).__name__}, not a Node")


def _count_pods_match(pods: Iterable[PodInfo], constraint: Constraint, namespace: str) -> int:
    """``countPodsMatchSelector`` over one node's pods (the per-node form's reference)."""
    if not counts_pods(constraint.selector):
        return 0
    return sum(
        1 for p in pods if not p.terminating and p.namespace == namespace and constraint.selector.matches(p.labels)
    )


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
