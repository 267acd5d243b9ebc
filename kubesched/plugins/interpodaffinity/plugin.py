"""InterPodAffinity: required pod (anti-)affinity filters, preferred terms score.

Upstream's ``pkg/scheduler/framework/plugins/interpodaffinity`` (v1.36), decision for
decision:

* **PreFilter** builds three maps from topology pair ``(key, value)`` to a count
  (upstream's ``topologyToMatchedTermCount``):

  - *existing*: placed pods whose required anti-affinity terms select the incoming pod,
    one per term, at the term's key and the value of that key on the pod's node;
  - *affinity*: placed pods that match **all** required affinity terms of the incoming
    pod, once per term at that term's key;
  - *anti*: placed pods matching each required anti-affinity term of the incoming pod.

  It returns Skip when the pod has no required terms and *existing* is empty.
* **Filter** rejects a node (first failing check wins)

  - ``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable) when it
    lacks a term's topology key, or some term's pair has no matching pod, unless no
    pod matches anywhere (*affinity* is empty) and the pod matches its own terms (the
    first pod of a group with self-affinity);
  - ``node(s) didn't match pod anti-affinity rules`` (Unschedulable) when a term's
    pair on the node has a matching pod;
  - ``node(s) didn't satisfy existing pods anti-affinity rules`` (Unschedulable) when
    any of the node's label pairs is in *existing*.
* **PreScore** sums, per topology pair: the incoming pod's preferred affinity
  (+weight) and anti-affinity (-weight) terms for each placed pod they select; the
  placed pods' required affinity terms that select the incoming pod
  (+``hardPodAffinityWeight``) and their preferred affinity (+weight) and
  anti-affinity (-weight) terms. Skip when no term met a pod on a node with its key
  (or with ``ignorePreferredTermsOfExistingPods`` when the pod has no preferred term).
* **Score** is the sum over the node's pairs; **NormalizeScore** maps the scored
  nodes' min..max onto 0..100.

Nothing here walks the placed pods: the counts come from ``AffinityIndex`` (kept
current by the cache) and are projected onto topology values with the node table's
label columns, one ``bincount`` per term. A map is held as one array per topology
key over that key's value ids, with a zero pad at the end so that ``array[ids]`` reads
0 for nodes without the label (their id is -1).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ...framework.cycle_state import CycleState, StateKey
from ...framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ...framework.handle import Handle
from ...framework.interfaces import MAX_NODE_SCORE, NodeVerdicts, PreFilterResult
from ...framework.status import SKIP, Code, Status
from ...framework.views import BoolArray, IntArray, NodeTableView, RowArray, SnapshotView
from ...objects.affinity import AffinityTerm
from ...objects.node import Node
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .args import InterPodAffinityArgs
from .index import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    AffinityIndex,
    NamespaceLabels,
    RowCounts,
    condition_matches,
    condition_of,
    index_for,
)

__all__ = [
    "NAME",
    "InterPodAffinity",
    "TopologyCounts",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "new",
]

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY: StateKey[_FilterState] = StateKey("PreFilter" + NAME)
PRE_SCORE_STATE_KEY: StateKey[_ScoreState] = StateKey("PreScore" + NAME)

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

_AFFINITY_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
_ANTI_AFFINITY_STATUS = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
_EXISTING_STATUS = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
_STATUSES = (_AFFINITY_STATUS, _ANTI_AFFINITY_STATUS, _EXISTING_STATUS)  # codes 1, 2, 3


class TopologyCounts:
    """Upstream's ``map[topologyPair]int64`` over the node table: one int64 array per
    topology key, indexed by the key's value ids (``label_column``), plus a zero pad."""

    __slots__ = ("table", "arrays", "vocabs")

    def __init__(self, table: NodeTableView) -> None:
        self.table = table
        self.arrays: dict[str, IntArray] = {}
        self.vocabs: dict[str, Mapping[str, int]] = {}

    def array(self, key: str) -> IntArray:
        arr = self.arrays.get(key)
        if arr is None:
            vocab = self.table.label_column(key)[1]
            arr = np.zeros(len(vocab) + 1, dtype=np.int64)
            self.arrays[key] = arr
            self.vocabs[key] = vocab
        return arr

    def is_empty(self) -> bool:
        """``len(map) == 0``: no pair holds a count."""
        for arr in self.arrays.values():
            if arr.any():
                return False
        return True

    def get(self, key: str, value: str) -> int:
        arr = self.arrays.get(key)
        if arr is None:
            return 0
        vid = self.vocabs[key].get(value)
        return 0 if vid is None else int(arr[vid])

    def add(self, key: str, value: str, delta: int) -> None:
        arr = self.array(key)
        vid = self.vocabs[key].get(value)
        if vid is not None:
            arr[vid] += delta

    def per_row(self, key: str) -> IntArray:
        """Every table row's count at its own value of ``key`` (0 without the label)."""
        return self.array(key)[self.table.label_column(key)[0]]

    def clone(self) -> "TopologyCounts":
        out = TopologyCounts(self.table)
        out.arrays = {k: a.copy() for k, a in self.arrays.items()}
        out.vocabs = dict(self.vocabs)
        return out


