"""A pod-group cycle's placement restricts the node walk (upstream's snapshot
``AssumePlacement``, ``ListNodesInPlacement``, ``GetNodeInPlacement``, ``NumNodesInPlacement``).

Inside a placement the walk visits only its nodes, in the placement's order; the start
index is taken, and advanced, modulo the placement's size; a nominated node outside it
is passed over; the FitError counts the placement's nodes. A placement of every node is
no restriction. Plugins still see the whole cluster.
"""

from __future__ import annotations

import pytest

from kubesched.cache.cache import SnapshotError
from kubesched.framework.cycle_state import CycleState
from kubesched.scheduler.algorithm import Algorithm
from kubesched.scheduler.fit_error import FitError, NoNodesAvailableError

from ..helpers import Cluster, framework, make_pod, node


def zoned_cluster(per_zone: int = 4, zones: int = 2, **node_kw) -> Cluster:
    return Cluster([node(f"z{z}-n{i}", zone=f"zone-{z}", **node_kw) for z in range(zones) for i in range(per_zone)])


def rows_of_zone(cluster: Cluster, zone: str) -> list[int]:
    table = cluster.cache.table
    return [r for r in table.order.tolist() if table.nodes[r].labels.get("topology.kubernetes.io/zone") == zone]


def test_the_walk_keeps_to_the_placement_nodes():
    c = zoned_cluster()
    fwk = framework(c)
    snapshot = c.snapshot
    snapshot.assume_placement("zone-1", rows_of_zone(c, "zone-1"))
    try:
        result = Algorithm(tie_break="name").schedule_pod(fwk, CycleState(), make_pod("a", cpu="100m"), snapshot)
    finally:
        snapshot.forget_placement()
    names = [c.cache.table.names[r] for r in result.feasible_rows.tolist()]
    assert sorted(names) == [f"z1-n{i}" for i in range(4)]
    assert result.suggested_host.startswith("z1-")


def test_the_start_index_moves_modulo_the_placement_size():
    c = zoned_cluster(per_zone=3, zones=3)
    fwk = framework(c)
    algo = Algorithm(tie_break="name")
    algo.next_start_node_index = 7
    snapshot = c.snapshot
    snapshot.assume_placement("zone-0", rows_of_zone(c, "zone-0"))
    try:
        algo.schedule_pod(fwk, CycleState(), make_pod("a", cpu="100m"), snapshot)
        assert algo.last_walk.start == 7 % 3
    finally:
        snapshot.forget_placement()
    assert algo.next_start_node_index == (7 + 3) % 3


def test_a_fit_error_in_a_placement_counts_its_nodes_only():
    c = zoned_cluster(cpu="1")
    fwk = framework(c)
    snapshot = c.snapshot
    snapshot.assume_placement("zone-0", rows_of_zone(c, "zone-0"))
    try:
        with pytest.raises(FitError) as err:
            Algorithm().schedule_pod(fwk, CycleState(), make_pod("big", cpu="2"), snapshot)
    finally:
        snapshot.forget_placement()
    assert err.value.message() == "0/4 nodes are available: 4 Insufficient cpu."


def test_a_nominated_node_outside_the_placement_is_passed_over():
    c = zoned_cluster()
    fwk = framework(c)
    snapshot = c.snapshot
    nominated = make_pod("a", cpu="100m").copy_with(nominated_node_name="z0-n0")
    snapshot.assume_placement("zone-1", rows_of_zone(c, "zone-1"))
    try:
        result = Algorithm(tie_break="name").schedule_pod(fwk, CycleState(), nominated, snapshot)
    finally:
        snapshot.forget_placement()
    assert result.suggested_host.startswith("z1-")


def test_a_placement_of_every_node_is_no_restriction():
    c = zoned_cluster()
    snapshot = c.snapshot
    snapshot.assume_placement("all", c.rows().tolist())
    assert snapshot.placement is None
    assert snapshot.num_nodes_in_placement == 8


def test_an_empty_placement_has_no_nodes_to_schedule_on():
    c = zoned_cluster()
    fwk = framework(c)
    snapshot = c.snapshot
    snapshot.assume_placement("none", [])
    try:
        with pytest.raises(NoNodesAvailableError):
            Algorithm().schedule_pod(fwk, CycleState(), make_pod("a"), snapshot)
    finally:
        snapshot.forget_placement()


def test_a_placement_naming_a_removed_node_is_refused():
    c = zoned_cluster()
    row = c.cache.nodes["z0-n1"].row
    c.cache.remove_node("z0-n1")
    with pytest.raises(SnapshotError):
        c.snapshot.assume_placement("zone-0", [row])
    assert c.snapshot.placement is None
