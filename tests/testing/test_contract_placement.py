"""The contract suite on placement plugins: it must pass the in-tree ones and fail each broken
one (a placement with nodes not in its parent or copies of its nodes, two placements of one
name, placements that change from one call to the next, scores out of range after normalising,
a normalisation that drops entries, a score that is not an integer), and the random pod groups
it uses must leave the clusters as they were."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from kubesched.framework import (
    GeneratePlacementsResult,
    Handle,
    Placement,
    PlacementScore,
    Plugin,
    PluginSpec,
    PodGroupAssignments,
    PodGroupCycleState,
    PodGroupInfo,
    Status,
)
from kubesched.framework.features import Features
from kubesched.objects import NodeInfo
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import (
    ContractError,
    assert_declarations,
    assert_placement_contract,
    assert_plugin_contract,
    random_clusters,
    with_pod_groups,
)

CLUSTERS = random_clusters(12, seed=29)


def spec_of(make: Callable[[Handle], Plugin], name: str) -> PluginSpec[None]:
    def new(args: None, handle: Handle) -> Plugin:
        return make(handle)
    return PluginSpec(name, new)


# -- generators ----------------------------------------------------------------------------
class ByZone:
    """A correct generator: one placement per zone of the parent."""

    name = "ByZone"

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def zones(self, nodes: tuple[NodeInfo, ...]) -> dict[str, list[NodeInfo]]:
        out: dict[str, list[NodeInfo]] = {}
        for info in nodes:
            out.setdefault(info.node.labels.get("topology.kubernetes.io/zone", "none"), []).append(info)
        return out

    def generate_placements(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                            parent: Placement) -> tuple[GeneratePlacementsResult | None, Status | None]:
        return GeneratePlacementsResult([Placement(z, tuple(n)) for z, n in sorted(self.zones(parent.nodes).items())]), None


class IgnoresTheParent(ByZone):
    """Cuts the whole cluster, whatever parent it is given."""

    name = "IgnoresTheParent"

    def generate_placements(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                            parent: Placement) -> tuple[GeneratePlacementsResult | None, Status | None]:
        return super().generate_placements(state, pod_group, Placement("", tuple(self.handle.snapshot().list())))


class CopiesNodes(ByZone):
    """Answers copies of the parent's NodeInfo objects."""

    name = "CopiesNodes"

    def generate_placements(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                            parent: Placement) -> tuple[GeneratePlacementsResult | None, Status | None]:
        copies = tuple(NodeInfo(node=n.node, row=n.row) for n in parent.nodes)
        return GeneratePlacementsResult([Placement("copies", copies)]), None


class SameName(ByZone):
    name = "SameName"

    def generate_placements(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                            parent: Placement) -> tuple[GeneratePlacementsResult | None, Status | None]:
        return GeneratePlacementsResult([Placement("p", (n,)) for n in parent.nodes]), None


class Shuffles(ByZone):
    """Different placements from one call to the next."""

    name = "Shuffles"

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        self.rng = random.Random(1)

    def generate_placements(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                            parent: Placement) -> tuple[GeneratePlacementsResult | None, Status | None]:
        nodes = list(parent.nodes)
        self.rng.shuffle(nodes)
        return GeneratePlacementsResult([Placement("some", tuple(nodes[: self.rng.randint(1, 3)]))]), None


# -- scorers -------------------------------------------------------------------------------
class Proposed:
    """A correct scorer: proposed pods, normalised by the most."""

    name = "Proposed"

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def score_placement(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                        assignments: PodGroupAssignments) -> tuple[int, Status | None]:
        return 10 * len(assignments.proposed_assignments), None

    def normalize_placement_score(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                                  scores: list[PlacementScore]) -> Status | None:
        top = max((s.score for s in scores), default=0) or 1
        for s in scores:
            s.score = s.score * 100 // top
        return None


class Unnormalised:
    """Raw counts times 1000: out of range, with nothing to rescale them."""

    name = "Unnormalised"

    def __init__(self, handle: Handle) -> None:
        pass

    def score_placement(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                        assignments: PodGroupAssignments) -> tuple[int, Status | None]:
        return 1000 * (1 + len(assignments.proposed_assignments)), None


