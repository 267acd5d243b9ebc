"""Each pod's last scheduling decision, kept compact for the HTML report and ``--explain-pods``.

``--explain`` writes every attempt in full and forgets it; a report needs every pending
pod's decision at the end, and a failed attempt at 5,000 nodes names 5,000 nodes. So a
``Decision`` keeps what a reader looks at, built from the attempt at once (its arrays
are the cycle's):

* a failed attempt's filter verdicts grouped by (plugin, code, reasons), each with its
  node count and a few example nodes (one vectorised count over the rejected rows);
  PreFilter's verdict; what preemption decided (nominated node, victims);
* a successful attempt's per-plugin weighted scores of the best ``TOP`` nodes and of the
  chosen one;
* ``extra``: fields other helpers add to the explain record that the report shows when
  present (Permit and binding outcomes, walk hints, DRA devices, the pod-group cycle).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..framework.status import Status
from ..scheduler.attempt import PodGroupCycleRecord
from ..scheduler.explain import pod_group_record
from ..scheduler.fit_error import FitError
from ..scheduler.scheduler import Attempt

__all__ = ["Decision", "FilterGroup", "ScoreRow", "DecisionLog", "decision_of", "fan_out", "TOP", "EXAMPLE_NODES"]

TOP = 5  # best-scored nodes kept per decision
EXAMPLE_NODES = 5  # nodes named per filter group
# Attributes under which an Attempt may carry the devices DRA allocated (JSON-ready):
# shown as "Allocated devices" when set.
DEVICE_ATTRIBUTES = ("devices", "allocated_devices", "allocations")


@dataclass(slots=True)
class FilterGroup:
    plugin: str
    code: str
    reasons: list[str]
    count: int
    nodes: list[str]  # a few of them


@dataclass(slots=True)
class ScoreRow:
    node: str
    total: int
    by_plugin: list[int]  # in ``Decision.score_plugins`` order


@dataclass(slots=True)
class Decision:
    pod: str
    namespace: str
    name: str
    attempt: int
    profile: str
    node: str | None = None
    message: str = ""
    evaluated: int = 0
    feasible: int = 0
    filters: list[FilterGroup] = field(default_factory=list)
    pre_filter: FilterGroup | None = None
    score_plugins: list[str] = field(default_factory=list)
    scores: list[ScoreRow] = field(default_factory=list)  # the best TOP, then the chosen node if not among them
    preemption: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _group(status: Status, count: int, nodes: list[str]) -> FilterGroup:
    return FilterGroup(status.plugin or "", status.code.label, list(status.reasons), count, nodes)


def _filters(error: FitError, names: list[str]) -> tuple[list[FilterGroup], FilterGroup | None]:
    d = error.diagnosis
    # Plugins make one Status per node or per kind of failure: equal verdicts are one group.
    by_verdict: dict[tuple[str, str, tuple[str, ...]], FilterGroup] = {}

    def add(status: Status, count: int, nodes: list[str]) -> None:
        key = (status.plugin or "", status.code.label, tuple(status.reasons))
        group = by_verdict.get(key)
        if group is None:
            by_verdict[key] = _group(status, count, nodes[:EXAMPLE_NODES])
        else:
            group.count += count
            group.nodes.extend(nodes[:EXAMPLE_NODES - len(group.nodes)])

    failed = d.failed_rows()
    if d.outcome is not None and len(failed):
        index = d.outcome.status_index[failed]
        kinds, counts = np.unique(index, return_counts=True)
        for k, count in zip(kinds.tolist(), counts.tolist()):
            rows = failed[index == k][:EXAMPLE_NODES].tolist()
            add(d.outcome.statuses[k], count, [names[r] for r in rows])
    for node, status in d.extender_statuses.items():
        add(status, 1, [node])
    groups = list(by_verdict.values())
    absent = error.num_all_nodes - len(failed) - len(d.extender_statuses)
    pre_filter: FilterGroup | None = None
    if d.absent_status is not None and absent > 0:
        group = _group(d.absent_status, absent, [])
        if d.pre_filter_msg:
            pre_filter = group
        else:
            groups.append(group)
    groups.sort(key=lambda g: (-g.count, g.plugin, g.reasons))
    return groups, pre_filter


def _scores(attempt: Attempt, decision: Decision) -> None:
    """The best ``TOP`` scored nodes and the chosen one: a partial sort of the totals and a
    few fancy-indexed reads, no Python loop over the scored nodes (a cycle at 5,000 nodes
    scores hundreds of them, and this runs for every attempt)."""
    result = attempt.result
    if result is None or result.scores is None or result.scores.total is None:
        return
    scores, names = result.scores, attempt.node_names
    total = scores.total
    assert total is not None
    rows = scores.rows
    n = len(rows)
    if not n:
        return
    picked = np.argpartition(total, n - TOP)[n - TOP:] if n > TOP else np.arange(n)
    host = result.suggested_host
    # The chosen node is among the best-scored rows (the tie-break picks from them).
    chosen_row = next((r for r in result.best_rows.tolist() if names[r] == host), None) if host else None
    if chosen_row is not None:
        found = np.flatnonzero(rows == chosen_row)
        if len(found) and not (picked == found[0]).any():
            picked = np.append(picked, found[0])
    picked_rows = rows[picked].tolist()
    totals = total[picked].tolist()
    plugins = list(scores.by_plugin)
    columns = [scores.by_plugin[p][picked].tolist() for p in plugins]
    by_score = sorted(range(len(picked_rows)), key=lambda k: (-totals[k], names[picked_rows[k]]))
    shown = by_score[:TOP]  # the best first; the chosen node last when it is not among them
    if chosen_row is not None and all(picked_rows[k] != chosen_row for k in shown):
        shown.append(next(k for k in by_score if picked_rows[k] == chosen_row))
    decision.score_plugins = plugins
    decision.scores = [ScoreRow(names[picked_rows[k]], int(totals[k]), [int(c[k]) for c in columns]) for k in shown]


def _extras(attempt: Attempt, decision: Decision) -> None:
    """What other parts record on an attempt, kept small: the walk's figures (not its
    signature, which holds the pod), the Permit and binding record (the same dict the
    binding cycle fills in place, so it is final when the run is), and allocated devices
    when the attempt carries them (JSON-ready values only)."""
    walk = getattr(attempt, "walk", None)
    if walk is not None:
        record = {"start": getattr(walk, "start", None), "evaluated": getattr(walk, "advanced", None),
                  "feasibleFound": getattr(walk, "feasible_found", None), "hint": getattr(walk, "hint", None)}
        for name, key in (("hint_node", "hintNode"), ("nominated_node", "nominatedNode")):
            if getattr(walk, name, None):
                record[key] = getattr(walk, name)
        decision.extra["walk"] = record
    binding = getattr(attempt, "binding", None)
    if isinstance(binding, dict):
        decision.extra["binding"] = binding
    if attempt.pod_group is not None:  # the pod-group cycle it was tried in (--explain's "podGroup")
        decision.extra["podGroup"] = _cycle_record(attempt.pod_group)
    for name in DEVICE_ATTRIBUTES:
        value = getattr(attempt, name, None)
        if isinstance(value, (list, dict)) and value:
            decision.extra["devices"] = value


_last_cycle: list[tuple[PodGroupCycleRecord, dict[str, Any]]] = []


def _cycle_record(cycle: PodGroupCycleRecord) -> dict[str, Any]:
    """The cycle's ``podGroup`` record, made once for all its pods: they are reported one
    after another, and a cycle over fifty racks names fifty placements."""
    if _last_cycle and _last_cycle[0][0] is cycle:
        return _last_cycle[0][1]
    record = pod_group_record(cycle)
    _last_cycle[:] = [(cycle, record)]
    return record


def decision_of(attempt: Attempt) -> Decision:
    pod = attempt.pod
    decision = Decision(pod.key, pod.namespace, pod.name, attempt.attempt, attempt.profile)
    result, error = attempt.result, attempt.error
    if result is not None:
        decision.node = result.suggested_host
        decision.evaluated, decision.feasible = result.evaluated_nodes, result.feasible_nodes
        _scores(attempt, decision)
    else:
        decision.message = str(error) if error is not None else ""
        if isinstance(error, FitError):
            decision.filters, decision.pre_filter = _filters(error, attempt.node_names)
            decision.evaluated = error.num_all_nodes
    outcome = attempt.post_filter
    if outcome is not None:
        decision.preemption = {"code": outcome.code.label, "message": outcome.message,
                               "nominatedNode": outcome.nominated_node,
                               "victims": sorted(v.key for v in outcome.victims)}
    _extras(attempt, decision)
    return decision


class DecisionLog:
    """An ``on_attempt`` callback keeping each wanted pod's last decision."""

    def __init__(self, wants: Callable[[Attempt], bool] | None = None) -> None:
        self.decisions: dict[str, Decision] = {}
        self._wants = wants

    def __call__(self, attempt: Attempt) -> None:
        if self._wants is not None and not self._wants(attempt):
            return
        decision = decision_of(attempt)
        before = self.decisions.get(attempt.pod.key)
        if decision.preemption is None and before is not None:  # a pod placed after preempting keeps that story
            decision.preemption = before.preemption
        self.decisions[attempt.pod.key] = decision


def fan_out(observers: Sequence[Callable[[Attempt], None]]) -> Callable[[Attempt], None]:
    """One ``on_attempt`` callback calling each of ``observers`` in turn."""

    def call(attempt: Attempt) -> None:
        for observer in observers:
            observer(attempt)

    return call
