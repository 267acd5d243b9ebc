"""PreFilter / Filter of PodTopologySpread: the per-cycle state of the DoNotSchedule constraints.

PreFilter works out, per constraint, the domain of every row and the matching pods of
every domain over the eligible nodes (``preFilterState``); Filter compares a node's
domain with the global minimum (``maxSkew``), per node or for every row at once;
preemption's what-if moves a pod in or out of those totals (``AddPod`` / ``RemovePod``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...framework.cycle_state import StateKey
from ...framework.interfaces import NodeVerdicts
from ...framework.status import Code, Status
from ...framework.views import BoolArray, IntArray, NodeTableView
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .common import MAX_INT32, Constraint, counts_pods, node_has_all_keys
from .counts import MatchCounts
from .domains import (
    CodeArray,
    ColumnCache,
    KeyLayout,
    NodeLayouts,
    domain_totals,
    eligible_rows,
    inclusion_masks,
    matching_column,
)
from .names import ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, NAME

__all__ = ["PRE_FILTER_KEY", "Domains", "FilterState", "filter_node", "filter_state", "filter_verdicts", "update_with_pod"]

_SKEW_STATUS = Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
_LABEL_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)


@dataclass(slots=True)
class Domains:
    """One constraint's view of the node table: domain of each row, totals per domain."""

    constraint: Constraint
    layout: KeyLayout
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

    def clone(self) -> Domains:
        return Domains(self.constraint, self.layout, self.eligible, self.present.copy(), self.totals.copy(), self.self_match)


@dataclass(slots=True)
class FilterState:
    constraints: tuple[Constraint, ...]
    domains: list[Domains]
    namespace: str

    def clone(self) -> FilterState:
        return FilterState(self.constraints, [d.clone() for d in self.domains], self.namespace)


PRE_FILTER_KEY: StateKey[FilterState] = StateKey("PreFilter" + NAME)


def filter_state(
    pod: PodInfo,
    constraints: tuple[Constraint, ...],
    table: NodeTableView,
    layouts: NodeLayouts,
    counts: MatchCounts | None,
) -> FilterState:
    """``calPreFilterState``: per constraint, the totals of its domains over eligible nodes."""
    base = layouts.key_set(table, tuple(c.topology_key for c in constraints))
    affinity, tolerated = inclusion_masks(pod, constraints, table)
    column_cache: ColumnCache = {}
    domains: list[Domains] = []
    for c in constraints:
        layout = layouts.layout(table, c.topology_key)
        eligible = eligible_rows(base, c, affinity, tolerated)
        size = layout.size
        if not counts_pods(c.selector):
            totals = np.zeros(size, dtype=np.int64)
        elif eligible is None:
            totals = domain_totals(counts, pod.namespace, c.selector, layout.ext, size + 1)[:size]
        else:
            column = matching_column(counts, pod.namespace, c, table, column_cache)
            totals = np.bincount(layout.ext, weights=column * eligible, minlength=size + 1)[:size].astype(np.int64)
        if eligible is None:
            present = layout.present
        else:
            present = np.bincount(layout.ext, weights=eligible, minlength=size + 1)[:size] > 0
        domains.append(Domains(c, layout, eligible, present, totals, int(c.selector.matches(pod.labels))))
    return FilterState(constraints, domains, pod.namespace)


def filter_node(s: FilterState, node: NodeInfo) -> Status | None:
    """Filter for one node."""
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


def filter_verdicts(s: FilterState, layouts: NodeLayouts) -> NodeVerdicts:
    """Filter for every row at once (``s.domains`` not empty)."""
    codes = _domain_codes(s.domains[0], layouts)
    for d in s.domains[1:]:
        codes = np.where(codes == 0, _domain_codes(d, layouts), codes)
    return NodeVerdicts(codes, [_SKEW_STATUS, _LABEL_STATUS])


def _domain_codes(d: Domains, layouts: NodeLayouts) -> CodeArray:
    """Per row: 1 when its domain's skew is too large, 2 without the key (the extra slot)."""
    by_slot = np.empty(d.layout.size + 1, dtype=np.int32)
    by_slot[:-1] = d.totals + (d.self_match - d.min_match()) > d.constraint.max_skew
    by_slot[-1] = 2
    return layouts.codes(d.layout, by_slot)


def update_with_pod(s: FilterState | None, preemptor: PodInfo, pod: PodInfo, node: NodeInfo | None, delta: int) -> None:
    """``updateWithPod``: ``pod`` added to (``delta`` 1) or removed from (-1) ``node`` in the state."""
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
