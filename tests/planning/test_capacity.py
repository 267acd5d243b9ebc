"""`run_capacity`: how many more replicas fit, placed as the scheduler places them.

Counts are checked against the independent path the issue names: a snapshot holding
that many copies of the pod, pending, scheduled by `simulate`'s Simulation.
"""

from __future__ import annotations

import collections
import pickle
from pathlib import Path
from typing import Any

import pytest

from kubesched.planning import LIMIT_REACHED, SCHEDULING_GATED, UNSCHEDULABLE, CapacitySpec, run_capacity
from tests.helpers import node, pod, taint
from tests.planning.clusters import TOPOLOGY_ZONE, copies, deployment, simulate_placements, small_pod, write, write_one

HOSTNAME = "kubernetes.io/hostname"


def _resources() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Nodes of different sizes, one tainted and one cordoned; cpu runs out on some, memory on others."""
    nodes = [node("a", cpu="4", memory="8Gi"), node("b", cpu="2", memory="32Gi"), node("c", cpu="8", memory="2Gi"),
             node("d", cpu="16", memory="64Gi", taints=[taint("dedicated", "db")]),
             node("e", cpu="16", memory="64Gi", unschedulable=True)]
    bound = pod("running", cpu="1", memory="1Gi", node_name="a")
    return [*nodes, bound], small_pod()


def _anti_affinity() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One web pod already runs; web pods refuse to share a node with each other."""
    nodes = [node(f"n{i}", cpu="8", memory="16Gi", zone=f"z{i % 2}") for i in range(4)]
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    running = pod("web-running", cpu="1", labels={"app": "web"}, node_name="n0", affinity=affinity)
    return [*nodes, running], small_pod("web", labels={"app": "web"}, affinity=affinity)


def _zone_spread() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A hard zone spread over zones of unequal room: the small zone limits the big one."""
    nodes = [node("small", cpu="2", memory="16Gi", zone="za"),
             node("big-1", cpu="4", memory="16Gi", zone="zb"), node("big-2", cpu="4", memory="16Gi", zone="zb")]
    constraint = {"maxSkew": 1, "topologyKey": TOPOLOGY_ZONE, "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": {"app": "spread"}}}
    template = small_pod("spread", labels={"app": "spread"})
    template["spec"]["topologySpreadConstraints"] = [constraint]
    return nodes, template


def _preemption() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The node is full of a low-priority pod; the replicas outrank it."""
    low = pod("low", cpu="2", memory="1Gi", node_name="only", priority=0)
    return [node("only", cpu="2", memory="8Gi"), low], small_pod("high", priority=1000)


SCENARIOS = {"resources": _resources, "anti-affinity": _anti_affinity, "zone-spread": _zone_spread,
             "preemption": _preemption}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_count_and_placement_match_simulating_that_many_pending_copies(tmp_path: Path, scenario: str) -> None:
    items, template = SCENARIOS[scenario]()
    snapshot = write(tmp_path / "cluster.yaml", *items)
    spec_file = write_one(tmp_path / "pod.yaml", template)
    result = run_capacity(CapacitySpec(snapshot, (spec_file,), tie_break="name"))
    counted = result.specs[0]

    copied = write(tmp_path / "copies.yaml", *items, *copies(template, counted.replicas + 3))
    placements = simulate_placements(copied)
    placed = collections.Counter(node for node in placements.values() if node)

    assert counted.replicas > 0
    assert counted.replicas == sum(placed.values())
    assert counted.per_node == dict(placed)
    assert counted.termination.type == UNSCHEDULABLE


def test_known_count_on_a_small_cluster(tmp_path: Path) -> None:
    # a: 4 cpu less 1 running = 3; b: 2 cpu = 2; c: 2Gi memory = 2; d tainted, e cordoned.
    items, template = _resources()
    result = run_capacity(CapacitySpec(write(tmp_path / "c.yaml", *items), (write_one(tmp_path / "p.yaml", template),)))
    assert result.specs[0].replicas == 7
    assert result.specs[0].per_node == {"a": 3, "b": 2, "c": 2}