class _FilterState:
    """What PreFilter computed for Filter (``preFilterState``)."""

    __slots__ = ("namespace", "labels", "ns_labels", "affinity_terms", "anti_affinity_terms", "affinity",
                 "anti_affinity", "existing", "self_match")

    def __init__(self, pod: PodInfo, ns_labels: Mapping[str, str], affinity: TopologyCounts, anti: TopologyCounts,
                 existing: TopologyCounts, self_match: bool) -> None:
        self.namespace: str = pod.namespace
        self.labels: Mapping[str, str] = pod.labels
        self.ns_labels = ns_labels
        self.affinity_terms: tuple[AffinityTerm, ...] = pod.pod_affinity.required_affinity
        self.anti_affinity_terms: tuple[AffinityTerm, ...] = pod.pod_affinity.required_anti_affinity
        self.affinity = affinity
        self.anti_affinity = anti
        self.existing = existing
        self.self_match = self_match

    def clone(self) -> "_FilterState":
        out = object.__new__(_FilterState)
        for name in _FilterState.__slots__:
            setattr(out, name, getattr(self, name))
        out.affinity = self.affinity.clone()
        out.anti_affinity = self.anti_affinity.clone()
        out.existing = self.existing.clone()
        return out


class _ScoreState:
    __slots__ = ("topology_score",)

    def __init__(self, topology_score: TopologyCounts) -> None:
        self.topology_score = topology_score

    def clone(self) -> "_ScoreState":
        return self


