"""Placement scores end to end: which rack a constrained pod group lands in.

Upstream's ``findBestPlacement`` sums the PlacementScore plugins; NodeResourcesFit's
``ScorePlacement`` is MostAllocated over the placement's nodes taken as one, with the proposed
pods' requests computed by a scorer made apart from the plugin's own (``NewFit``:
``getScorer(MostAllocated)`` without the plugin's feature flags), so pod-level resources
(``spec.resources``) are left out of them even with PodLevelResources on.
"""

from __future__ import annotations

from tests.helpers import container, node, pod

from .podgroup_support import raw_group, simulate

RACK = "topology.kubernetes.io/rack"
GATES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}


def test_a_members_pod_level_resources_do_not_weigh_in_its_placements_score() -> None:
    """rack-a: 4 cpu, 1 used; rack-b: 16 cpu, 8 used. The member asks 2 cpu at pod level and
    100m in its container. Upstream scores rack-a (1 + 0.1) / 4 and rack-b (8 + 0.1) / 16 on
    cpu and picks rack-b; counting the pod-level 2 cpu would make rack-a the fuller one."""
    nodes = [node("a1", cpu="4", labels={RACK: "rack-a"}), node("b1", cpu="16", labels={RACK: "rack-b"})]
    used = [pod("used-a", uid="used-a", cpu="1", node_name="a1"), pod("used-b", uid="used-b", cpu="8", node_name="b1")]
    member = pod("m", uid="m", containers=[container(cpu="100m")], pod_requests={"cpu": "2"})
    member["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    _, result = simulate(nodes, [*used, member], [raw_group("pg", topology=RACK)], gates=GATES)
    assert dict(result.placements)["default/m"] == "b1"