class DropsEntries(Proposed):
    name = "DropsEntries"

    def normalize_placement_score(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                                  scores: list[PlacementScore]) -> Status | None:
        del scores[1:]
        return None


class FloatScore(Proposed):
    name = "FloatScore"

    def score_placement(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                        assignments: PodGroupAssignments) -> tuple[int, Status | None]:
        return 0.5, None  # type: ignore[return-value]


def test_a_correct_generator_and_scorer_pass() -> None:
    generated = assert_placement_contract(spec_of(ByZone, "ByZone"), clusters=CLUSTERS)
    scored = assert_placement_contract(spec_of(Proposed, "Proposed"), clusters=CLUSTERS)
    assert generated.placements_generated > 0 and generated.checks == ["placement generation"]
    assert scored.placement_scores > 0 and len(scored.score_values) > 1
    assert "placements generated" in str(generated)


@pytest.mark.parametrize("make, name, says", [
    (IgnoresTheParent, "IgnoresTheParent", "which is not in the parent placement"),
    (CopiesNodes, "CopiesNodes", "a copy of the parent's NodeInfo"),
    (SameName, "SameName", "two placements are named 'p'"),
    (Shuffles, "Shuffles", "placements must be deterministic"),
    (Unnormalised, "Unnormalised", "scores must be in [0, 100]"),
    (DropsEntries, "DropsEntries", "changed the list's placements"),
    (FloatScore, "FloatScore", "not an integer"),
])
def test_a_broken_placement_plugin_is_caught(make: Callable[[Handle], Plugin], name: str, says: str) -> None:
    with pytest.raises(ContractError, match=says.replace("[", r"\[").replace("]", r"\]").replace("'", ".")):
        assert_placement_contract(spec_of(make, name), clusters=CLUSTERS)


def test_the_full_contract_runs_the_placement_checks() -> None:
    with pytest.raises(ContractError, match="scores must be in"):
        assert_plugin_contract(spec_of(Unnormalised, "Unnormalised"), clusters=CLUSTERS)


def test_declarations_know_the_placement_methods() -> None:
    class WrongArity:
        name = "WrongArity"

        def score_placement(self, state: PodGroupCycleState) -> tuple[int, Status | None]:
            return 0, None

    with pytest.raises(ContractError, match="cannot be called as score_placement"):
        assert_declarations(spec_of(lambda h: WrongArity(), "WrongArity"), points=["placementScore"], clusters=CLUSTERS)


@pytest.mark.parametrize("name", ["TopologyPlacementGenerator", "PodGroupPodsCount", "NodeResourcesFit"])
def test_the_in_tree_placement_plugins_keep_the_contract(name: str) -> None:
    gates = Features(enable_generic_workload=True, enable_gang_scheduling=True, enable_topology_aware_workload_scheduling=True)
    clusters = random_clusters(12, seed=29)
    for cluster in clusters:
        cluster.hub.features = gates
    spec = in_tree_registry(gates).get(name)
    assert spec is not None
    report = assert_placement_contract(spec, clusters=clusters)
    assert report.placements_generated or report.placement_scores


def test_pod_groups_leave_the_cluster_as_it_was_and_are_the_same_every_time() -> None:
    cluster = random_clusters(3, seed=29)[2]
    before = [(p.uid, p.pod_group_name) for p in cluster.pods]
    first, second = with_pod_groups(cluster), with_pod_groups(cluster)
    assert [(p.uid, p.pod_group_name) for p in cluster.pods] == before
    assert cluster.handle.pod_group_manager.pod_group_states().get("default", "group-0") is None
    assert [(g.key, g.min_count, g.topology_keys, [p.uid for p in i.unscheduled_pods]) for g, i in first.groups] == \
           [(g.key, g.min_count, g.topology_keys, [p.uid for p in i.unscheduled_pods]) for g, i in second.groups]
    assert first.groups, "the cluster has pending pods to group"
