"""``schedulePod``: find the nodes that fit, score them, pick one.

Follows upstream's ``schedule_one.go``: PreFilter may narrow the node set;
filtering walks the nodes from a rotating start index and stops once it has
``numFeasibleNodesToFind`` feasible nodes (the adaptive percentageOfNodesToScore);
a single feasible node is chosen without scoring; otherwise the highest total
wins, ties broken as upstream's ``container/heap`` over the walk order does
(``node_heap.py``; "heap", the default), uniformly at random, or by the smallest name
(for readable tests). With extenders the heap's order among equal totals is random,
as upstream's (its random key is set only then).
HTTP extenders, when configured, filter the feasible nodes after the Filter
plugins and add their scores to the plugins' (``extender.py``).

OpportunisticBatching (``batching.py``): after PreFilter, a pod signed like the one
placed in the previous cycle may get a hint, the next node of that cycle's heap; a
hint (or a nominated node) that passes the filters is taken without a walk.

The walk: nodes in the node tree order (``table.order``), from the rotating start
index, until ``numFeasibleNodesToFind`` pass; the walk goes on to the next passing
node and stops there without keeping it, and the start index advances by the nodes
visited before it (all of them when no further node passes). That is upstream's
sequential walk (``parallelism: 1``); with more workers upstream's walk visits nodes
in goroutine order, and kubesched keeps the sequential rule.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..cache.cache import Snapshot
from ..framework.cycle_state import CycleState
from ..framework.preemption import NominatedPods, apply_nominated_pods
from ..framework.runtime import FilterOutcome, Framework, FrameworkError, ScoreOutcome, go_list
from ..framework.views import SnapshotView
from ..framework.status import Code, Status
from ..objects.pod import PodInfo
from .batching import HINT_NONE, HINT_NOT_USED, HINT_USED, LazySignature, OpportunisticBatch
from .extender import HTTPExtender, find_nodes_that_pass_extenders, prioritize_with_extenders
from .fit_error import Diagnosis, FitError, NoNodesAvailableError
from .metrics import SchedulerMetrics
from .node_heap import SortedScoredNodes, heap_top
from .node_walk import first_passing, first_passing_windowed, few_rows, rotated_prefix, visited_rows, walk_few

__all__ = ["ScheduleResult", "Algorithm", "Walk", "TIE_BREAKS", "num_feasible_nodes_to_find"]

TIE_BREAKS = ("heap", "random", "name")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0  # adaptive
# Up to this many nodes, filters run node by node (``walk_few``) rather than over the table.
FEW_NODES = 4


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


@dataclass(slots=True)
class Walk:
    """How one cycle looked for nodes, for explain output: where the walk started, how far
    it moved the start index, how many feasible nodes it kept, and the batching hint."""

    start: int = 0
    advanced: int = 0  # how far the start index moved (0: it did not)
    feasible_found: int = 0
    hint: str = HINT_NONE  # none | used | not-used
    hint_node: str = ""
    nominated_node: str = ""  # tried first, as upstream's evaluateNominatedNode
    signature: LazySignature | None = None  # the pod's, when its profile batches


class Algorithm:
    """The scheduling algorithm's state across cycles: the rotating start index, the
    tie-break, and each profile's batch state."""

    def __init__(self, percentage_of_nodes_to_score: int = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
                 tie_break: str = "heap", seed: int | None = None, extenders: Sequence[HTTPExtender] = (),
                 batching: bool = True) -> None:
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.tie_break = tie_break
        self.rng = random.Random(seed)
        self.next_start_node_index = 0
        self.extenders = list(extenders)  # HTTP extenders: filter after the plugins, score, bind
        # Pods nominated to nodes hold room there against pods of equal or lower priority.
        self.nominator: NominatedPods | None = None
        # OpportunisticBatching (the feature gate, on by default); off with extenders, as upstream.
        self.batching = batching and not self.extenders
        self.batches: dict[str, OpportunisticBatch] = {}
        self.now: Callable[[], float] = time.monotonic  # the scheduler's clock (set by Scheduler)
        self.metrics: SchedulerMetrics | None = None
        self.last_walk = Walk()  # the last cycle's, for explain records

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                     cycle: int = 0) -> ScheduleResult:
        """One cycle's algorithm; ``cycle`` is the queue's scheduling cycle (batching reads it)."""
        num_nodes = snapshot.num_nodes_in_placement  # every node, outside a pod-group cycle's placement
        walk = self.last_walk = Walk(start=self.next_start_node_index % max(num_nodes, 1))
        if num_nodes == 0:
            raise NoNodesAvailableError()
        batch = self._batch(fwk)
        signature = walk.signature = LazySignature(fwk.sign_pod, pod) if batch is not None else None
        feasible, diagnosis = self._find_nodes_that_fit(fwk, state, pod, snapshot, walk, batch, signature, cycle)
        evaluated = len(diagnosis.evaluated)
        if self.extenders and len(feasible):
            feasible = find_nodes_that_pass_extenders(self.extenders, pod, snapshot, feasible, diagnosis)
            evaluated = len(feasible) + diagnosis.num_statuses()  # upstream's count
        walk.feasible_found = len(feasible)
        if len(feasible) == 0:
            diagnosis.record_plugins()
            raise FitError(pod.key, num_nodes, diagnosis)
        names = snapshot.table.names
        if len(feasible) == 1:
            host = names[int(feasible[0])]
            if batch is not None and signature is not None:
                batch.store_schedule_results(signature, walk.hint_node, host, None, cycle)
                if walk.hint_node:
                    walk.hint = HINT_USED if host == walk.hint_node else HINT_NOT_USED
            return ScheduleResult(host, evaluated, 1, feasible, None, feasible, diagnosis)
        status = fwk.run_pre_score(state, pod, snapshot, feasible)
        if status is not None:
            raise FrameworkError(status.message)
        scores = fwk.run_score(state, pod, snapshot, feasible)
        if self.extenders:
            prioritize_with_extenders(self.extenders, pod, snapshot, feasible, scores)
        total = scores.total
        assert total is not None
        is_top = total == np.maximum.reduce(total)  # (total.max() without its Python-level wrapper)
        best = feasible[is_top]
        host_row = self._select(feasible, total, is_top, best, names)
        host = names[host_row]
        if batch is not None and signature is not None:
            others = SortedScoredNodes(total, feasible, snapshot.table.frozen_names())
            batch.store_schedule_results(signature, walk.hint_node, host, others, cycle)
            if walk.hint_node:
                walk.hint = HINT_NOT_USED
        return ScheduleResult(host, evaluated, len(feasible), feasible, scores, best, diagnosis)

    def _select(self, feasible: np.ndarray, total: np.ndarray, is_top: np.ndarray, best: np.ndarray,
                names: list[str]) -> int:
        if len(best) == 1:
            return int(best[0])
        if self.tie_break == "name":
            return int(min(best.tolist(), key=names.__getitem__))
        if self.tie_break == "heap" and not self.extenders:
            return int(feasible[heap_top(total, is_top)])
        return int(best[self.rng.randrange(len(best))])

    def _batch(self, fwk: Framework) -> OpportunisticBatch | None:
        """The profile's batch state, when its pods can be batched at all."""
        if not self.batching or not fwk.signs_pods:
            return None
        batch = self.batches.get(fwk.profile_name)
        if batch is None:
            batch = self.batches[fwk.profile_name] = OpportunisticBatch(fwk.profile_name, self.now, self.metrics)
        return batch

    def find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[np.ndarray, Diagnosis]:
        """PreFilter, then the walk (no batching: a cycle of its own)."""
        walk = self.last_walk = Walk(start=self.next_start_node_index % max(snapshot.num_nodes_in_placement, 1))
        return self._find_nodes_that_fit(fwk, state, pod, snapshot, walk, None, None, 0)

    def _find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, walk: Walk,
        batch: OpportunisticBatch | None, signature: LazySignature | None, cycle: int,
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
        if batch is not None and signature is not None and batch.may_hint():
            walk.hint_node = batch.node_hint(signature, cycle, lambda name: self._rejects(fwk, state, pod, snapshot, name))
        nominated = pod.nominated_node_name
        placement = snapshot.placement  # a pod-group cycle's placement: the walk keeps to its nodes
        if nominated or walk.hint_node:
            # upstream's evaluateNominatedNode: the nominated node (else the hint) first; if
            # it passes every filter (nominated pods included) there is no walk at all. One
            # outside the current placement is passed over.
            node = snapshot.get(nominated or walk.hint_node)
            if node is not None and (placement is None or placement.mask[node.row]):
                if nominated:
                    walk.nominated_node = nominated
                if self._passes(fwk, state, pod, snapshot, node.row):
                    diagnosis.evaluated = np.array([node.row], dtype=np.int64)
                    if not nominated:
                        walk.hint = HINT_USED
                    return diagnosis.evaluated, diagnosis
        order = table.order if placement is None else placement.order
        allowed = None
        if pre_result.node_names is not None:
            allowed = np.zeros(table.size, dtype=bool)
            allowed[table.rows_of(pre_result.node_names)] = True
            if placement is not None:
                allowed &= placement.mask
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
        start = walk.start = self.next_start_node_index % n
        # Nodes are visited in ``order`` rotated to begin at ``start``. Positions in
        # ``order`` stand for nodes below, so the rotation itself is never materialised.
        if not fwk.has_filter_plugins():
            processed = min(to_find, n)
            feasible = diagnosis.evaluated = rotated_prefix(order, start, processed)
        elif n <= FEW_NODES:  # a batch filter's fixed cost outweighs a few per-node calls
            feasible, processed = self._walk_few(fwk, state, pod, snapshot, diagnosis, order, start, to_find)
        else:
            # Every live row (of the placement) is a candidate unless PreFilter narrowed the set.
            if allowed is not None:
                candidates = allowed
            elif placement is None:
                candidates = table.alive[: table.size].copy()
            else:
                candidates = placement.mask.copy()
            if fwk.has_node_filters(state):
                # Per-node plugins cost a Python call per node: ask them only about the
                # windows the search visits, after the batch filters ran over all rows.
                outcome = fwk.run_batch_filters(state, pod, snapshot, candidates, count=False)
                apply_nominated_pods(fwk, state, pod, snapshot, outcome, candidates, self.nominator)
                diagnosis.outcome = outcome
                chosen, processed = first_passing_windowed(fwk, state, pod, snapshot, outcome, candidates,
                                                           order, start, to_find)
            else:
                outcome = fwk.run_filters(state, pod, snapshot, candidates, count=False)
                apply_nominated_pods(fwk, state, pod, snapshot, outcome, candidates, self.nominator)
                diagnosis.outcome = outcome
                passed = outcome.passed  # only rows of ``order`` can pass
                passing = np.count_nonzero(passed)
                if passing == n and n > to_find:
                    # Every node passes (the usual case): the walk keeps the ``to_find`` nodes
                    # from ``start`` and stops at the one after them, so visited = kept.
                    processed = to_find
                    chosen = None
                else:
                    identity = allowed is None and placement is None and table.order_is_identity  # row == position
                    if passing > to_find:
                        chosen, processed = first_passing(passed, order, identity, start, to_find)
                    else:
                        positions = (passed if identity else passed[order]).nonzero()[0]
                        split = int(positions.searchsorted(start))  # visited from start, then after wrapping
                        chosen = np.concatenate((positions[split:], positions[:split])) if split else positions
                        processed = n
            diagnosis.evaluated = rotated_prefix(order, start, processed)
            feasible = order[chosen] if chosen is not None else diagnosis.evaluated
            if fwk.plugin_evaluations is not None:  # the live mode's metrics
                fwk.count_filter_evaluations(state, outcome, visited_rows(order, start, processed))
        self._advance(walk, processed, snapshot.num_nodes_in_placement)
        return feasible, diagnosis

    def _walk_few(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, diagnosis: Diagnosis,
                  order: np.ndarray, start: int, to_find: int) -> tuple[np.ndarray, int]:
        """The walk over a handful of nodes, one node at a time (``walk_few``): the feasible
        rows and how far the start index moves; the diagnosis gets the visited rows and
        their statuses."""
        nominator = self.nominator
        nominated = nominator.nominated_node_names() if nominator is not None else None
        if nominated:
            names = snapshot.table.names
            held = frozenset(nominated)

            def status_of(row: int) -> Status | None:
                if names[row] not in held:
                    return fwk.run_filters_on_row(state, pod, snapshot, row)
                return self._status_with_nominated(fwk, state, pod, snapshot, row)
        else:
            def status_of(row: int) -> Status | None:
                return fwk.run_filters_on_row(state, pod, snapshot, row)
        kept, rejected, processed = walk_few(status_of, order.tolist(), start, to_find)
        feasible, passed = few_rows(snapshot.table.size, kept)
        diagnosis.outcome = fwk.outcome_of_rows(passed, rejected)
        # with no rejection, the nodes visited before the stop are the ones kept
        diagnosis.evaluated = rotated_prefix(order, start, processed) if rejected else feasible
        return feasible, processed

    def _status_with_nominated(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                               row: int) -> Status | None:
        """Every filter on one node that has pods nominated to it, those pods included
        (upstream's two passes, ``apply_nominated_pods``)."""
        candidates = np.zeros(snapshot.table.size, dtype=bool)
        candidates[row] = True
        outcome = fwk.run_filters(state, pod, snapshot, candidates)
        apply_nominated_pods(fwk, state, pod, snapshot, outcome, candidates, self.nominator)
        return outcome.status_of(row)

    def _advance(self, walk: Walk, processed: int, num_nodes: int) -> None:
        """upstream advances the index modulo all nodes (of the placement, in a pod-group
        cycle), even when PreFilter narrowed the walk."""
        walk.advanced = processed
        self.next_start_node_index = (self.next_start_node_index + processed) % num_nodes

    def _passes(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, row: int) -> bool:
        """Whether one node passes every filter, nominated pods included (a nominated node or a hint)."""
        nominator = self.nominator
        if nominator is None or snapshot.table.names[row] not in nominator.nominated_node_names():
            return fwk.run_filters_on_row(state, pod, snapshot, row) is None  # no pod nominated there
        return self._status_with_nominated(fwk, state, pod, snapshot, row) is None

    def _rejects(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, name: str) -> bool | None:
        """Whether the filters (without nominated pods) reject the named node; None if it is gone."""
        node = snapshot.get(name)
        if node is None:
            return None
        return fwk.run_filters_on_row(state, pod, snapshot, node.row) is not None

    def _ranks_nodes(self, fwk: Framework) -> bool:
        """upstream's ``hasScoring || hasExtenderFilters``: whether more feasible nodes than
        one could change the outcome."""
        return fwk.has_score_plugins() or (bool(self.extenders) and any(e.is_prioritizer() or e.is_filter() for e in self.extenders))

    def _percentage(self, fwk: Framework) -> int:
        if fwk.percentage_of_nodes_to_score is not None:
            return fwk.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score


