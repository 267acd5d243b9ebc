"""The pod-group cycle's placement points in the runner (upstream's RunPlacementGeneratePlugins and
RunPlacementScorePlugins): the parent placement when no plugin generates, at most one generator,
Unschedulable when it generates nothing, plugin failures as Error statuses worded as upstream's,
normalisation, the 0..100 check after it, and the weights (unset: 1) from placementScore and
multiPoint."""

from __future__ import annotations

import pytest

from kubesched.framework import (
    Assignment,
    CycleState,
    GeneratePlacementsResult,
    Placement,
    PlacementScore,
    PluginSpec,
    PodGroupAssignments,
    PodGroupInfo,
    Status,
)
from kubesched.framework.config import ConfigError
from kubesched.framework.cycle_state import PodGroupCycleState
from kubesched.framework.registry import Registry
from kubesched.framework.status import Code
from kubesched.plugins.registry import in_tree_registry

from ..helpers import Cluster, framework, make_pod, node, only

GROUP = PodGroupInfo("default", "pg")


class Halves:
    """Generates two placements: the first half of the nodes and the second."""

    name = "Halves"

    def __init__(self, answer: str = "halves") -> None:
        self.answer = answer

    def generate_placements(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                            parent: Placement) -> tuple[GeneratePlacementsResult | None, Status | None]:
        if self.answer == "error":
            return None, Status(Code.ERROR, "cannot cut")
        if self.answer == "raise":
            raise RuntimeError("boom")
        if self.answer == "none":
            return GeneratePlacementsResult([]), None
        half = len(parent.nodes) // 2
        return GeneratePlacementsResult([Placement("a", parent.nodes[:half]), Placement("b", parent.nodes[half:])]), None


class Counted:
    """Scores a placement by the number of its proposed pods, times ``factor``; may normalise by
    the largest, as PodGroupPodsCount does."""

    def __init__(self, name: str, factor: int = 1, normalize: bool = False, fail: str = "") -> None:
        self.name = name
        self.factor = factor
        self.fail = fail
        if normalize:
            self.normalize_placement_score = self._normalize

    def score_placement(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                        assignments: PodGroupAssignments) -> tuple[int, Status | None]:
        if self.fail == "score":
            return 0, Status(Code.ERROR, "no score")
        return len(assignments.proposed_assignments) * self.factor, None

    def _normalize(self, state: PodGroupCycleState, pod_group: PodGroupInfo, scores: list[PlacementScore]) -> Status | None:
        if self.fail == "normalize":
            return Status(Code.ERROR, "nothing to normalise")
        top = max(s.score for s in scores)
        for s in scores:
            s.score = s.score * 100 // top
        return None


def registry(*plugins: object) -> Registry:
    extra = Registry([PluginSpec(p.name, lambda args, handle, p=p: p) for p in plugins])  # type: ignore[attr-defined]
    return in_tree_registry().merged(extra)


def cluster() -> Cluster:
    return Cluster([node(f"n{i}") for i in range(4)])


def profile(multi: list[dict[str, object]], **points: list[dict[str, object]]) -> dict[str, object]:
    base = only()
    plugins = base["plugins"]
    plugins["multiPoint"]["enabled"] += multi
    for point, enabled in points.items():
        plugins[point] = {"enabled": enabled}
    return base


def assignments(c: Cluster, *counts: int) -> list[PodGroupAssignments]:
    infos = tuple(c.info(n) for n in c.names())
    out = []
    for i, count in enumerate(counts):
        proposed = [Assignment(make_pod(f"p{i}-{j}"), infos[0].node.name) for j in range(count)]
        out.append(PodGroupAssignments(Placement(f"pl{i}", infos), proposed))
    return out


def test_without_a_generator_the_parent_placement_is_the_only_one() -> None:
    c = cluster()
    fwk = framework(c, only())
    placements, status = fwk.run_placement_generate(CycleState(), GROUP, [c.info(n) for n in c.names()])
    assert status is None
    assert [(p.name, p.node_names()) for p in placements] == [("", c.names())]


def test_the_generator_cuts_the_parent() -> None:
    c = cluster()
    fwk = framework(c, profile([{"name": "Halves"}]), registry(Halves()))
    placements, status = fwk.run_placement_generate(CycleState(), GROUP, [c.info(n) for n in c.names()])
    assert status is None
    assert [(p.name, p.node_names()) for p in placements] == [("a", ["n0", "n1"]), ("b", ["n2", "n3"])]


