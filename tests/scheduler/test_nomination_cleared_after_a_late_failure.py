"""A pod that failed after the algorithm chose its node loses its nomination.

Upstream hands ``clearNominatedNode`` to the failure handler whenever a pod fails after its
node was chosen: ``schedulingCycle`` when ``prepareForBindingCycle`` (assume, Reserve, Permit)
fails, ``handleBindingCycleError`` for the binding cycle, and ``submitPodGroupAlgorithmResult``
for a pod-group member whose binding preparation fails (pkg/scheduler/schedule_one.go,
schedule_one_podgroup.go). ``handleSchedulingFailure`` then drops the pod from the nominator
and ``updatePod`` patches ``status.nominatedNodeName`` empty, so the next attempt does not try
the old nominated node first (``evaluateNominatedNode``) but scores every node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import Features
from kubesched.framework.status import Code, Status
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.scheduler import Scheduler
from tests.helpers import make_node, make_pod, pod

from .podgroup_support import group

NAME = "RefuseOnce"


@dataclass
class RefuseOnce:
    """Refuses each pod once, at Reserve or at Permit, then lets it through."""

    at: str
    refused: set[str] = field(default_factory=set)
    name: str = NAME

    def _once(self, pod: PodInfo, point: str) -> Status | None:
        if point != self.at or pod.uid in self.refused:
            return None
        self.refused.add(pod.uid)
        return Status(Code.UNSCHEDULABLE, "not this time")

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self._once(pod, "reserve")

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        pass

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return self._once(pod, "permit"), 0.0


def scheduler(plugin: RefuseOnce, gates: dict[str, bool] | None = None) -> tuple[Scheduler, SimulatedCluster]:
    """The default profile with ``plugin`` at Reserve and Permit; n1 empty, n2 half full."""
    registry = in_tree_registry(Features.from_gates(gates or {}))
    registry.add(NAME, lambda args, handle: plugin)
    plugins = {point: {"enabled": [{"name": NAME}]} for point in ("reserve", "permit")}
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND,
                           "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]},
                          registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    cluster = SimulatedCluster(clock)
    sched = new_scheduler(config, cluster, clock, registry, tie_break="name")
    for name in ("n1", "n2"):
        sched.on_node_add(make_node(name, cpu="4"))
    sched.on_pod_add(make_pod("load", uid="load", cpu="2", node_name="n2"))
    return sched, cluster


def nominated_to_n2(**kwargs: Any) -> PodInfo:
    raw = pod("p", uid="p", cpu="1", **kwargs)
    raw["status"] = {"nominatedNodeName": "n2"}  # left by an earlier preemption
    return parse_pod(raw)


def attempt_twice(sched: Scheduler, p: PodInfo) -> None:
    sched.on_pod_add(p)
    sched.schedule_one()  # tries n2 first (nominated), which passes: refused at Reserve or Permit
    sched.queue.activate([p])
    sched.schedule_one()


def bound(cluster: SimulatedCluster) -> dict[str, str]:
    return {p.name: node for p, node in cluster.bindings}


def test_a_pod_refused_at_reserve_is_scored_on_every_node_next_time() -> None:
    sched, cluster = scheduler(RefuseOnce("reserve"))
    attempt_twice(sched, nominated_to_n2())
    assert bound(cluster) == {"p": "n1"}  # the emptier node, not the old nomination


def test_a_pod_refused_at_permit_is_scored_on_every_node_next_time() -> None:
    sched, cluster = scheduler(RefuseOnce("permit"))
    attempt_twice(sched, nominated_to_n2())
    assert bound(cluster) == {"p": "n1"}


def test_a_pod_group_member_refused_while_preparing_its_binding_loses_its_nomination_too() -> None:
    """The group's cycle finds the member feasible (Reserve and Permit pass there: the plugin
    refuses at Reserve only the second time it sees the pod, in ``prepareForBindingCycle``)."""
    plugin = RefuseOnce("reserve")
    sched, cluster = scheduler(plugin, {"GenericWorkload": True})
    sched.on_pod_group_add(group())
    raw_member = pod("p", uid="p", cpu="1")
    raw_member["status"] = {"nominatedNodeName": "n2"}
    raw_member["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    member = parse_pod(raw_member)
    calls: list[str] = []
    original = plugin.reserve

    def reserve(state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        calls.append(node_name)
        return original(state, pod, node_name) if len(calls) == 2 else None

    plugin.reserve = reserve  # type: ignore[method-assign]
    sched.on_pod_add(member)
    sched.schedule_one()
    assert calls == ["n2", "n2"] and bound(cluster) == {}
    sched.queue.activate([member])
    sched.schedule_one()
    assert bound(cluster) == {"p": "n1"}


def test_a_member_assumed_in_a_group_cycle_leaves_the_nominator_even_if_it_does_not_carry_its_nomination() -> None:
    """The nominator may hold a nomination the pod object does not show yet (the status patch
    not back from the informer). Upstream's ``assume`` calls ``DeleteNominatedPodIfExists``
    all the same, so the assumed member does not also count on its nominated node for the
    next members' filters; its revert restores only ``status.nominatedNodeName`` (none here).
    m1 goes to n1 (node selector) while the nominator still has it on n2: m2 then fits n2."""
    registry = in_tree_registry(Features.from_gates({"GenericWorkload": True}))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    cluster = SimulatedCluster(clock)
    sched = new_scheduler(config, cluster, clock, registry, tie_break="name")
    for name in ("n1", "n2"):
        sched.on_node_add(make_node(name, cpu="2"))
    sched.on_pod_group_add(group())
    members = []
    for name, priority, selector in (("m1", 10, {"kubernetes.io/hostname": "n1"}), ("m2", 0, None)):
        raw = pod(name, uid=name, cpu="2", priority=priority, node_selector=selector)
        raw["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
        members.append(parse_pod(raw))
    for m in members:
        sched.on_pod_add(m)
    sched.nominator.add(members[0], "n2")  # the scheduler's own nomination, not on the pod yet
    sched.schedule_one()
    assert bound(cluster) == {"m1": "n1", "m2": "n2"}
