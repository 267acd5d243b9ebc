"""Preemption as upstream's ``Evaluator.Preempt`` runs it (pkg/scheduler/framework/preemption).

When a pod fits nowhere: check it may preempt; dry-run preemption on every node whose
rejection preemption might fix (plain Unschedulable; nodes UnschedulableAndUnresolvable
are skipped); keep the nodes where it would work as candidates; pick one by upstream's
criteria; have the executor evict its victims; nominate the node. When no node can
help, the answer is a second FitError built from the dry run's statuses.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...objects.pod import PodInfo
from ..cycle_state import CycleState, StateKey
from ..interfaces import NodeToStatusReader, PostFilterResult
from ..runtime import Framework
from ..status import Code, Status
from ..views import RowArray, SnapshotView
from .dry_run_cache import NodeResultCache
from .nominated import NominatedPods, clone_node_info, clone_state
from .pdb import DisruptionBudget
from .potential import NO_VICTIMS, lowest_pod_priority, split_by_potential_victims
from .victims import VictimSelection, select_victims_on_node, started

__all__ = [
    "Candidate",
    "CandidateFilter",
    "PreemptionOutcome",
    "PREEMPTION_OUTCOME",
    "Evaluator",
    "NOT_HELPFUL_REASON",
    "pick_candidates",
    "fit_error_message",
]

NOT_HELPFUL_REASON = "Preemption is not helpful for scheduling"
NEVER_MESSAGE = "not eligible due to preemptionPolicy=Never."
TERMINATING_MESSAGE = "not eligible due to a terminating pod on the nominated node."
NO_CANDIDATE_MESSAGE = "no candidate node for preemption"
# Upstream adds MaxInt32+1 to every priority before summing, so negative ones compare right.
_PRIORITY_OFFSET = 2**31


@dataclass(slots=True)
class Candidate:
    """A node where evicting ``victims`` (most important first) lets the preemptor fit."""

    node: str
    victims: list[PodInfo]
    pdb_violations: int
    criteria: tuple[int, int, int, int, float] | None = None  # see _criteria; kept with a cached dry run


@dataclass(slots=True)
class PreemptionOutcome:
    """What one PostFilter run of preemption decided, for explain output and the summary."""

    code: Code
    message: str
    nominated_node: str | None = None
    victims: list[PodInfo] = field(default_factory=list)
    tied: list[str] = field(default_factory=list)


CandidateFilter = Callable[[PodInfo, list["Candidate"]], "list[Candidate] | Status"]
"""upstream's ``callExtenders``: the candidates preemption-capable extenders keep, or an error."""

PREEMPTION_OUTCOME: StateKey[PreemptionOutcome] = StateKey("kubesched.io/preemption-outcome")
"""Written to the cycle state by the preemption plugin: the scheduler reads it back."""


def fit_error_message(num_all_nodes: int, statuses: dict[str, Status], absent: Status, no_victims: int = 0) -> str:
    """upstream's ``FitError.Error()`` for a diagnosis without PreFilter or PostFilter messages;
    ``no_victims`` more nodes, not in ``statuses``, answered ``NO_VICTIMS``."""
    reasons: Counter[str] = Counter()
    for status in statuses.values():
        for reason in status.reasons:
            reasons[reason] += 1
    if no_victims:
        for reason in NO_VICTIMS.reasons:
            reasons[reason] += no_victims
    if len(statuses) + no_victims < num_all_nodes:
        for reason in absent.reasons:
            reasons[reason] += num_all_nodes - len(statuses) - no_victims
    histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{num_all_nodes} nodes are available: {', '.join(histogram)}."


def _earliest_start_of_most_important(victims: list[PodInfo]) -> float:
    """``GetEarliestPodStartTime``: the earliest start among the highest-priority victims
    (a pod not started yet counts as starting now, later than any pod that has)."""
    top = max(v.priority for v in victims)
    return min(started(v) for v in victims if v.priority == top)


def _criteria(c: Candidate) -> tuple[int, int, int, int, float]:
    """A candidate's standing on upstream's criteria, each the larger the better."""
    if c.criteria is not None:
        return c.criteria
    victims = c.victims
    c.criteria = (-c.pdb_violations, -victims[0].priority, -sum(v.priority + _PRIORITY_OFFSET for v in victims),
                  -len(victims), _earliest_start_of_most_important(victims))
    return c.criteria


