"""Choosing victims on one node (upstream's ``SelectVictimsOnNode``) and ordering pods by importance.

The dry run works on copies: every pod of lower priority than the preemptor leaves the
node copy (PreFilter state told through ``RemovePod``); if the preemptor still does not
fit, the node cannot help. Otherwise victims are reprieved one at a time, those whose
eviction would violate a PodDisruptionBudget first, each group from the most important
down, and a reprieved pod stays only if the preemptor still fits beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ..cycle_state import CycleState
from ..runtime import Framework
from ..status import Code, Status
from .nominated import (
    NominatedPods,
    run_filters_with_nominated_pods,
    run_pre_filter_extension_add_pod,
    run_pre_filter_extension_remove_pod,
)
from .gosort import go_sort_slice
from .pdb import DisruptionBudget, split_by_pdb_violation
from .potential import NO_VICTIMS, NO_VICTIMS_REASON

__all__ = ["NO_VICTIMS_REASON", "VictimSelection", "importance_key", "more_important", "select_victims_on_node", "started"]


def started(pod: PodInfo) -> float:
    """upstream's ``GetPodStartTime``: ``status.startTime``, or now for a pod not started
    yet, which is later than any start time a pod can have."""
    return pod.start_time if pod.start_time is not None else math.inf


def importance_key(pod: PodInfo) -> tuple[int, float]:
    """A sort key putting more important pods first (upstream's ``MoreImportantPod``):
    higher priority, then the earlier start."""
    return -pod.priority, started(pod)


def more_important(a: PodInfo, b: PodInfo) -> bool:
    """upstream's ``MoreImportantPod``, the ``less`` of the victims' Go sort."""
    return importance_key(a) < importance_key(b)


@dataclass(slots=True)
class VictimSelection:
    """The victims (most important first) and how many of them violate a budget; or why none."""

    victims: list[PodInfo]
    pdb_violations: int
    status: Status | None  # None: the preemptor fits once the victims are gone
    criteria: tuple[int, int, int, int, float] | None = None  # the candidate's standing, once asked


def select_victims_on_node(fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo,
                           pdbs: Sequence[DisruptionBudget], nominator: NominatedPods | None) -> VictimSelection:
    """``state`` and ``node`` are the caller's copies: they are changed."""
    potential = [p for p in node.pods.values() if p.priority < pod.priority]
    if not potential:
        return VictimSelection([], 0, NO_VICTIMS)

    def remove(victim: PodInfo) -> Status | None:
        node.remove_pod(victim)
        return run_pre_filter_extension_remove_pod(fwk, state, pod, victim, node)

    for victim in potential:
        status = remove(victim)
        if status is not None:
            return VictimSelection([], 0, status)
    status = run_filters_with_nominated_pods(fwk, state, pod, node, nominator)
    if status is not None:
        return VictimSelection([], 0, status)
    # Go's unstable sort, as upstream: equally important pods keep its order, not ours.
    go_sort_slice(potential, more_important)
    violating, fine = split_by_pdb_violation(potential, pdbs)
    victims: list[PodInfo] = []

    def reprieve(victim: PodInfo) -> bool | Status:
        node.add_pod(victim)
        status = run_pre_filter_extension_add_pod(fwk, state, pod, victim, node)
        if status is not None:
            return status
        fits = run_filters_with_nominated_pods(fwk, state, pod, node, nominator) is None
        if not fits:
            status = remove(victim)
            if status is not None:
                return status
            victims.append(victim)
        return fits

    violations = 0
    for victim in violating:
        fits = reprieve(victim)
        if isinstance(fits, Status):
            return VictimSelection([], 0, fits)
        if not fits:
            violations += 1
    for victim in fine:
        fits = reprieve(victim)
        if isinstance(fits, Status):
            return VictimSelection([], 0, fits)
    if violating and fine:
        go_sort_slice(victims, more_important)
    return VictimSelection(victims, violations, None)
