"""``schedulePod``: find the nodes that fit, score them, pick one.

Follows upstream's ``schedule_one.go``: PreFilter may narrow the node set;
filtering walks the nodes from a rotating start index and stops once it has
``numFeasibleNodesToFind`` feasible nodes (the adaptive percentageOfNodesToScore);
a single feasible node is chosen without scoring; otherwise the highest total
wins, ties broken uniformly at random (or by name, for reproducible runs).
HTTP extenders, when configured, filter the feasible nodes after the Filter
plugins and add their scores to the plugins' (``extender.py``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..cache.cache import Snapshot
from ..framework.cycle_state import CycleState
from ..framework.preemption import NominatedPods, apply_nominated_pods
from ..framework.runtime import FilterOutcome, Framework, FrameworkError, ScoreOutcome, go_list
from ..framework.views import SnapshotView
from ..framework.status import Code, Status
from ..objects.pod import PodInfo
from .extender import HTTPExtender, find_nodes_that_pass_extenders, prioritize_with_extenders
from .fit_error import Diagnosis, FitError, NoNodesAvailableError

__all__ = ["ScheduleResult", "Algorithm", "num_feasible_nodes_to_find"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0  # adaptive


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (upstream's adaptive rule when 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class ScheduleResult:
    """Where the pod goes, and what the cycle saw on the way (for explain output)."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    feasible_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    scores: ScoreOutcome | None = None
    best_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    diagnosis: Diagnosis | None = None


class Algorithm:
    """The scheduling algorithm's state across cycles: the rotating start index and the tie-break."""

    def __init__(self, percentage_of_nodes_to_score: int = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
                 tie_break: str = "random", seed: int | None = None, extenders: Sequence[HTTPExtender] = ()) -> None:
        if tie_break not in ("random", "name"):
            raise ValueError(f"tie_break must be 'random' or 'name', got {tie_break!r}")
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.tie_break = tie_break
        self.rng = random.Random(seed)
        self.next_start_node_index = 0
        self.extenders = list(extenders)  # HTTP extenders: filter after the plugins, score, bind
        # Pods nominated to nodes hold room there against pods of equal or lower priority.
        self.nominator: NominatedPods | None = None

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> ScheduleResult:
        num_nodes = snapshot.num_nodes
        if num_nodes == 0:
            raise NoNodesAvailableError()
        feasible, diagnosis = self.find_nodes_that_fit(fwk, state, pod, snapshot)
        evaluated = len(diagnosis.evaluated)
        if self.extenders and len(feasible):
            feasible = find_nodes_that_pass_extenders(self.extenders, pod, snapshot, feasible, diagnosis)
            evaluated = len(feasible) + diagnosis.num_statuses()  # upstream's count
        if len(feasible) == 0:
            diagnosis.record_plugins()
            raise FitError(pod.key, num_nodes, diagnosis)
        names = snapshot.table.names
        if len(feasible) == 1:
            return ScheduleResult(names[int(feasible[0])], evaluated, 1, feasible, None, feasible, diagnosis)
        status = fwk.run_pre_score(state, pod, snapshot, feasible)
        if status is not None:
            raise FrameworkError(status.message)
        scores = fwk.run_score(state, pod, snapshot, feasible)
        if self.extenders:
            prioritize_with_extenders(self.extenders, pod, snapshot, feasible, scores)
        total = scores.total
        assert total is not None
        best = feasible[total == total.max()]
        host_row = self._select(best, names)
        return ScheduleResult(names[host_row], evaluated, len(feasible), feasible, scores, best, diagnosis)

    def _select(self, best: np.ndarray, names: list[str]) -> int:
        if len(best) == 1:
            return int(best[0])
        if self.tie_break == "name":
            return int(min(best.tolist(), key=names.__getitem__))
        return int(best[self.rng.randrange(len(best))])

    def find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[np.ndarray, Diagnosis]:
        diagnosis = Diagnosis()
        pre_result, status, narrowing = fwk.run_pre_filter(state, pod, snapshot)
        diagnosis.unschedulable_plugins.update(narrowing)  # upstream: UnschedulablePlugins = the narrowing plugins
        if status is not None and not status.is_success():
            if not status.is_rejected():
                raise FrameworkError(status.message)
            diagnosis.absent_status = status
            diagnosis.pre_filter_msg = status.message
            return np.zeros(0, dtype=np.int64), diagnosis
        table = snapshot.table
        order = table.order
        allowed = None
        if pre_result.node_names is not None:
            allowed = np.zeros(table.size, dtype=bool)
            allowed[table.rows_of(pre_result.node_names)] = True
            order = order[allowed[order]]
            diagnosis.candidates = order
            diagnosis.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) {go_list(sorted(narrowing))}",
                plugin=narrowing[0] if narrowing else "",
            )
        n = len(order)
        if n == 0:
            return np.zeros(0, dtype=np.int64), diagnosis
        to_find = num_feasible_nodes_to_find(self._percentage(fwk), n)
        if not self._ranks_nodes(fwk):
            to_find = 1  # nothing would tell feasible nodes apart: the first one found will do
        start = self.next_start_node_index % n
        # Nodes are visited in ``order`` rotated to begin at ``start``. Positions in
        # ``order`` stand for nodes below, so the rotation itself is never materialised.
        if not fwk.has_filter_plugins():
            processed = min(to_find, n)
            feasible = diagnosis.evaluated = _rotated_prefix(order, start, processed)
        else:
            # Every live row is a candidate unless PreFilter narrowed the set.
            candidates = allowed if allowed is not None else table.alive[: table.size].copy()
            if fwk.has_node_filters(state):
                # Per-node plugins cost a Python call per node: ask them only about the
                # windows the search visits, after the batch filters ran over all rows.
                outcome = fwk.run_batch_filters(state, pod, snapshot, candidates)
                apply_nominated_pods(fwk, state, pod, snapshot, outcome, candidates, self.nominator)
                diagnosis.outcome = outcome
                chosen, processed = _first_passing_windowed(fwk, state, pod, snapshot, outcome, candidates,
                                                            order, start, to_find)
                feasible = order[chosen]
                diagnosis.evaluated = _rotated_prefix(order, start, processed)
                self.next_start_node_index = (self.next_start_node_index + processed) % snapshot.num_nodes
                return feasible, diagnosis
            outcome = fwk.run_filters(state, pod, snapshot, candidates)
            apply_nominated_pods(fwk, state, pod, snapshot, outcome, candidates, self.nominator)
            diagnosis.outcome = outcome
            passed = outcome.passed  # only rows of ``order`` can pass
            identity = allowed is None and table.order_is_identity  # row == position
            if np.count_nonzero(passed) > to_find:
                chosen, processed = _first_passing(passed, order, identity, start, to_find)
            else:
                positions = np.flatnonzero(passed if identity else passed[order])
                split = int(positions.searchsorted(start))  # visited from start, then after wrapping
                chosen = np.concatenate((positions[split:], positions[:split])) if split else positions
                processed = n
            feasible = order[chosen]
            diagnosis.evaluated = _rotated_prefix(order, start, processed)
        # upstream advances the index modulo all nodes, even when PreFilter narrowed the walk
        self.next_start_node_index = (self.next_start_node_index + processed) % snapshot.num_nodes
        return feasible, diagnosis

    def _ranks_nodes(self, fwk: Framework) -> bool:
        """upstream's ``hasScoring || hasExtenderFilters``: whether more feasible nodes than
        one could change the outcome."""
        return fwk.has_score_plugins() or any(e.is_prioritizer() or e.is_filter() for e in self.extenders)

    def _percentage(self, fwk: Framework) -> int:
        if fwk.percentage_of_nodes_to_score is not None:
            return fwk.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score