@pytest.mark.parametrize("answer, code, message", [
    ("none", Code.UNSCHEDULABLE, "no feasible placements found"),
    ("error", Code.ERROR, "cannot cut"),
    ("raise", Code.ERROR, "boom"),
])
def test_a_generator_that_finds_nothing_or_fails_fails_the_cycle(answer: str, code: Code, message: str) -> None:
    c = cluster()
    fwk = framework(c, profile([{"name": "Halves"}]), registry(Halves(answer)))
    placements, status = fwk.run_placement_generate(CycleState(), GROUP, [c.info(n) for n in c.names()])
    assert placements == []
    assert status is not None and (status.code, status.message, status.plugin) == (code, message, "Halves")


def test_a_profile_takes_at_most_one_generator() -> None:
    one, two = Halves(), Halves()
    two.name = "Thirds"
    with pytest.raises(ConfigError, match="at most one placement generate plugin is allowed"):
        framework(cluster(), profile([{"name": "Halves"}, {"name": "Thirds"}]), registry(one, two))


def test_scores_are_weighted_and_summed_per_placement() -> None:
    c = cluster()
    plugins = (Counted("A", factor=10), Counted("B", factor=1))
    fwk = framework(c, profile([{"name": "A", "weight": 3}], placementScore=[{"name": "B"}]), registry(*plugins))
    scores, status = fwk.run_placement_score(CycleState(), GROUP, assignments(c, 2, 5))
    assert status is None
    assert [(s.placement.name, [(p.name, p.score) for p in s.scores], s.total_score) for s in scores] == [
        ("pl0", [("A", 60), ("B", 2)], 62),
        ("pl1", [("A", 150), ("B", 5)], 155),
    ]


def test_the_placement_score_entry_weight_overrides_multipoint() -> None:
    c = cluster()
    fwk = framework(c, profile([{"name": "A", "weight": 3}], placementScore=[{"name": "A", "weight": 5}]),
                    registry(Counted("A")))
    assert fwk.placement_weights == {"A": 5}
    assert fwk.list_plugins()["placementScore"] == [{"name": "A", "weight": 5}]


def test_normalisation_rescales_before_the_range_check() -> None:
    c = cluster()
    fwk = framework(c, profile([{"name": "A"}]), registry(Counted("A", factor=1000, normalize=True)))
    scores, status = fwk.run_placement_score(CycleState(), GROUP, assignments(c, 1, 4))
    assert status is None
    assert [s.total_score for s in scores] == [25, 100]


def test_a_score_out_of_range_fails_the_cycle() -> None:
    c = cluster()
    fwk = framework(c, profile([{"name": "A"}]), registry(Counted("A", factor=1000)))
    scores, status = fwk.run_placement_score(CycleState(), GROUP, assignments(c, 1, 4))
    assert scores == []
    assert status is not None and status.code == Code.ERROR
    assert status.message == ('applying score defaultWeights on PlacementScore plugins: plugin "A" returns an invalid '
                              'score 1000, it should in the range of [0, 100] after normalizing')


@pytest.mark.parametrize("fail, message", [
    ("score", 'running PlacementScore plugins: plugin "A" failed with: no score'),
    ("normalize", 'running NormalizePlacementScore on PlacementScore plugins: plugin "A" failed with: nothing to normalise'),
])
def test_a_failing_score_plugin_fails_the_cycle(fail: str, message: str) -> None:
    c = cluster()
    fwk = framework(c, profile([{"name": "A"}]), registry(Counted("A", normalize=True, fail=fail)))
    scores, status = fwk.run_placement_score(CycleState(), GROUP, assignments(c, 1, 4))
    assert scores == []
    assert status is not None and (status.code, status.message) == (Code.ERROR, message)


def test_a_pod_group_cycle_state_is_marked_and_survives_a_clone() -> None:
    group_state = CycleState()
    state = CycleState()
    assert not state.is_pod_group_scheduling_cycle()
    state.pod_group_cycle_state = group_state
    state.skip_all_post_filter_plugins = True
    copy = state.clone()
    assert copy.is_pod_group_scheduling_cycle() and copy.pod_group_cycle_state is group_state
    assert copy.skip_all_post_filter_plugins


def test_post_filter_is_skipped_when_the_cycle_says_so() -> None:
    c = cluster()
    fwk = framework(c)
    state = CycleState()
    state.skip_all_post_filter_plugins = True
    result, status = fwk.run_post_filter(state, make_pod("p"), None)  # type: ignore[arg-type]
    assert result is None
    assert (status.code, status.message) == (Code.UNSCHEDULABLE, "All PostFilter plugins are skipped")
