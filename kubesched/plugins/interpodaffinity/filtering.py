"""PreFilter / Filter of InterPodAffinity: the required terms, both ways.

PreFilter builds three maps from topology pair to a count (upstream's
``preFilterState``): *existing* (placed pods whose required anti-affinity selects the
incoming pod), *affinity* (placed pods matching all of the pod's required affinity
terms) and *anti* (placed pods matching each of its required anti-affinity terms).
Filter checks a node against them, per node or for every row at once; preemption's
what-if moves a pod in or out of them (``AddPod`` / ``RemovePod``). Apart from the
plugin because this is the required half of the plugin's job, sharing no state with
Score.
"""

from __future__ import annotations

from typing import Collection, Mapping

import numpy as np

from ...framework.cycle_state import CycleState, StateKey
from ...framework.interfaces import NodeVerdicts
from ...framework.status import Code, Status
from ...framework.views import NodeTableView
from ...objects.affinity import AffinityTerm
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .index import REQUIRED_ANTI_AFFINITY, AffinityIndex, NamespaceLabels, condition_matches, condition_of
from .names import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
)
from .topology_counts import TopologyCounts

__all__ = ["PRE_FILTER_STATE_KEY", "FilterState", "filter_node", "filter_state", "filter_verdicts", "read_filter_state",
           "update_with_pod"]

PRE_FILTER_STATE_KEY: StateKey[FilterState] = StateKey("PreFilter" + NAME)

_AFFINITY_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
_ANTI_AFFINITY_STATUS = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
_EXISTING_STATUS = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
_STATUSES = (_AFFINITY_STATUS, _ANTI_AFFINITY_STATUS, _EXISTING_STATUS)  # codes 1, 2, 3


class FilterState:
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

    def clone(self) -> "FilterState":
        out = object.__new__(FilterState)
        for name in FilterState.__slots__:
            setattr(out, name, getattr(self, name))
        out.affinity = self.affinity.clone()
        out.anti_affinity = self.anti_affinity.clone()
        out.existing = self.existing.clone()
        return out


def filter_state(index: AffinityIndex, table: NodeTableView, pod: PodInfo, ns_labels: Mapping[str, str],
                 unlisted: Collection[tuple[PodInfo, NodeInfo]] = ()) -> FilterState | None:
    """PreFilter's three maps; None (Skip) when the pod has no required term and no
    placed pod's anti-affinity selects it.

    ``unlisted``: placed pods with required anti-affinity that upstream's snapshot does not
    list (a pod-group cycle's members on nodes its ``HavePodsWithRequiredAntiAffinityList``
    left out, ``PodGroupCycleLists``). Upstream's ``getExistingAntiAffinityCounts`` walks
    that list only, so their terms count for nothing; the index counted them, and they are
    taken out again."""
    aff = pod.pod_affinity
    own: NamespaceLabels = lambda _ns: ns_labels  # noqa: E731 - the pod's own namespace
    existing = TopologyCounts(table)
    for entry in index.matching_terms(REQUIRED_ANTI_AFFINITY, pod.namespace, pod.labels):
        if entry.counts.total:
            key = entry.term.topology_key
            entry.counts.accumulate(key, table.label_column(key)[0], existing.array(key))
    if unlisted:
        for other, node in unlisted:
            _count_existing_terms(existing, other, node, pod.namespace, pod.labels, own, -1)
    required, required_anti = aff.required_affinity, aff.required_anti_affinity
    if not required and not required_anti and existing.is_empty():
        return None

    affinity = TopologyCounts(table)
    self_match = False
    if required:
        conds = tuple(dict.fromkeys(condition_of(t) for t in required))
        counts = index.matcher(conds).counts
        for term in required:
            key = term.topology_key
            counts.accumulate(key, table.label_column(key)[0], affinity.array(key))
        self_match = all(condition_matches(c, pod.namespace, pod.labels, own) for c in conds)
    anti = TopologyCounts(table)
    for term in required_anti:
        key = term.topology_key
        index.matcher((condition_of(term),)).counts.accumulate(key, table.label_column(key)[0], anti.array(key))
    return FilterState(pod, ns_labels, affinity, anti, existing, self_match)


def _count_existing_terms(existing: TopologyCounts, other: PodInfo, node: NodeInfo, namespace: str,
                          pod_labels: Mapping[str, str], own: NamespaceLabels, sign: int) -> None:
    """``other``'s required anti-affinity terms that select the incoming pod (its namespace,
    labels and namespace labels), counted ``sign`` times at their pairs on ``node``."""
    labels = node.node.labels
    for term in other.pod_affinity.required_anti_affinity:
        if term.topology_key in labels and condition_matches(condition_of(term), namespace, pod_labels, own):
            existing.add(term.topology_key, labels[term.topology_key], sign)


def update_with_pod(s: FilterState, other: PodInfo, node: NodeInfo, sign: int, ns_labels: NamespaceLabels) -> None:
    """``AddPod`` (sign 1) / ``RemovePod`` (sign -1): ``other`` placed on or taken off ``node``."""
    labels = node.node.labels
    own: NamespaceLabels = lambda _ns: s.ns_labels  # noqa: E731
    _count_existing_terms(s.existing, other, node, s.namespace, s.labels, own, sign)
    if s.affinity_terms and all(
        condition_matches(condition_of(t), other.namespace, other.labels, ns_labels) for t in s.affinity_terms
    ):
        for term in s.affinity_terms:
            if term.topology_key in labels:
                s.affinity.add(term.topology_key, labels[term.topology_key], sign)
    for term in s.anti_affinity_terms:
        if term.topology_key in labels and condition_matches(condition_of(term), other.namespace, other.labels, ns_labels):
            s.anti_affinity.add(term.topology_key, labels[term.topology_key], sign)


def read_filter_state(state: CycleState) -> FilterState:
    s = state.get(PRE_FILTER_STATE_KEY)
    if s is None:
        raise RuntimeError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    return s


def filter_node(s: FilterState, node: NodeInfo) -> Status | None:
    """Filter on one node: the first failing check's status, or None."""
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


def filter_verdicts(s: FilterState, table: NodeTableView) -> NodeVerdicts:
    """Filter over every table row at once, with ``filter_node``'s first-failing-check order."""
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