def _first_passing(passed: np.ndarray, order: np.ndarray, identity: bool, start: int, want: int) -> tuple[np.ndarray, int]:
    """The positions in ``order`` of the first ``want`` passing nodes visited from ``start``
    (wrapping around), and how many positions that visit covers; at least ``want`` pass.

    Scans growing windows, so finding 500 of 5,000 nodes reads about 600 of them.
    """
    n = len(order)
    parts: list[np.ndarray] = []
    pos, width, limit = start, want + (want >> 2) + 32, n
    while True:
        end = min(pos + width, limit)
        window = passed[pos:end] if identity else passed[order[pos:end]]
        hits = np.flatnonzero(window)
        if len(hits) >= want:
            hits = hits[:want] + pos
            parts.append(hits)
            last = int(hits[-1])
            processed = last - start + 1 if last >= start else last + n - start + 1
            return (parts[0] if len(parts) == 1 else np.concatenate(parts)), processed
        if len(hits):
            parts.append(hits + pos)
            want -= len(hits)
        pos, width = end, width * 2
        if pos >= limit:  # wrap around: the rest lies before ``start``
            if limit == start:
                raise AssertionError("fewer passing nodes than counted")  # pragma: no cover
            pos, limit = 0, start


def _first_passing_windowed(fwk: Framework, state: CycleState, pod: PodInfo, snapshot: SnapshotView,
                            outcome: FilterOutcome, candidates: np.ndarray, order: np.ndarray, start: int,
                            want: int) -> tuple[np.ndarray, int]:
    """Like ``_first_passing``, running the per-node filters window by window on the way:
    the positions in ``order`` of the first ``want`` nodes that pass every filter, visited
    from ``start`` (wrapping), and how many positions the visit covers (all ``n`` when
    fewer than ``want`` pass)."""
    n = len(order)
    parts: list[np.ndarray] = []
    found = visited = 0
    # Each window is sized from the pass rate seen so far, so per-node plugins are asked
    # about little more than the nodes upstream's walk would visit.
    pos, width, limit, wrapped = start, want + (want >> 4) + 8, n, False
    chosen: np.ndarray | None = None
    processed = n
    while True:
        end = min(pos + width, limit)
        rows = order[pos:end]
        fwk.run_node_filters(state, pod, snapshot, outcome, rows[candidates[rows]])
        hits = np.flatnonzero(outcome.passed[rows])
        if chosen is not None:
            if len(hits):  # more nodes pass than needed: the walk stopped at the last one needed
                return chosen, processed
        elif found + len(hits) >= want:
            needed = hits[: want - found] + pos
            parts.append(needed)
            last = int(needed[-1])
            chosen = np.concatenate(parts)
            processed = last - start + 1 if last >= start else last + n - start + 1
            if found + len(hits) > want:
                return chosen, processed
            # Exactly as many pass so far as needed. The batch form counts the whole walk
            # when no other node passes (all are then evaluated): look for one more.
            width = 16
        else:
            if len(hits):
                parts.append(hits + pos)
                found += len(hits)
            visited += end - pos
            width = int((want - found) * visited / found * 1.1) + 16 if found else width * 2
        pos = end
        if pos >= limit:
            if wrapped or start == 0:
                if chosen is not None:  # no node passes after the last one needed
                    return chosen, n
                return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)), n
            pos, limit, wrapped = 0, start, True


def _rotated_prefix(order: np.ndarray, start: int, count: int) -> np.ndarray:
    """The first ``count`` entries of ``order`` rotated to begin at ``start`` (a view when it does not wrap)."""
    end = start + count
    if end <= len(order):
        return order[start:end]
    return np.concatenate((order[start:], order[: end - len(order)]))