def test_termination_reason_is_the_schedulers_message_for_the_next_replica(tmp_path: Path) -> None:
    items, template = _resources()
    snapshot = write(tmp_path / "cluster.yaml", *items)
    counted = run_capacity(CapacitySpec(snapshot, (write_one(tmp_path / "p.yaml", template),))).specs[0]
    message = counted.termination.message
    assert message.startswith("0/5 nodes are available: ")
    for part in ("1 node(s) had untolerated taint(s)", "1 node(s) were unschedulable", "2 Insufficient cpu",
                 "1 Insufficient memory"):
        assert part in message
    assert str(counted.termination) == f"Unschedulable: {message}"


def test_reasons_are_grouped_by_node(tmp_path: Path) -> None:
    nodes = [node("big", cpu="2", labels={"pool": "general"}), node("small", cpu="500m", labels={"pool": "general"}),
             node("tainted", cpu="8", labels={"pool": "general"}, taints=[taint("dedicated", "db")]),
             node("cordoned", cpu="8", labels={"pool": "general"}, unschedulable=True),
             node("gpu", cpu="8", labels={"pool": "gpu"})]
    template = small_pod(node_selector={"pool": "general"})
    snapshot = write(tmp_path / "cluster.yaml", *nodes)
    counted = run_capacity(CapacitySpec(snapshot, (write_one(tmp_path / "p.yaml", template),))).specs[0]

    assert counted.replicas == 2
    assert {g.reason: g.nodes for g in counted.node_reasons} == {
        "Insufficient cpu": ["big", "small"],
        "node(s) had untolerated taint(s)": ["tainted"],
        "node(s) were unschedulable": ["cordoned"],
        "node(s) didn't match Pod's node affinity/selector": ["gpu"],
    }
    assert counted.node_reasons[0].reason == "Insufficient cpu"  # the biggest group first


def test_existing_pods_of_the_workload_count_as_siblings(tmp_path: Path) -> None:
    items, template = _anti_affinity()
    snapshot = write(tmp_path / "cluster.yaml", *items)
    spec_file = write_one(tmp_path / "web.yaml", deployment("web", template))
    counted = run_capacity(CapacitySpec(snapshot, (spec_file,))).specs[0]
    assert counted.replicas == 3
    assert "n0" not in counted.per_node
    assert {g.reason: g.nodes for g in counted.node_reasons} == {
        "node(s) didn't match pod anti-affinity rules": ["n0", "n1", "n2", "n3"]}


def test_two_specs_are_interleaved_round_robin_and_each_stops_on_its_own(tmp_path: Path) -> None:
    # One node of 8 cpu: a1 b1 a2 b2 a3 (7 cpu used), b3 needs 2 and stops; a goes on: a4, then stops.
    snapshot = write(tmp_path / "cluster.yaml", node("only", cpu="8", memory="64Gi"))
    a = write_one(tmp_path / "a.yaml", small_pod("a", cpu="1"))
    b = write_one(tmp_path / "b.yaml", small_pod("b", cpu="2"))
    result = run_capacity(CapacitySpec(snapshot, (a, b)))
    assert [(s.name, s.replicas) for s in result.specs] == [("a", 4), ("b", 2)]
    assert all(s.termination.type == UNSCHEDULABLE for s in result.specs)
    assert result.replicas == 6


def test_one_spec_alone_takes_all_the_room(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "cluster.yaml", node("only", cpu="8", memory="64Gi"))
    a = write_one(tmp_path / "a.yaml", small_pod("a", cpu="1"))
    assert run_capacity(CapacitySpec(snapshot, (a,))).specs[0].replicas == 8


