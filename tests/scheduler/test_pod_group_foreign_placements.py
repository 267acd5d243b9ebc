"""A placement plugin that hands back NodeInfos the snapshot does not own.

Upstream's ``Snapshot.AssumePlacement`` (pkg/scheduler/backend/cache/snapshot.go) first treats a
placement of as many nodes as the snapshot as no placement at all, then checks each node in
order by name: missing from the snapshot ("node X in placement is not present in snapshot") or
another instance ("node X in placement is not the same instance as in the snapshot");
``podGroupSchedulingPlacementAlgorithm`` fails the cycle with "failed to assume pod group
placement: " and that error, which becomes the PodGroupScheduled condition's message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.cycle_state import PodGroupCycleState
from kubesched.framework.features import Features
from kubesched.framework.placement import GeneratePlacementsResult, Placement
from kubesched.framework.podgroups import PodGroupInfo
from kubesched.framework.status import Status
from kubesched.objects.nodeinfo import NodeInfo
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.scheduler import Scheduler
from tests.helpers import make_node

from .podgroup_support import group, member

GATES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
NAME = "Copying"


def copy(info: NodeInfo) -> NodeInfo:
    return NodeInfo(node=info.node, row=info.row)


@dataclass
class Copying:
    """A PlacementGenerate plugin whose one placement is built from the parent's nodes by ``make``."""

    make: Callable[[tuple[NodeInfo, ...]], tuple[NodeInfo, ...]]
    name: str = NAME

    def generate_placements(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                            parent: Placement) -> tuple[GeneratePlacementsResult | None, Status | None]:
        return GeneratePlacementsResult([Placement("mine", self.make(parent.nodes))]), None


def scheduler(plugin: Copying) -> Scheduler:
    registry = in_tree_registry(Features.from_gates(GATES))
    registry.add(NAME, lambda args, handle: plugin)
    plugins = {"placementGenerate": {"enabled": [{"name": NAME}], "disabled": [{"name": "*"}]}}
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND,
                           "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]},
                          registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    sched = new_scheduler(config, SimulatedCluster(clock), clock, registry, tie_break="name")
    for name in ("n1", "n2", "n3"):
        sched.on_node_add(make_node(name))
    sched.on_pod_group_add(group())
    return sched


CASES = {
    "a node the snapshot lacks": (
        lambda nodes: (NodeInfo(node=make_node("ghost"), row=0),),
        ("False", "SchedulerError", "failed to assume pod group placement: node ghost in placement is not present "
                                    "in snapshot")),
    "a copy of a node, after the snapshot's own": (
        lambda nodes: (nodes[1], copy(nodes[0])),
        ("False", "SchedulerError", "failed to assume pod group placement: node n1 in placement is not the same "
                                    "instance as in the snapshot")),
    "copies of every node: no placement at all": (
        lambda nodes: tuple(copy(n) for n in nodes),
        ("True", "Scheduled", "")),
}


@pytest.mark.parametrize("make, condition", CASES.values(), ids=CASES.keys())
def test_a_placement_of_nodes_the_snapshot_does_not_own(
        make: Callable[[tuple[NodeInfo, ...]], tuple[NodeInfo, ...]], condition: tuple[str, str, str]) -> None:
    sched = scheduler(Copying(make))
    sched.on_pod_add(member("p1", cpu="1"))
    sched.schedule_one()
    assert sched.group_cycles[-1].condition == condition
