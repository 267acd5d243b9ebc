"""TopologyPlacementGenerator, as upstream's topology_placement_test.go specifies it: the parent
placement back without a constraint; one placement per value of the constraint's key among the
parent's nodes (nodes without the label in none); only the domain of members already scheduled;
an error when they are in no node, no domain or several. kubesched answers placements sorted by
domain (upstream's order is a map's)."""

from __future__ import annotations

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
