"""PodGroupPodsCount: a placement scores the group's pods it would hold, scaled to 0..100.

The raw score counts the members already assumed or bound plus the pods the placement's
cycle proposed (counting the scheduled ones too keeps the difference between close
choices small); normalisation divides by the best placement's count, not by ``minCount``,
so that one pod more or less moves the score a little:
``score * (MAX_SCORE - MIN_SCORE) // best``, integer division as upstream's.
"""

from __future__ import annotations

from ...framework import (
    MAX_SCORE,
    MIN_SCORE,
    Code,
    Handle,
    PlacementScore,
    PodGroupAssignments,
    PodGroupCycleState,
    PodGroupInfo,
    Status,
)
from ...framework.podgroups import pod_group_state_not_found

__all__ = ["NAME", "NO_PODS_ASSIGNED", "PodGroupPodsCount", "new"]

NAME = "PodGroupPodsCount"
NO_PODS_ASSIGNED = "no pods from pod group are assigned to any of the candidate placements"


class PodGroupPodsCount:
    name = NAME

    def __init__(self, handle: Handle | None) -> None:
        self._handle = handle

    def score_placement(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, assignments: PodGroupAssignments
    ) -> tuple[int, Status | None]:
        if self._handle is None:
            return 0, Status(Code.ERROR, "PodGroupPodsCount has no handle to read pod-group state from")
        group_state = self._handle.pod_group_manager.pod_group_states().get(pod_group.namespace, pod_group.name)
        if group_state is None:
            return 0, Status(Code.ERROR, pod_group_state_not_found(pod_group.namespace, pod_group.name))
        return group_state.scheduled_pods_count() + len(assignments.proposed_assignments), None

    def normalize_placement_score(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, scores: list[PlacementScore]
    ) -> Status | None:
        best = max((s.score for s in scores), default=0)
        if best == 0:
            return Status(Code.ERROR, NO_PODS_ASSIGNED)
        for s in scores:
            s.score = MIN_SCORE + s.score * (MAX_SCORE - MIN_SCORE) // best
        return None


def new(args: None, handle: Handle) -> PodGroupPodsCount:
    return PodGroupPodsCount(handle)
