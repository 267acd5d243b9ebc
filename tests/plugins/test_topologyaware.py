"""TopologyPlacementGenerator, as upstream's topology_placement_test.go specifies it: the parent
placement back without a constraint; one placement per value of the constraint's key among the
parent's nodes (nodes without the label in none); only the domain of members already scheduled;
an error when they are in no node, no domain or several. kubesched answers placements sorted by
domain (upstream's order is a map's)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from kubesched.cache.cache import Cache
from kubesched.framework import CycleState, Placement, PodGroupInfo
from kubesched.framework.status import Code
from kubesched.objects.podgroup import PodGroup
from kubesched.plugins import topologyaware

from ..helpers import make_node
from .podgroup_fakes import FakePodGroups, group, group_handle, member

INITIAL = "test-placement"


@dataclass
class Case:
    group: PodGroup
    placement_nodes: list[tuple[str, dict[str, str]]]
    other_nodes: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    scheduled: dict[str, str] = field(default_factory=dict)  # pod -> node
    want: list[tuple[str, list[str]]] | None = None  # None: an error
    want_code: Code = Code.SUCCESS


CASES = {
    "without constraint returns placement matching all nodes": Case(
        group("pg1", 2),
        [("node1", {}), ("node2", {"foo": "bar"})], [("node3", {})],
        want=[(INITIAL, ["node1", "node2"])]),
    "with topology key constraint, returns placement for each topology domain": Case(
        group("pg1", 2, topology="topology1"),
        [("node0", {"topology2": "d1"}), ("node1", {"topology2": "d4"}), ("node2", {"topology1": "d1"}),
         ("node3", {"topology1": "d2"}), ("node4", {"topology1": "d1"}), ("node5", {"topology1": "d3"})],
        want=[("d1", ["node2", "node4"]), ("d2", ["node3"]), ("d3", ["node5"])]),
    "without matching topology label, returns empty": Case(
        group("pg1", 2, topology="topology3"),
        [("node0", {"topology2": "d1"}), ("node1", {"topology2": "d4"}), ("node2", {"topology1": "d1"}),
         ("node3", {"topology1": "d2"}), ("node4", {"topology1": "d1"}), ("node5", {"topology1": "d3"})],
        want=[]),
    "with pods already scheduled in a single domain, returns that domain": Case(
        group("pg1", 2, topology="topology"),
        [("node0", {"topology": "d2"}), ("node1", {"topology": "d1"})],
        [("node2", {"topology": "d1"}), ("node3", {"topology": "d1"})],
        scheduled={"pod1": "node2", "pod2": "node3"},
        want=[("d1", ["node1"])]),
    "with pods already scheduled in a single domain not present in current placement, returns empty": Case(
        group("pg1", 2, topology="topology"),
        [("node0", {"topology": "d2"})],
        [("node2", {"topology": "d1"}), ("node3", {"topology": "d1"})],
        scheduled={"pod1": "node2", "pod2": "node3"},
        want=[]),
    "with pods already scheduled in conflicting domains, returns error": Case(
        group("pg1", 2, topology="topology"),
        [("node0", {"topology": "d2"}), ("node1", {"topology": "d1"})],
        [("node2", {"topology": "d0"}), ("node3", {"topology": "d1"})],
        scheduled={"pod1": "node2", "pod2": "node3"},
        want_code=Code.ERROR),
    "with already scheduled pod on node outside of snapshot, returns error": Case(
        group("pg1", 2, topology="topology"),
        [("node0", {"topology": "d2"}), ("node1", {"topology": "d1"})],
        [("node2", {"topology": "d1"}), ("node3", {"topology": "d1"})],
        scheduled={"pod1": "node2", "pod2": "node4"},
        want_code=Code.ERROR),
    "with already scheduled pod on node without topology label, returns error": Case(
        group("pg1", 2, topology="topology"),
        [("node1", {"topology": "d2"})],
        [("node2", {"foo": "bar"})],
        scheduled={"pod1": "node2"},
        want_code=Code.ERROR),
}


def run(case: Case) -> tuple[list[tuple[str, list[str]]] | None, Code]:
    cache = Cache()
    for name, labels in case.placement_nodes + case.other_nodes:
        cache.add_node(make_node(name, labels=labels))
    groups = FakePodGroups((case.group,), (member("unscheduled", case.group.name),))
    for pod, node_name in case.scheduled.items():
        groups.add_pod(member(pod, case.group.name, node_name=node_name))
    pl = topologyaware.new(None, group_handle(groups, cache).handle)
    parent = Placement(INITIAL, tuple(cache.nodes[name] for name, _ in case.placement_nodes))
    result, status = pl.generate_placements(CycleState(), PodGroupInfo("default", case.group.name), parent)
    if status is not None and not status.is_success():
        return None, status.code
    assert result is not None
    return [(p.name, p.node_names()) for p in result.placements], Code.SUCCESS


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_generate_placements(case: Case) -> None:
    got, code = run(case)
    assert code == case.want_code
    if case.want_code == Code.SUCCESS:
        assert got == case.want


def test_without_a_constraint_the_parent_itself_comes_back() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    groups = FakePodGroups((group("pg", 1),), (member("p", "pg"),))
    parent = Placement("", (cache.nodes["n1"],))
    result, status = topologyaware.new(None, group_handle(groups, cache).handle).generate_placements(
        CycleState(), PodGroupInfo("default", "pg"), parent)
    assert status is None and result is not None and result.placements[0] is parent


def test_placements_hold_the_parents_node_infos() -> None:
    """The scheduler runs the group inside a placement's nodes: they must be the snapshot's own."""
    case = CASES["with topology key constraint, returns placement for each topology domain"]
    cache = Cache()
    for name, labels in case.placement_nodes:
        cache.add_node(make_node(name, labels=labels))
    groups = FakePodGroups((case.group,), (member("p", case.group.name),))
    parent = Placement("", tuple(cache.nodes[name] for name, _ in case.placement_nodes))
    result, _ = topologyaware.new(None, group_handle(groups, cache).handle).generate_placements(
        CycleState(), PodGroupInfo("default", case.group.name), parent)
    assert result is not None
    assert all(any(info is mine for mine in parent.nodes) for p in result.placements for info in p.nodes)


@pytest.mark.parametrize("scheduled, others, message", [
    ({"pod1": "node2", "pod2": "node3"}, [("node2", {"topology": "d0"}), ("node3", {"topology": "d1"})],
     "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: d0, d1"),
    ({"pod1": "node4"}, [],
     'cannot determine domain for already scheduled pods: getting node for pod default/pod1: nodeinfo not found '
     'for node name "node4"'),
    ({"pod1": "node2"}, [("node2", {"foo": "bar"})],
     "cannot determine domain for already scheduled pods: no topology domain found for pod default/pod1"),
])
def test_the_errors_say_what_is_wrong(scheduled: dict[str, str], others: list[tuple[str, dict[str, str]]],
                                      message: str) -> None:
    cache = Cache()
    for name, labels in [("node1", {"topology": "d1"}), *others]:
        cache.add_node(make_node(name, labels=labels))
    groups = FakePodGroups((group("pg", 2, topology="topology"),), (member("p", "pg"),))
    for pod, node_name in scheduled.items():
        groups.add_pod(member(pod, "pg", node_name=node_name))
    _, status = topologyaware.new(None, group_handle(groups, cache).handle).generate_placements(
        CycleState(), PodGroupInfo("default", "pg"), Placement("", (cache.nodes["node1"],)))
    assert status is not None and (status.code, status.message) == (Code.ERROR, message)


def test_a_missing_pod_group_is_an_error() -> None:
    _, status = topologyaware.new(None, group_handle(FakePodGroups()).handle).generate_placements(
        CycleState(), PodGroupInfo("default", "pg"), Placement("", ()))
    assert status is not None and (status.code, status.message) == (Code.ERROR, 'podgroup.scheduling.k8s.io "pg" not found')


# -- the label index and the memo (kubesched's; upstream walks the nodes each time) -----------
def _constrained(cache: Cache) -> tuple[topologyaware.TopologyPlacement, FakePodGroups]:
    groups = FakePodGroups((group("pg", 2, topology="rack"),), (member("p", "pg"),))
    return topologyaware.new(None, group_handle(groups, cache).handle), groups


def _domains(pl: topologyaware.TopologyPlacement, parent: Placement) -> list[tuple[str, list[str]]]:
    result, status = pl.generate_placements(CycleState(), PodGroupInfo("default", "pg"), parent)
    assert status is None and result is not None
    return [(p.name, p.node_names()) for p in result.placements]


@pytest.mark.parametrize("seed", range(20))
def test_domains_from_the_label_index_are_those_of_a_walk_over_the_parent(seed: int) -> None:
    """Random clusters (some nodes without the label, a parent that is any subset of the nodes
    in any order): the indexed domains are the walked ones, node order included."""
    rnd = random.Random(seed)
    cache = Cache()
    for i in range(rnd.randint(0, 40)):
        labels = {"rack": f"r{rnd.randint(0, 6)}"} if rnd.random() < 0.8 else {"other": "x"}
        cache.add_node(make_node(f"n{i}", labels=labels))
    infos = list(cache.nodes.values())
    rnd.shuffle(infos)
    parent = tuple(infos[: rnd.randint(0, len(infos))])
    pl, _ = _constrained(cache)
    walked: dict[str, list[str]] = {}
    for info in parent:
        if "rack" in info.node.labels:
            walked.setdefault(info.node.labels["rack"], []).append(info.node.name)
    assert _domains(pl, Placement("", parent)) == sorted(walked.items())


def test_the_same_parent_gets_the_same_domains_until_a_node_changes() -> None:
    cache = Cache()
    for name, rack in [("a", "r1"), ("b", "r2"), ("c", "r1")]:
        cache.add_node(make_node(name, labels={"rack": rack}))
    pl, _ = _constrained(cache)
    parent = Placement("", tuple(cache.nodes[n] for n in "abc"))
    assert _domains(pl, parent) == [("r1", ["a", "c"]), ("r2", ["b"])]
    cache.update_node(make_node("c", labels={"rack": "r2"}))
    assert _domains(pl, parent) == [("r1", ["a"]), ("r2", ["b", "c"])]
    cache.remove_node("a")
    cache.add_node(make_node("d", labels={"rack": "r3"}))
    parent = Placement("", tuple(cache.nodes[n] for n in "bcd"))
    assert _domains(pl, parent) == [("r2", ["b", "c"]), ("r3", ["d"])]


def test_nodes_that_are_not_the_snapshot_s_are_read_one_by_one() -> None:
    """A parent of NodeInfos the handle's snapshot does not hold (a plugin's own copies): the
    domains come from their own labels, not from the table's rows."""
    cache = Cache()
    cache.add_node(make_node("a", labels={"rack": "r1"}))
    other = Cache()
    other.add_node(make_node("x", labels={"rack": "r9"}))
    other.add_node(make_node("y", labels={"rack": "r8"}))
    pl, _ = _constrained(cache)
    assert _domains(pl, Placement("", tuple(other.nodes.values()))) == [("r8", ["y"]), ("r9", ["x"])]
