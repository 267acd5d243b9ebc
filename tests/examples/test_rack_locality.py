"""RackLocality, the example placement policy: its placements (each rack plus the whole parent,
the running members' rack, only the spill-over when they span racks, a required constraint obeyed
as TopologyPlacementGenerator obeys it), its score (racks used, fewest = 100), and the plugin
contract on random clusters with racks."""

from __future__ import annotations

from kubesched_examples.rack_locality import RACK_LABEL, SPILL_OVER, RackLocality, RackLocalityArgs, spec

from kubesched.cache.cache import Cache
from kubesched.framework import Assignment, CycleState, Placement, PlacementScore, PodGroupAssignments, PodGroupInfo
from kubesched.testing import assert_plugin_contract, random_clusters

from ..helpers import make_node
from ..plugins.podgroup_fakes import FakePodGroups, group, group_handle, member

RACKS = {"n1": "r1", "n2": "r1", "n3": "r2", "n4": "r3"}
ZONES = {"n1": "z1", "n2": "z2", "n3": "z2", "n4": "z2"}


def world(groups: FakePodGroups) -> tuple[RackLocality, Placement]:
    cache = Cache()
    for name, rack in RACKS.items():
        cache.add_node(make_node(name, labels={RACK_LABEL: rack, "topology.kubernetes.io/zone": ZONES[name]}))
    plugin = RackLocality(RackLocalityArgs(), group_handle(groups, cache).handle)
    return plugin, Placement("", tuple(cache.nodes[n] for n in RACKS))


def placements(groups: FakePodGroups) -> list[tuple[str, list[str]]]:
    plugin, parent = world(groups)
    result, status = plugin.generate_placements(CycleState(), PodGroupInfo("default", "pg"), parent)
    assert status is None and result is not None
    return [(p.name, p.node_names()) for p in result.placements]


def test_each_rack_then_the_whole_parent() -> None:
    assert placements(FakePodGroups((group("pg", 2),), (member("a", "pg"),))) == [
        ("r1", ["n1", "n2"]), ("r2", ["n3"]), ("r3", ["n4"]), (SPILL_OVER, ["n1", "n2", "n3", "n4"])]


def test_running_members_keep_the_group_to_their_rack_or_spill_over() -> None:
    one_rack = FakePodGroups((group("pg", 3),), (member("a", "pg"), member("b", "pg", node_name="n2")))
    assert [name for name, _ in placements(one_rack)] == ["r1", SPILL_OVER]
    two_racks = FakePodGroups((group("pg", 3),), (member("a", "pg"), member("b", "pg", node_name="n2"),
                                                  member("c", "pg", node_name="n3")))
    assert [name for name, _ in placements(two_racks)] == [SPILL_OVER]


def test_a_required_constraint_is_obeyed_without_spill_over() -> None:
    constrained = FakePodGroups((group("pg", 2, topology="topology.kubernetes.io/zone"),), (member("a", "pg"),))
    assert placements(constrained) == [("z1", ["n1"]), ("z2", ["n2", "n3", "n4"])]
    running = FakePodGroups((group("pg", 2, topology="topology.kubernetes.io/zone"),),
                            (member("a", "pg"), member("b", "pg", node_name="n3")))
    assert placements(running) == [("z2", ["n2", "n3", "n4"])]


def test_fewer_racks_score_higher() -> None:
    pods = [member(f"p{i}", "pg") for i in range(3)]
    plugin, parent = world(FakePodGroups((group("pg", 3),), tuple(pods)))
    info = PodGroupInfo("default", "pg", pods)
    compact = PodGroupAssignments(parent, [Assignment(p, "n1") for p in pods])
    spread = PodGroupAssignments(parent, [Assignment(p, n) for p, n in zip(pods, ["n1", "n3", "n4"])])
    raw = [plugin.score_placement(CycleState(), info, a)[0] for a in (compact, spread)]
    assert raw == [1, 3]
    scores = [PlacementScore(parent, s) for s in raw]
    assert plugin.normalize_placement_score(CycleState(), info, scores) is None
    assert [s.score for s in scores] == [100, 33]


def test_it_keeps_the_plugin_contract() -> None:
    clusters = random_clusters(15, seed=3, node_labels={RACK_LABEL: ["r1", "r2", "r3"]})
    report = assert_plugin_contract(spec, clusters=clusters, points=["placementGenerate", "placementScore"])
    assert report.placements_generated and report.placement_scores