def test_max_replicas_bounds_the_count(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "cluster.yaml", node("only", cpu="8", memory="64Gi"))
    a = write_one(tmp_path / "a.yaml", small_pod("a", cpu="1"))
    counted = run_capacity(CapacitySpec(snapshot, (a,), max_replicas=3)).specs[0]
    assert counted.replicas == 3
    assert counted.termination.type == LIMIT_REACHED
    assert counted.node_reasons == []


def test_the_snapshots_pending_pods_are_placed_before_counting(tmp_path: Path) -> None:
    pending = small_pod("waiting", cpu="3")
    snapshot = write(tmp_path / "cluster.yaml", node("only", cpu="4", memory="64Gi"), pending)
    a = write_one(tmp_path / "a.yaml", small_pod("a", cpu="1"))
    result = run_capacity(CapacitySpec(snapshot, (a,)))
    assert (result.pending_pods, result.pending_placed) == (1, 1)
    assert result.specs[0].replicas == 1


def test_each_replica_costs_one_scheduling_attempt(tmp_path: Path) -> None:
    items, template = _resources()
    snapshot = write(tmp_path / "cluster.yaml", *items)
    result = run_capacity(CapacitySpec(snapshot, (write_one(tmp_path / "p.yaml", template),)))
    assert result.attempts == result.replicas + 1  # no pending pods; the last attempt is the one that failed


def test_a_gated_spec_counts_nothing_and_says_why(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "cluster.yaml", node("only", cpu="8", memory="64Gi"))
    gated = write_one(tmp_path / "g.yaml", small_pod("g", gates=["example.com/wait"]))
    counted = run_capacity(CapacitySpec(snapshot, (gated,))).specs[0]
    assert (counted.replicas, counted.termination.type) == (0, SCHEDULING_GATED)


def test_requirements_are_the_replicas_requests(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "cluster.yaml", node("only", cpu="8", memory="64Gi", extended={"example.com/fpga": 2}))
    spec = small_pod("f", cpu="1500m", memory="3Gi", requests={"cpu": "1500m", "memory": "3Gi", "example.com/fpga": "1"},
                     node_selector={"kubernetes.io/hostname": "only"})
    counted = run_capacity(CapacitySpec(snapshot, (write_one(tmp_path / "f.yaml", spec),))).specs[0]
    req = counted.requirements
    assert (req.cpu_millis, req.memory_bytes, req.extended) == (1500, 3 * 2**30, {"example.com/fpga": 1})
    assert req.node_selector == {"kubernetes.io/hostname": "only"}
    assert counted.replicas == 2  # the fpga runs out first


def test_a_hard_zone_spread_is_limited_by_the_small_zone(tmp_path: Path) -> None:
    # Zone za holds 2, so zb may hold at most 3 (maxSkew 1) though it has room for 8.
    items, template = _zone_spread()
    snapshot = write(tmp_path / "cluster.yaml", *items)
    counted = run_capacity(CapacitySpec(snapshot, (write_one(tmp_path / "p.yaml", template),))).specs[0]
    assert counted.replicas == 5
    assert counted.per_node["small"] == 2


def test_specs_and_results_pickle(tmp_path: Path) -> None:
    spec = CapacitySpec(write(tmp_path / "c.yaml", node("only", cpu="2")),
                               (write_one(tmp_path / "a.yaml", small_pod("a")),), max_replicas=5, seed=1)
    assert pickle.loads(pickle.dumps(spec)) == spec
    result = run_capacity(spec)
    again = pickle.loads(pickle.dumps(result))
    assert again.specs[0].per_node == result.specs[0].per_node == {"only": 2}
    assert again.specs[0].node_reasons == result.specs[0].node_reasons


def test_a_replica_that_preempts_is_placed_once_its_victims_are_gone(tmp_path: Path) -> None:
    items, template = _preemption()
    snapshot = write(tmp_path / "cluster.yaml", *items)
    result = run_capacity(CapacitySpec(snapshot, (write_one(tmp_path / "p.yaml", template),)))
    assert result.preempted == ["default/low"]
    assert result.specs[0].replicas == 2