class InterPodAffinity:
    name = NAME

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self._snapshot = handle.snapshot()
        self.index: AffinityIndex = index_for(handle)

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return self._snapshot.namespace_labels(namespace)

    def _table(self, snapshot: SnapshotView) -> NodeTableView:
        table = snapshot.table
        if table is not self._snapshot.table:
            raise RuntimeError(f"{NAME}: the snapshot is not of the cache this plugin indexes")
        return table

    # -- PreFilter ----------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView
    ) -> tuple[PreFilterResult | None, Status | None]:
        table = self._table(snapshot)
        index = self.index
        aff = pod.pod_affinity
        ns_labels = snapshot.namespace_labels(pod.namespace)

        existing = TopologyCounts(table)
        for entry in index.matching_terms(REQUIRED_ANTI_AFFINITY, pod.namespace, pod.labels):
            if entry.counts.total:
                key = entry.term.topology_key
                entry.counts.accumulate(key, table.label_column(key)[0], existing.array(key))
        required, required_anti = aff.required_affinity, aff.required_anti_affinity
        if not required and not required_anti and existing.is_empty():
            return None, SKIP

        affinity = TopologyCounts(table)
        self_match = False
        if required:
            conds = tuple(dict.fromkeys(condition_of(t) for t in required))
            counts = index.matcher(conds).counts
            for term in required:
                key = term.topology_key
                counts.accumulate(key, table.label_column(key)[0], affinity.array(key))
            own: NamespaceLabels = lambda _ns: ns_labels  # noqa: E731 - the pod's own namespace
            self_match = all(condition_matches(c, pod.namespace, pod.labels, own) for c in conds)
        anti = TopologyCounts(table)
        for term in required_anti:
            key = term.topology_key
            index.matcher((condition_of(term),)).counts.accumulate(key, table.label_column(key)[0], anti.array(key))
        state.write(PRE_FILTER_STATE_KEY, _FilterState(pod, ns_labels, affinity, anti, existing, self_match))
        return None, None

    # PreFilterExtensions: what preemption's what-if evaluation adds and removes.
    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod_to_add, node, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod_to_remove, node, -1)

    def _update_with_pod(self, state: CycleState, other: PodInfo, node: NodeInfo, sign: int) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        labels = node.node.labels
        own: NamespaceLabels = lambda _ns: s.ns_labels  # noqa: E731
        for term in other.pod_affinity.required_anti_affinity:
            if term.topology_key in labels and condition_matches(condition_of(term), s.namespace, s.labels, own):
                s.existing.add(term.topology_key, labels[term.topology_key], sign)
        ns_labels = self._namespace_labels
        if s.affinity_terms and all(
            condition_matches(condition_of(t), other.namespace, other.labels, ns_labels) for t in s.affinity_terms
        ):
            for term in s.affinity_terms:
                if term.topology_key in labels:
                    s.affinity.add(term.topology_key, labels[term.topology_key], sign)
        for term in s.anti_affinity_terms:
            if term.topology_key in labels and condition_matches(condition_of(term), other.namespace, other.labels, ns_labels):
                s.anti_affinity.add(term.topology_key, labels[term.topology_key], sign)
        return None

    # -- Filter -------------------------------------------------------------
    @staticmethod
    def _state(state: CycleState) -> _FilterState:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            raise RuntimeError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        return s

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        try:
            s = self._state(state)
        except RuntimeError as err:
            return Status.as_error(err)
        labels = node.node.labels
        if s.affinity_terms:
            pods_exist = True
            for term in s.affinity_terms:
                value = labels.get(term.topology_key)
                if value is None:
                    return _AFFINITY_STATUS
                if s.affinity.get(term.topology_key, value) <= 0:
                    pods_exist = False
            if not pods_exist and not (s.affinity.is_empty() and s.self_match):
                return _AFFINITY_STATUS
        if s.anti_affinity_terms and not s.anti_affinity.is_empty():
            for term in s.anti_affinity_terms:
                value = labels.get(term.topology_key)
                if value is not None and s.anti_affinity.get(term.topology_key, value) > 0:
                    return _ANTI_AFFINITY_STATUS
        for key in s.existing.arrays:
            value = labels.get(key)
            if value is not None and s.existing.get(key, value) > 0:
                return _EXISTING_STATUS
        return None

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray
    ) -> NodeVerdicts:
        s = self._state(state)
        table = snapshot.table
        size = table.size
        codes = np.zeros(size, dtype=np.int32)
        if s.affinity_terms:
            passes = np.ones(size, dtype=bool)
            pods_exist = np.ones(size, dtype=bool)
            for term in s.affinity_terms:
                key = term.topology_key
                passes &= table.label_column(key)[0] >= 0
                pods_exist &= s.affinity.per_row(key) > 0
            if not (s.self_match and s.affinity.is_empty()):
                passes &= pods_exist
            codes[~passes] = 1
        if s.anti_affinity_terms and not s.anti_affinity.is_empty():
            blocked = np.zeros(size, dtype=bool)
            for key in {t.topology_key for t in s.anti_affinity_terms}:
                blocked |= s.anti_affinity.per_row(key) > 0
            codes[blocked & (codes == 0)] = 2
        if not s.existing.is_empty():
            blocked = np.zeros(size, dtype=bool)
            for key in s.existing.arrays:
                blocked |= s.existing.per_row(key) > 0
            codes[blocked & (codes == 0)] = 3
        return NodeVerdicts(codes, list(_STATUSES))

    # -- PreScore / Score ---------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        table = self._table(snapshot)
        aff = pod.pod_affinity
        has_constraints = bool(aff.preferred_affinity or aff.preferred_anti_affinity)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        index = self.index
        topology_score = TopologyCounts(table)
        fired = False

        def add(counts: RowCounts, key: str, weight: int) -> None:
            nonlocal fired
            if counts.accumulate(key, table.label_column(key)[0], topology_score.array(key), weight):
                fired = True

        for weighted in aff.preferred_affinity:
            term = weighted.term
            add(index.matcher((condition_of(term),)).counts, term.topology_key, weighted.weight)
        for weighted in aff.preferred_anti_affinity:
            term = weighted.term
            add(index.matcher((condition_of(term),)).counts, term.topology_key, -weighted.weight)
        hard = self.args.hard_pod_affinity_weight
        if hard > 0:
            for entry in index.matching_terms(REQUIRED_AFFINITY, pod.namespace, pod.labels):
                add(entry.counts, entry.term.topology_key, hard)
        for entry in index.matching_terms(PREFERRED_AFFINITY, pod.namespace, pod.labels):
            add(entry.counts, entry.term.topology_key, entry.weight)
        for entry in index.matching_terms(PREFERRED_ANTI_AFFINITY, pod.namespace, pod.labels):
            add(entry.counts, entry.term.topology_key, -entry.weight)
        if not fired:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _ScoreState(topology_score))
        return None

    @staticmethod
    def _score_state(state: CycleState) -> _ScoreState:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            raise RuntimeError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        return s

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        topology_score = self._score_state(state).topology_score
        labels = node.node.labels
        total = 0
        for key in topology_score.arrays:
            value = labels.get(key)
            if value is not None:
                total += topology_score.get(key, value)
        return total

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        topology_score = self._score_state(state).topology_score
        table = snapshot.table
        total = np.zeros(len(rows), dtype=np.int64)
        for key, arr in topology_score.arrays.items():
            total += arr[table.label_column(key)[0][rows]]
        return total

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        """Min-max onto 0..100 in float64, truncated, exactly as upstream's arithmetic."""
        scores = np.asarray(scores, dtype=np.int64)
        if state.get(PRE_SCORE_STATE_KEY) is None or len(scores) == 0:
            return scores
        lowest = int(scores.min())
        spread = int(scores.max()) - lowest
        if spread <= 0:
            return np.zeros(len(scores), dtype=np.int64)
        return (float(MAX_NODE_SCORE) * ((scores - lowest).astype(np.float64) / float(spread))).astype(np.int64)

    # -- queueing hints -----------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, pod_actions), self._hint_assigned_pod_change),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), self._hint_node_change
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL), None),
        ]

    def _matches(self, term: AffinityTerm, other: PodInfo) -> bool:
        return condition_matches(condition_of(term), other.namespace, other.labels, self._namespace_labels)

    def _hint_assigned_pod_change(self, pod: PodInfo, old_obj: object | None, new_obj: object | None) -> QueueingHint:
        """Upstream's ``isSchedulableAfterPodChange``, a little wider where upstream can
        strand a pod: anti-affinity counts as matched when *any* term matches (the
        filter fails on any), and a deleted pod whose own required anti-affinity selects
        ``pod``, or that matched all of ``pod``'s affinity terms (the self-affinity
        rule may then apply), also queues."""
        old, new = _pod_or_none(old_obj), _pod_or_none(new_obj)
        if (new is not None and not new.node_name) or (old is not None and not old.node_name):
            return QueueingHint.SKIP
        aff = pod.pod_affinity
        required, anti = aff.required_affinity, aff.required_anti_affinity

        def all_affinity(other: PodInfo) -> bool:
            return bool(required) and all(self._matches(t, other) for t in required)

        def any_anti(other: PodInfo) -> bool:
            return any(self._matches(t, other) for t in anti)

        if old is not None and new is not None:
            if all_affinity(new) and not all_affinity(old):
                return QueueingHint.QUEUE
            if any_anti(old) and not any_anti(new):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if all_affinity(new) else QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if any_anti(old) or all_affinity(old):
            return QueueingHint.QUEUE
        if any(self._matches(t, pod) for t in old.pod_affinity.required_anti_affinity):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_node_change(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """Upstream's ``isSchedulableAfterNodeChange``: a node carrying a topology key of
        the pod's required terms. A pod with no required term was rejected by placed pods'
        anti-affinity, which any new or relabelled node may escape: queue it."""
        if new is None:
            return QueueingHint.SKIP
        if not isinstance(new, Node):
            raise TypeError(f"{NAME}: a node event carries a {type(new).__name__}, not a Node")
        aff = pod.pod_affinity
        terms = aff.required_affinity + aff.required_anti_affinity
        if not terms:
            return QueueingHint.QUEUE
        labels = new.labels
        for term in terms:
            if term.topology_key in labels:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP


def _pod_or_none(obj: object | None) -> PodInfo | None:
    """A pod event's object; anything else raises (a hint that raises counts as QUEUE)."""
    if obj is None or isinstance(obj, PodInfo):
        return obj
    raise TypeError(f"{NAME}: a pod event carries a {type(obj).__name__}, not a PodInfo")


def new(args: InterPodAffinityArgs | None, handle: Handle | None) -> InterPodAffinity:
    if handle is None:
        raise ValueError(f"{NAME} needs a handle: it indexes the pods placed on nodes")
    return InterPodAffinity(args if args is not None else InterPodAffinityArgs(), handle)
