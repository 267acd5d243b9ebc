"""GangScheduling, as upstream's gangscheduling_test.go specifies it: its queueing hints (a pod or a
PodGroup of the pod's own group queues it, any other is skipped) and its flow (PreEnqueue holds a
gang member until its PodGroup exists and ``minCount`` of its pods are known; Permit waits until
``minCount`` are assumed or bound, activating the unscheduled ones, and the member completing the
quorum allows the others), in a pod-by-pod cycle and in a pod-group cycle."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.framework import ActionType, ClusterEvent, CycleState, EventResource, QueueingHint, Status
from kubesched.framework.status import Code
from kubesched.objects.pod import PodInfo
from kubesched.objects.podgroup import PodGroup
from kubesched.plugins import gangscheduling
from kubesched.plugins.gangscheduling import PERMIT_TIMEOUT_SECONDS, WAITING_AT_PERMIT, WAITING_AT_PRE_ENQUEUE

from .podgroup_fakes import FakePodGroups, group, group_handle, member


def plugin(groups: FakePodGroups | None = None) -> gangscheduling.GangScheduling:
    return gangscheduling.new(None, group_handle(groups or FakePodGroups()).handle)


@pytest.mark.parametrize("pod, added, hint", [
    pytest.param(member("p", "pg"), member("q", "pg"), QueueingHint.QUEUE,
                 id="add a newPod which matches the pod's scheduling group"),
    pytest.param(member("p", "pg"), member("q", "pg", namespace="foo"), QueueingHint.SKIP,
                 id="add a newPod which doesn't match the pod's namespace"),
    pytest.param(member("p", "pg1"), member("q", "pg2"), QueueingHint.SKIP,
                 id="add a newPod which doesn't match the pod's pod group name"),
])
def test_is_schedulable_after_pod_added(pod: PodInfo, added: PodInfo, hint: QueueingHint) -> None:
    assert plugin().is_schedulable_after_pod_added(pod, None, added) == hint


@pytest.mark.parametrize("pod, added, hint", [
    pytest.param(member("p", "pg"), group("pg", 1), QueueingHint.QUEUE,
                 id="add a pod group which matches the pod's pod group name"),
    pytest.param(member("p", "pg1"), group("pg2", 1), QueueingHint.SKIP,
                 id="add a pod group which doesn't match the pod's scheduling group name"),
    pytest.param(member("p", "pg", namespace="ns1"), group("pg", 1, namespace="ns2"), QueueingHint.SKIP,
                 id="add a pod group which doesn't match the pod's scheduling group namespace"),
])
def test_is_schedulable_after_pod_group_added(pod: PodInfo, added: PodGroup, hint: QueueingHint) -> None:
    assert plugin().is_schedulable_after_pod_group_added(pod, None, added) == hint


def test_a_pod_without_a_group_is_skipped_by_both_hints() -> None:
    loner = member("p", None)
    assert plugin().is_schedulable_after_pod_added(loner, None, member("q", "pg")) == QueueingHint.SKIP
    assert plugin().is_schedulable_after_pod_group_added(loner, None, group("pg", 1)) == QueueingHint.SKIP


def test_an_object_it_cannot_read_queues_the_pod() -> None:
    pod = member("p", "pg")
    assert plugin().is_schedulable_after_pod_added(pod, None, {"kind": "Pod"}) == QueueingHint.QUEUE
    assert plugin().is_schedulable_after_pod_group_added(pod, None, {"kind": "PodGroup"}) == QueueingHint.QUEUE


def test_it_listens_to_pods_and_pod_groups_being_added() -> None:
    events = [r.event for r in plugin().events_to_register()]
    assert events == [ClusterEvent(EventResource.POD, ActionType.ADD), ClusterEvent(EventResource.POD_GROUP, ActionType.ADD)]
    assert all(r.hint is not None for r in plugin().events_to_register())


GANG1 = group("pg1", 3, namespace="ns1")
GANG2 = group("pg2", 4, namespace="ns1")
BASIC = group("pg3", None, namespace="ns1")

P1, P2, P3 = (member(n, "pg1", namespace="ns1") for n in ("p1", "p2", "p3"))
P4, P5 = (member(n, "pg2", namespace="ns1") for n in ("p4", "p5"))
BASIC_POD = member("basic-pod", "pg3", namespace="ns1")
NON_GANG = member("non-gang", None, namespace="ns1")


@dataclass
class FlowCase:
    pod: PodInfo
    initial_pods: list[PodInfo] = field(default_factory=list)
    initial_groups: list[PodGroup] = field(default_factory=list)
    waiting_on_permit: list[PodInfo] = field(default_factory=list)
    in_pod_group_cycle: bool = False
    want_pre_enqueue: Status | None = None
    want_permit: Status | None = None
    want_activated: list[str] = field(default_factory=list)
    want_allowed: list[str] = field(default_factory=list)


FLOW = {
    "non-gang pod succeeds immediately": FlowCase(NON_GANG, initial_groups=[GANG1, GANG2, BASIC]),
    "basic policy pod succeeds immediately": FlowCase(BASIC_POD, initial_groups=[GANG1, GANG2, BASIC]),
    "gang pod fails PreEnqueue when pod group is not yet created": FlowCase(
        P1, initial_pods=[P2, P3, P4, P5],
        want_pre_enqueue=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                'waiting for pods\'s pod group "pg1" to appear in scheduling queue')),
    "gang pod fails PreEnqueue when quorum is not met": FlowCase(
        P1, initial_pods=[P2, P4, P5], initial_groups=[GANG1, GANG2],
        want_pre_enqueue=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_AT_PRE_ENQUEUE)),
    "gang pod passes PreEnqueue, but waits at Permit": FlowCase(
        P1, initial_pods=[P2, P3, P4, P5], initial_groups=[GANG1, GANG2], waiting_on_permit=[P2, P4, P5],
        want_permit=Status(Code.WAIT, WAITING_AT_PERMIT), want_activated=["p3"]),
    "final gang pod arrives at Permit and allows all waiting pods from a gang": FlowCase(
        P1, initial_pods=[P2, P3, P4, P5], initial_groups=[GANG1, GANG2], waiting_on_permit=[P2, P3, P4, P5],
        want_allowed=["p2", "p3"]),
    "final gang pod arrives at Permit during pod group scheduling cycle": FlowCase(
        P1, initial_pods=[P2, P3, P4, P5], initial_groups=[GANG1, GANG2], waiting_on_permit=[P2, P3, P4, P5],
        in_pod_group_cycle=True, want_allowed=["p2", "p3"]),
}


@pytest.mark.parametrize("case", FLOW.values(), ids=FLOW.keys())
def test_gang_scheduling_flow(case: FlowCase) -> None:
    groups = FakePodGroups(tuple(case.initial_groups))
    for pod in (*case.initial_pods, case.pod):
        if pod.pod_group_name is not None:
            groups.add_pod(pod)
    handle = group_handle(groups)
    pl = gangscheduling.new(None, handle.handle)

    assert pl.pre_enqueue(case.pod) == case.want_pre_enqueue
    if case.want_pre_enqueue is not None:
        return

    # Other pods already hit Permit and wait there.
    for other in case.waiting_on_permit:
        assumed = groups.assume(other, "some-node")
        status, timeout = pl.permit(CycleState(), assumed, "some-node")
        assert status is not None and status.code == Code.WAIT, (other.name, status)
        assert timeout == PERMIT_TIMEOUT_SECONDS
        handle.wait_at_permit(assumed, "some-node")
    handle.activated.clear()

    state = CycleState()
    if case.in_pod_group_cycle:
        state.pod_group_cycle_state = CycleState()
    pod = case.pod
    if pod.pod_group_name is not None:
        pod = groups.assume(pod, "some-node")  # assumed before Permit, in the cache or the cycle's snapshot
    status, _ = pl.permit(state, pod, "some-node")
    assert status == case.want_permit

    assert [p.name for p in handle.activated] == case.want_activated
    assert sorted(uid for uid, how in handle.decided.items() if how == "allowed") == case.want_allowed
    still_waiting = sorted(p.uid for p in case.waiting_on_permit if p.uid not in case.want_allowed)
    assert sorted(w.pod.uid for w in handle.handle.iterate_over_waiting_pods()) == still_waiting


def test_a_quorum_of_bound_members_lets_a_late_member_through() -> None:
    """Bound members count: the gang's last member, arriving after the others were bound, binds at once."""
    groups = FakePodGroups((group("pg", 3),), (member("a", "pg", node_name="n1"), member("b", "pg", node_name="n2"),
                                               member("c", "pg")))
    pl = plugin(groups)
    late = groups.assume(groups.get("default", "pg").unscheduled_pods()[0], "n3")  # type: ignore[union-attr]
    assert pl.pre_enqueue(late) is None
    assert pl.permit(CycleState(), late, "n3") == (None, 0.0)


def test_pre_enqueue_without_the_groups_state_is_an_error() -> None:
    status = plugin(FakePodGroups((group("pg", 2),))).pre_enqueue(member("p", "pg"))
    assert status is not None and (status.code, status.message) == (
        Code.ERROR, "pod group state not found for pod group default/pg")


def test_permit_of_a_pod_whose_group_is_gone_is_an_error() -> None:
    pod = member("p", "pg")
    status, timeout = plugin(FakePodGroups((), (pod,))).permit(CycleState(), pod, "n1")
    assert status is not None and (status.code, status.message) == (
        Code.ERROR, 'failed to get podGroup default/pg: podgroup.scheduling.k8s.io "pg" not found')
    assert timeout == 0.0


def test_a_basic_group_passes_permit_without_waiting() -> None:
    pod = member("p", "pg")
    assert plugin(FakePodGroups((group("pg", None),), (pod,))).permit(CycleState(), pod, "n1") == (None, 0.0)