def pick_candidates(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates still tied after upstream's criteria, in the order given: fewest PDB
    violations, lowest highest-victim priority, smallest priority sum, fewest victims,
    latest start among the highest-priority victims. Upstream applies them one after the
    other, keeping the best on each: the ones left are those best on all of them at once."""
    if len(candidates) <= 1:
        return list(candidates)
    keys = [_criteria(c) for c in candidates]
    best = max(keys)
    return [c for c, key in zip(candidates, keys) if key == best]


class Evaluator:
    """One profile's preemption: the framework to filter with, and where the cluster is read.

    ``execute(candidate, preemptor)`` evicts the chosen candidate's victims (the plugin's
    executor; an Error status when a synchronous eviction failed); ``tie_break`` "name" makes the search start at the first node and take
    the smallest node name among tied candidates, "random" is upstream's random offset
    and (Go map order) random pick.
    """

    def __init__(self, fwk: Framework, snapshot: Callable[[], SnapshotView], nominator: NominatedPods | None,
                 pdbs: Callable[[], list[DisruptionBudget]],
                 num_candidates: Callable[[int], int], execute: Callable[[Candidate, PodInfo], Status | None],
                 tie_break: str = "random", rng: random.Random | None = None,
                 extenders: CandidateFilter | None = None) -> None:
        self.fwk = fwk
        self._snapshot = snapshot
        self.nominator = nominator
        self._pdbs = pdbs
        self._num_candidates = num_candidates
        self._execute = execute
        self.tie_break = tie_break
        self.rng = rng or random.Random()
        self.cache: NodeResultCache[VictimSelection] = NodeResultCache()
        self.extenders = extenders  # preemption-capable HTTP extenders, asked to filter the candidates

    def preempt(self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status]:
        """upstream's ``Preempt``; the outcome is also written to ``state`` under ``PREEMPTION_OUTCOME``."""
        result, status, outcome = self._preempt(state, pod, filtered)
        state.write(PREEMPTION_OUTCOME, outcome)
        return result, status

    def _preempt(self, state: CycleState, pod: PodInfo,
                 filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status, PreemptionOutcome]:
        snapshot = self._snapshot()
        refusal = self._ineligible(pod, filtered, snapshot)
        if refusal:
            return None, Status(Code.UNSCHEDULABLE, refusal), PreemptionOutcome(Code.UNSCHEDULABLE, refusal)
        num_all = snapshot.num_nodes
        candidates, statuses, no_victims = self.find_candidates(state, pod, filtered, snapshot)
        errors = [s for s in statuses.values() if s.code == Code.ERROR]
        if errors and not candidates:
            return None, errors[0], PreemptionOutcome(Code.ERROR, errors[0].message)
        if not candidates:
            message = fit_error_message(num_all, statuses, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL_REASON),
                                        no_victims)
            # An empty nomination clears the pod's nominatedNodeName, if it had one.
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, message), PreemptionOutcome(Code.UNSCHEDULABLE, message, None)
        if self.extenders is not None:
            kept = self.extenders(pod, candidates)
            if isinstance(kept, Status):
                return None, kept, PreemptionOutcome(kept.code, kept.message)
            candidates = kept
        if not candidates:
            return None, Status(Code.UNSCHEDULABLE, NO_CANDIDATE_MESSAGE), PreemptionOutcome(
                Code.UNSCHEDULABLE, NO_CANDIDATE_MESSAGE)
        tied = pick_candidates(candidates)
        if self.tie_break == "name":
            best = min(tied, key=lambda c: c.node)
        else:
            best = tied[0] if len(tied) == 1 else self.rng.choice(tied)
        failed = self._execute(best, pod)
        if failed is not None:  # a synchronous eviction failed: upstream returns its status
            return None, failed, PreemptionOutcome(failed.code, failed.message)
        outcome = PreemptionOutcome(Code.SUCCESS, "", best.node, list(best.victims), sorted(c.node for c in tied))
        return PostFilterResult(best.node), Status(Code.SUCCESS), outcome

    def _ineligible(self, pod: PodInfo, filtered: NodeToStatusReader, snapshot: SnapshotView) -> str:
        """upstream's ``PodEligibleToPreemptOthers``: why the pod may not preempt ("" if it may)."""
        if pod.preemption_policy == "Never":
            return NEVER_MESSAGE
        nominated = pod.nominated_node_name
        if nominated:
            if filtered.status_of(nominated).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return ""
            node = snapshot.get(nominated)
            if node is not None and any(p.priority < pod.priority and p.terminating for p in node.pods.values()):
                return TERMINATING_MESSAGE
        return ""

    def offset_and_count(self, num_potential: int) -> tuple[int, int]:
        """Where the dry run starts among the potential nodes, and how many candidates it wants."""
        offset = 0 if self.tie_break == "name" else self.rng.randrange(num_potential)
        return offset, self._num_candidates(num_potential)

    def find_candidates(self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader,
                        snapshot: SnapshotView) -> tuple[list[Candidate], dict[str, Status], int]:
        """upstream's ``findCandidates`` and ``DryRunPreemption``: candidates that violate no
        budget first, the status of every node tried that is not one, and how many more
        nodes answered ``NO_VICTIMS`` (no lower-priority pod: told from the node table,
        neither copied nor filtered, and not listed)."""
        statuses: dict[str, Status] = {}
        able, num_potential, offset, wanted = self._potential_nodes(pod, filtered, snapshot)
        if not num_potential:
            return [], statuses, 0
        no_victims = num_potential - len(able)
        pdbs = self._pdbs()
        cached = self.cache.start(self.fwk, state, pod, pdbs, self.nominator)
        fine: list[Candidate] = []
        violating: list[Candidate] = []
        lookup, node_info, nominator, fwk = self.cache.get, snapshot.get, self.nominator, self.fwk
        for name in able:
            info = node_info(name)
            if info is None:
                continue
            selection = lookup(info, pod, nominator) if cached else None
            if selection is None:
                selection = select_victims_on_node(fwk, clone_state(fwk, state), pod, clone_node_info(info), pdbs,
                                                   nominator)
                if cached:
                    self.cache.put(info, pod, nominator, selection)
            status = selection.status
            if status is None and selection.victims:
                group = fine if selection.pdb_violations == 0 else violating
                if len(group) < wanted:
                    candidate = Candidate(name, selection.victims, selection.pdb_violations, selection.criteria)
                    if selection.criteria is None:
                        selection.criteria = _criteria(candidate)  # kept for the next pod, if cached
                    group.append(candidate)
                if fine and len(fine) + len(violating) >= wanted:
                    break
                continue
            if status is None:
                status = Status(Code.ERROR, f'expected at least one victim pod on node "{name}"')
            statuses[name] = status
        return fine + violating, statuses, no_victims

    def _potential_nodes(self, pod: PodInfo, filtered: NodeToStatusReader,
                         snapshot: SnapshotView) -> tuple[list[str], int, int, int]:
        """The nodes to dry-run, in the order upstream tries them (from a random offset
        among the Unschedulable ones) less those without a lower-priority pod; how many
        were Unschedulable; the offset; the number of candidates wanted."""
        rows_with = getattr(filtered, "rows_with", None)
        if rows_with is None:  # a reader without rows: by name
            potential = filtered.node_names_with(Code.UNSCHEDULABLE)
            if not potential:
                return [], 0, 0, 0
            offset, wanted = self.offset_and_count(len(potential))
            able, unable = split_by_potential_victims(snapshot, potential[offset:] + potential[:offset], pod.priority)
            return able, len(able) + len(unable), offset, wanted
        rows: RowArray = rows_with(Code.UNSCHEDULABLE)
        if not len(rows):
            return [], 0, 0, 0
        total = len(rows)
        offset, wanted = self.offset_and_count(total)
        rows = np.concatenate((rows[offset:], rows[:offset])) if offset else rows
        table = snapshot.table
        lowest = lowest_pod_priority(snapshot)
        if lowest is not None:
            rows = rows[lowest[rows] < pod.priority]
        names = table.names
        return [names[r] for r in rows.tolist()], total, offset, wanted
