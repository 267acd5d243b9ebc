"""DefaultPreemption with and without SchedulerAsyncPreemption, as upstream's plugin: PreEnqueue
holds a preemptor back only with the gate (``TestPreEnqueue``-like cases), the pod-deletion
event is registered only with it, and through the simulator: lower-priority pods nominated to
the chosen node keep their nomination when every victim is already terminating (async: nothing
is deleted, so nothing is cleared) and lose it without the gate (cleared after the evictions)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.features import Features
from kubesched.plugins.defaultpreemption import DefaultPreemption, DefaultPreemptionArgs
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

from ..helpers import make_pod, node, pod
from .podgroup_fakes import FakePodGroups, group, group_handle, member


def plugin(async_preemption: bool, wap: bool = False, groups: tuple[Any, ...] = ()) -> DefaultPreemption:
    handle = group_handle(FakePodGroups(groups))
    handle.hub.features = Features(enable_async_preemption=async_preemption, enable_generic_workload=wap,
                                   enable_gang_scheduling=wap, enable_workload_aware_preemption=wap)
    return DefaultPreemption(DefaultPreemptionArgs(), handle.handle)


def test_without_the_gate_pre_enqueue_never_holds_a_pod_back_and_no_event_is_registered() -> None:
    pl = plugin(False)
    preemptor = make_pod("p", uid="p")
    pl.executor.preempting.add("p")
    assert pl.pre_enqueue(preemptor) is None
    assert pl.events_to_register() == []


def test_with_the_gate_a_preemptor_at_work_is_held_back_and_a_pod_deletion_may_let_it_in() -> None:
    pl = plugin(True)
    preemptor = make_pod("p", uid="p")
    pl.executor.preempting.add("p")
    status = pl.pre_enqueue(preemptor)
    assert status is not None and status.message == "waiting for the preemption for this pod to be finished"
    [registered] = pl.events_to_register()
    assert (registered.event.resource, registered.event.action) == (EventResource.POD, ActionType.DELETE)
    assert registered.hint is not None
    assert registered.hint(preemptor, None, None) == QueueingHint.SKIP  # still at work
    pl.executor.preempting.clear()
    assert registered.hint(preemptor, None, None) == QueueingHint.QUEUE


@pytest.mark.parametrize("groups, held", [((group("pg", 2),), True), ((), False)],
                         ids=["its group preempting", "its PodGroup missing: not ours to hold back"])
def test_with_workload_aware_preemption_a_member_waits_for_its_group_s_preemption(groups: tuple[Any, ...],
                                                                                    held: bool) -> None:
    pl = plugin(True, wap=True, groups=groups)
    pl.executor.preempting.add("uid-pg-default-pg")
    status = pl.pre_enqueue(member("m", "pg"))
    assert (status is not None) is held
    if held:
        assert status is not None and status.message == "waiting for the preemption for this pod group to be finished"


def _nominations_left(async_preemption: bool) -> list[str]:
    """n1 holds a terminating low-priority pod; ``lower`` (priority 50) is nominated to n1; ``p``
    (priority 100) preempts on n1: the pods nominated to n1 after p's attempt."""
    features = Features.from_gates({"SchedulerAsyncPreemption": async_preemption})
    registry = in_tree_registry(features)
    term = pod("term", uid="term", cpu="2", priority=0, node_name="n1")
    term["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    lower = pod("lower", uid="lower", cpu="1", priority=50)
    lower["status"] = {"nominatedNodeName": "n1"}
    objects = [{"kind": "Node", **node("n1", cpu="2")}, {"kind": "Pod", **term}, {"kind": "Pod", **lower},
               {"kind": "Pod", **pod("p", uid="p", cpu="2", priority=100)}]
    snapshot = snapshot_from_objects([("t", o) for o in objects])
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    sim = Simulation(snapshot, config, registry, tie_break="name")
    sim.run(max_attempts=1)  # p: preempts on n1 (its one victim already terminating), nominated there
    assert sim.cluster.nominated == {"default/p": "n1"} and sim.cluster.preemptions == []
    return sorted(p.name for p in sim.scheduler.nominator.nominated_pods_for_node("n1"))


def test_async_a_lower_nomination_stays_when_every_victim_is_already_terminating() -> None:
    assert _nominations_left(True) == ["lower", "p"]


def test_sync_a_lower_nomination_is_cleared_even_when_every_victim_is_already_terminating() -> None:
    assert _nominations_left(False) == ["p"]
