"""How a member that fit its node but was refused there goes back to the queue.

Inside a pod-group cycle upstream turns a Reserve or Permit rejection into a FitError naming
that one node (``assumeAndReserve``, pkg/scheduler/schedule_one.go, and
``podGroupPodSchedulingAlgorithm``, schedule_one_podgroup.go), recording the rejecting plugin
with ``Diagnosis.AddPluginStatus``. ``handleSchedulingFailure`` copies the FitError's plugins
onto the pod, so ``AddUnschedulableIfNotPresent`` counts the attempt as unschedulable
(``UnschedulableCount``, which ends a run of errors), not as an error: the member's next
backoff grows with its unschedulable attempts. A member failing with its group's own status
(no FitError) returns with no rejector, as after an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import Features
from kubesched.framework.queued_pod import QueuedPodInfo
from kubesched.framework.status import Code, Status
from kubesched.objects.nodeinfo import NodeInfo
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.scheduler import Scheduler
from tests.helpers import make_node, make_pod, pod

from .podgroup_support import default_scheduler, group, member, raw_member

NAME = "Refusing"


@dataclass
class Refusing:
    """Lets every pod through Filter; refuses the named pods at Reserve or at Permit."""

    reserve_status: dict[str, Status] = field(default_factory=dict)
    permit_status: dict[str, Status] = field(default_factory=dict)
    name: str = NAME

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return None

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self.reserve_status.get(pod.name)

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        pass

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return self.permit_status.get(pod.name), 0.0


def scheduler(plugin: Refusing) -> Scheduler:
    registry = in_tree_registry(Features.from_gates({"GenericWorkload": True}))
    registry.add(NAME, lambda args, handle: plugin)
    plugins = {"multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                              "disabled": [{"name": "*"}]},
               **{point: {"enabled": [{"name": NAME}]} for point in ("filter", "reserve", "permit")}}
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND,
                           "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]},
                          registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    sched = new_scheduler(config, SimulatedCluster(clock), clock, registry, tie_break="name")
    sched.on_node_add(make_node("node1"))
    sched.on_pod_group_add(group())
    return sched


def queued(sched: Scheduler, name: str) -> QueuedPodInfo:
    found = [info for infos in sched.queue.pending_pods().values() for info in infos if info.pod.name == name]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("at", ["reserve", "permit"])
@pytest.mark.parametrize("code", [Code.UNSCHEDULABLE, Code.PENDING])
def test_a_member_refused_on_its_node_is_unschedulable_by_the_refusing_plugin(at: str, code: Code) -> None:
    refused = Status(code, "no room here")
    sched = scheduler(Refusing(**{f"{at}_status": {"p1": refused}}))  # type: ignore[arg-type]
    sched.on_pod_add(member("p1"))
    sched.schedule_one()
    info = queued(sched, "p1")
    assert info.unschedulable_plugins == {NAME}
    assert info.pending_plugins == ({NAME} if code == Code.PENDING else set())
    assert (info.unschedulable_count, info.consecutive_errors_count) == (1, 0)


def test_a_member_failing_with_its_groups_status_goes_back_with_no_rejecting_plugin() -> None:
    """No node has the group's topology key: TopologyPlacementGenerator finds no placement and
    the framework answers Unschedulable "no feasible placements found" with the plugin's name
    (``RunPlacementGeneratePlugins``). Every member fails with that status, which is no
    FitError: ``handleSchedulingFailure`` clears the pod's rejectors and finds none to copy,
    so ``AddUnschedulableIfNotPresent`` counts the attempt as an error."""
    sched, cluster = default_scheduler({"GenericWorkload": True, "GangScheduling": True,
                                        "TopologyAwareWorkloadScheduling": True})
    sched.on_pod_group_add(group(topology="topology.kubernetes.io/rack"))
    sched.on_pod_add(member("p1", cpu="1"))
    sched.schedule_one()
    assert cluster.conditions["default/p1"] == ("Unschedulable", "no feasible placements found")
    info = queued(sched, "p1")
    assert (info.unschedulable_plugins, info.pending_plugins) == (set(), set())
    assert (info.unschedulable_count, info.consecutive_errors_count) == (0, 1)


@pytest.mark.parametrize("at", ["reserve", "permit"])
def test_a_pod_of_no_group_refused_pending_on_its_node_is_pending_on_the_refusing_plugin(at: str) -> None:
    """The same FitError outside pod groups (``assumeAndReserve``, ``schedulingCycle``): a
    Pending status puts the plugin among the pod's pending plugins too."""
    sched = scheduler(Refusing(**{f"{at}_status": {"solo": Status(Code.PENDING, "later")}}))  # type: ignore[arg-type]
    sched.on_pod_add(make_pod("solo", uid="solo", cpu="1"))
    sched.schedule_one()
    info = queued(sched, "solo")
    assert (info.unschedulable_plugins, info.pending_plugins) == ({NAME}, {NAME})


# -- pods being deleted ------------------------------------------------------------------------
def _deleting(raw: dict[str, object]) -> PodInfo:
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # type: ignore[index]
    return parse_pod(raw)


def test_a_pending_pod_being_deleted_is_popped_and_skipped_with_upstreams_event() -> None:
    """upstream's informer handlers queue a pending pod whatever its deletionTimestamp; popped,
    ``skipPodSchedule`` says so in a FailedScheduling event and drops it."""
    sched, cluster = default_scheduler()
    sched.on_pod_add(_deleting(pod("going", uid="going", cpu="1")))
    sched.schedule_one()
    assert cluster.events == [("default/going", "Warning", "FailedScheduling", "skip schedule deleting pod: default/going")]
    assert cluster.bindings == [] and sched.queue.where("going") == ""


def test_a_gang_member_being_deleted_counts_towards_min_count_but_is_not_scheduled() -> None:
    """The member being deleted is still a member (``AddPodGroupMember``): three of three make
    the quorum GangScheduling's PreEnqueue asks for, so the group is tried; its cycle skips
    the deleted one (``skipPodGroupPodSchedule``), two cannot reach minCount at Permit, and
    the group is unschedulable."""
    sched, cluster = default_scheduler()
    sched.on_pod_group_add(group(min_count=3))
    sched.on_pod_add(member("m1", cpu="1"))
    sched.on_pod_add(member("m2", cpu="1"))
    sched.on_pod_add(_deleting(raw_member("m3", "pg", cpu="1")))
    sched.schedule_one()
    assert ("default/m3", "Warning", "FailedScheduling", "skip schedule deleting pod: default/m3") in cluster.events
    assert cluster.bindings == []
    assert sched.group_cycles[-1].order == ["default/m1", "default/m2"]  # m3 popped, then skipped
    assert cluster.conditions["default/m1"][0] == "Unschedulable"
    assert sched.group_cycles[-1].condition[:2] == ("False", "Unschedulable")
