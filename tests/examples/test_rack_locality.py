"""RackLocality, the example placement policy: its placements (each rack plus the whole parent,
the running members' rack, only the spill-over when they span racks, a required constraint obeyed
as TopologyPlacementGenerator obeys it), its score (racks used, fewest = 100), the plugin
contract on random clusters with racks, and what it changes in a simulation."""

from __future__ import annotations

from kubesched_examples.rack_locality import RACK_LABEL, SPILL_OVER, RackLocality, RackLocalityArgs, spec

from kubesched.cache.cache import Cache
from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework import Assignment, CycleState, Placement, PlacementScore, PodGroupAssignments, PodGroupInfo
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.features import Features
from kubesched.framework.loader import load_plugins
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import assert_plugin_contract, random_clusters

from ..helpers import make_node, node, pod
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


# -- end to end: a simulation with the plugin loaded as --plugin loads it -------------------
GATES = Features.from_gates({"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True})
NODE_RACKS = {"n0": "r1", "n1": "r2", "n2": "r1", "n3": "r2"}  # racks interleaved in node order


def _objects(size: int, cpu: str, required_rack: bool = False) -> list[dict[str, object]]:
    """Two racks of two 4-CPU nodes and one gang of ``size`` pods of ``cpu``."""
    objects: list[dict[str, object]] = [
        node(name, cpu="4", labels={RACK_LABEL: rack}) for name, rack in NODE_RACKS.items()]
    spec: dict[str, object] = {"schedulingPolicy": {"gang": {"minCount": size}}}
    if required_rack:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK_LABEL}]}
    objects.append({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                    "metadata": {"name": "gang", "namespace": "default"}, "spec": spec})
    for i in range(size):
        raw = pod(f"gang-{i}", cpu=cpu, uid=f"gang-{i}")
        raw["spec"]["schedulingGroup"] = {"podGroupName": "gang"}  # type: ignore[index]
        objects.append(raw)
    return objects


def _racks(objects: list[dict[str, object]], with_rack_locality: bool) -> list[str]:
    """The rack of each pod bound, in binding order."""
    registry = load_plugins(in_tree_registry(GATES), ["kubesched_examples.rack_locality:spec"], use_entry_points=False)
    profile: dict[str, object] = {"schedulerName": "default-scheduler"}
    if with_rack_locality:
        profile["plugins"] = {"multiPoint": {"enabled": [{"name": "RackLocality", "weight": 2}],
                                             "disabled": [{"name": "TopologyPlacementGenerator"}]}}
    cfg = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}, registry)
    snapshot = snapshot_from_objects([("test", obj) for obj in objects])
    result = Simulation(snapshot, cfg, registry, tie_break="name").run(max_attempts=100)
    return [NODE_RACKS[node_name] for _, node_name in result.placements]


def test_in_a_simulation_a_gang_that_fits_one_rack_gets_one() -> None:
    assert _racks(_objects(2, "1"), with_rack_locality=True) == ["r1", "r1"]
    # The default profile spreads it (LeastAllocated over every node): what RackLocality changes.
    assert sorted(_racks(_objects(2, "1"), with_rack_locality=False)) == ["r1", "r2"]


def test_in_a_simulation_a_gang_no_rack_holds_spills_over_where_a_required_rack_leaves_it_pending() -> None:
    assert sorted(_racks(_objects(3, "3"), with_rack_locality=True)) == ["r1", "r1", "r2"]
    assert _racks(_objects(3, "3", required_rack=True), with_rack_locality=False) == []
