"""PodGroupPodsCount, as upstream's podgroup_pods_count_test.go specifies it: a placement scores the
group's pods assumed or bound plus the proposed ones; normalisation divides by the best count (not by
minCount), integer division, and fails when no placement holds a pod."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.framework import Assignment, CycleState, Placement, PlacementScore, PodGroupAssignments, PodGroupInfo
from kubesched.framework.status import Code
from kubesched.objects.pod import PodInfo
from kubesched.plugins import podgrouppodscount

from .podgroup_fakes import FakePodGroups, group, group_handle, member

PROPOSED = [Assignment(member("proposed-pod-1", "pg1"), "node1"), Assignment(member("proposed-pod-2", "pg1"), "node2")]


@dataclass
class Case:
    assigned: list[PodInfo] = field(default_factory=list)
    assumed: list[PodInfo] = field(default_factory=list)
    score: int = 0


SCORE_CASES = {
    "existing assigned and assumed pods": Case(
        assigned=[member("p2", "pg1", node_name="node2"), member("p3", "pg1", node_name="node3")],
        assumed=[member("p1", "pg1")], score=5),
    "no assumed pods": Case(assigned=[member("p1", "pg1", node_name="node1")], score=3),
    "no assigned pods": Case(assumed=[member("p1", "pg1")], score=3),
    "no assigned pods, no assumed pods": Case(score=2),
}


@pytest.mark.parametrize("case", SCORE_CASES.values(), ids=SCORE_CASES.keys())
def test_score_placement(case: Case) -> None:
    groups = FakePodGroups((group("pg1", 2),), (*case.assigned, *case.assumed, *(a.pod for a in PROPOSED)))
    for pod in case.assumed:
        groups.assume(pod, "node1")
    pl = podgrouppodscount.new(None, group_handle(groups).handle)
    score, status = pl.score_placement(CycleState(), PodGroupInfo("default", "pg1"),
                                       PodGroupAssignments(Placement("", ()), PROPOSED))
    assert status is None
    assert score == case.score


NORMALIZE_CASES = {
    "distinct scores": ([10, 50, 110], [9, 45, 100]),
    "equal scores": ([50, 50], [100, 100]),
    "single score": ([50], [100]),
    "some minimal score that is far from a group of scores located closely": ([11, 100, 101, 102], [10, 98, 99, 100]),
}


@pytest.mark.parametrize("raw, normalized", NORMALIZE_CASES.values(), ids=NORMALIZE_CASES.keys())
def test_normalize_placement_score(raw: list[int], normalized: list[int]) -> None:
    scores = [PlacementScore(Placement(str(i), ()), s) for i, s in enumerate(raw)]
    status = podgrouppodscount.PodGroupPodsCount(None).normalize_placement_score(
        CycleState(), PodGroupInfo("default", "pg1"), scores)
    assert status is None
    assert [s.score for s in scores] == normalized


def test_normalizing_zero_scores_fails() -> None:
    scores = [PlacementScore(Placement("a", ()), 0), PlacementScore(Placement("b", ()), 0)]
    status = podgrouppodscount.PodGroupPodsCount(None).normalize_placement_score(
        CycleState(), PodGroupInfo("default", "pg1"), scores)
    assert status is not None and (status.code, status.message) == (
        Code.ERROR, "no pods from pod group are assigned to any of the candidate placements")


def test_a_group_unknown_to_the_cache_is_an_error() -> None:
    pl = podgrouppodscount.new(None, group_handle(FakePodGroups()).handle)
    score, status = pl.score_placement(CycleState(), PodGroupInfo("default", "pg1"),
                                       PodGroupAssignments(Placement("", ()), PROPOSED))
    assert status is not None and (status.code, status.message) == (
        Code.ERROR, "pod group state not found for pod group default/pg1")
