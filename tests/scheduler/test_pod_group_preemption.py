"""Workload-aware preemption in the pod-group cycle (WorkloadAwarePreemption): upstream's
``TestRunWorkloadAwarePreemption`` and ``TestPodGroupCycle_PodGroupPostFilter`` tables with
a scripted DefaultPreemption, then whole simulations with the real one: a high-priority gang
preempting lower-priority pods and a lower-priority gang, a victim gang evicted whole when
its disruption mode says PodGroup and pod by pod when it says Pod, the refusals and their
messages on the group's condition, what the first cycle's pods carry back to the queue, and
a group held at PreEnqueue while its victims are evicted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import pytest

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster, Simulation, SimulationResult
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework import DryRunSnapshot, PodGroupSchedulingFunc
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import Features
from kubesched.framework.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.objects.pod import PodInfo
from kubesched.objects.podgroup import PodGroup
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.metrics import SchedulerMetrics
from kubesched.scheduler.podgroup_preemption import CONSTRAINED, NOT_REGISTERED
from kubesched.scheduler.scheduler import Scheduler
from tests.helpers import make_node, make_pod, node

from .podgroup_support import FakePodGroupPlugin, group, group_info, member, raw_member, simulate

WAP = {"GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True}
TAS_WAP = {**WAP, "TopologyAwareWorkloadScheduling": True}
ZONE = "topology.kubernetes.io/zone"


@dataclass
class FakeDefaultPreemption(FakePodGroupPlugin):
    """upstream's ``fakeDefaultPreemption``: the scripted plugin under DefaultPreemption's name,
    answering ``group_answer`` at PodGroupPostFilter (None: Success)."""

    group_answer: Status | None = Status(Code.UNSCHEDULABLE, "default fake podgroup postfilter failure")
    group_calls: int = 0
    name: str = "DefaultPreemption"

    def pod_group_post_filter(self, pod_group: PodGroup, pods: Sequence[PodInfo], schedule: PodGroupSchedulingFunc,
                              snapshot: DryRunSnapshot) -> Status | None:
        self.group_calls += 1
        return self.group_answer


def scripted(plugin: FakePodGroupPlugin, gates: dict[str, bool], groups: list[PodGroup]) -> Scheduler:
    """One profile: PrioritySort, ``plugin`` at Filter, PostFilter and Permit, DefaultBinder;
    the in-tree DefaultPreemption left out so that the scripted one may take its name."""
    features = Features.from_gates(gates)
    base = in_tree_registry(features)
    registry = Registry([s for s in base.specs() if s.name != "DefaultPreemption"], base.defaults,
                        base.unimplemented, base.features)
    registry.add(plugin.name, lambda args, handle: plugin)
    plugins = {"multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]},
               **{point: {"enabled": [{"name": plugin.name}]} for point in ("filter", "postFilter", "permit")}}
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND,
                           "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}, registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    sched = new_scheduler(config, SimulatedCluster(clock), clock, registry, tie_break="name")
    sched.on_node_add(make_node("node1"))
    for pg in groups:
        sched.on_pod_group_add(pg)
    return sched


def constrained(name: str) -> PodGroup:
    return group(name, topology=ZONE)


# -- TestRunWorkloadAwarePreemption ---------------------------------------------------
@pytest.mark.parametrize("plugin, groups, name, want", [
    pytest.param(FakePodGroupPlugin(), [group("pg1")], "pg1", Status(Code.UNSCHEDULABLE, NOT_REGISTERED),
                 id="error when no PodGroupPostFilter plugin is registered"),
    pytest.param(FakeDefaultPreemption(), [], "missing-pg",
                 Status(Code.ERROR, 'failed to get pod group object: podgroup.scheduling.k8s.io "missing-pg" not found'),
                 id="error when pod group is not found in informer"),
    pytest.param(FakeDefaultPreemption(), [constrained("pg-with-constraints")], "pg-with-constraints",
                 Status(Code.UNSCHEDULABLE, CONSTRAINED), id="error when pod group has scheduling constraints"),
    pytest.param(FakeDefaultPreemption(group_answer=Status(Code.SUCCESS)), [group("pg-success")], "pg-success",
                 Status(Code.SUCCESS, plugin="DefaultPreemption"), id="success when plugin returns success status"),
    pytest.param(FakeDefaultPreemption(group_answer=Status(Code.UNSCHEDULABLE, "not enough resources")),
                 [group("pg-unschedulable")], "pg-unschedulable",
                 Status(Code.UNSCHEDULABLE, "not enough resources", plugin="DefaultPreemption"),
                 id="failure when plugin returns unschedulable status"),
])
def test_run_workload_aware_preemption(plugin: FakePodGroupPlugin, groups: list[PodGroup], name: str, want: Status) -> None:
    sched = scripted(plugin, WAP, groups)
    assert sched.pod_group_post_filter is not None
    status = sched.pod_group_post_filter(sched.profiles["default-scheduler"], CycleState(),
                                         group_info([member("p1", name)], name))
    assert status == want


# -- TestPodGroupCycle_PodGroupPostFilter -----------------------------------------------
@pytest.mark.parametrize("gates, plugin, called", [
    pytest.param(WAP, FakeDefaultPreemption(), True,
                 id="runs pod group post filter when WAP is enabled and DefaultPreemption is registered"),
    pytest.param({"GenericWorkload": True, "GangScheduling": True}, FakeDefaultPreemption(), False,
                 id="disables pod group post filter when WAP feature gate is disabled"),
    pytest.param(WAP, FakePodGroupPlugin(), False,
                 id="disables pod group post filter when DefaultPreemption is not registered"),
])
def test_a_failed_group_cycle_asks_the_pod_group_post_filter(gates: dict[str, bool], plugin: FakePodGroupPlugin,
                                                              called: bool) -> None:
    plugin.filter_status = {"p1": Status(Code.UNSCHEDULABLE, "always fail p1"),
                            "p2": Status(Code.UNSCHEDULABLE, "always fail p2")}
    sched = scripted(plugin, gates, [group("pg")])
    sched.on_pod_add(member("p1"))
    sched.on_pod_add(member("p2"))
    sched.schedule_one()
    assert (getattr(plugin, "group_calls", 0) == 1) is called


def test_a_group_whose_preemption_started_fails_as_waiting_and_its_fitting_pods_are_nominated() -> None:
    plugin = FakeDefaultPreemption(filter_status={"fits": None}, permit_status={"fits": Status(Code.WAIT)},
                                   group_answer=None)
    sched = scripted(plugin, WAP, [group("pg", 2)])
    cluster = sched.client
    assert isinstance(cluster, SimulatedCluster)
    sched.on_pod_add(member("fits"))
    sched.on_pod_add(member("nofit"))
    sched.schedule_one()
    [cycle] = list(sched.group_cycles)
    assert cycle.condition == ("False", "Unschedulable", "pod group is unschedulable")
    assert cluster.nominated.get("default/fits") == "node1"  # where it fit, waiting for the victims to go
    assert "default/nofit" not in cluster.nominated


# -- whole simulations with the real DefaultPreemption ------------------------------------
def pod_group(name: str, min_count: int | None = None, priority: int | None = None, mode: str | None = None,
              topology: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if priority is not None:
        spec["priority"] = priority
    if mode is not None:
        spec["disruptionMode"] = mode
    if topology is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "generation": 1}, "spec": spec}


def two_nodes() -> list[dict[str, Any]]:
    return [node("n0", cpu="4", zone="a"), node("n1", cpu="4", zone="b")]


def fillers(prefix: str, group_name: str | None = None, priority: int = 0, count: int = 8) -> list[dict[str, Any]]:
    """``count`` one-cpu pods bound alternately to n0 and n1 (eight fill both nodes)."""
    return [raw_member(f"{prefix}{i}", group_name, cpu="1", priority=priority, node_name=f"n{i % 2}")
            for i in range(count)]


def gang(count: int, cpu: str, priority: int = 100, name: str = "gang", **kwargs: Any) -> list[dict[str, Any]]:
    return [raw_member(f"{name}-{i}", name, cpu=cpu, priority=priority, **kwargs) for i in range(count)]


def conditions(sim: Simulation) -> list[tuple[str, str, str] | None]:
    return [c.condition for c in sim.scheduler.group_cycles]


def victims(result: SimulationResult) -> list[str]:
    return sorted(v for v, _, _ in result.preemptions)


def test_a_high_priority_gang_evicts_only_the_lower_priority_pods_it_needs_gone() -> None:
    sim, result = simulate(two_nodes(), fillers("low") + gang(2, "2"), [pod_group("gang", 2, priority=100)], gates=WAP)
    assert victims(result) == ["default/low1", "default/low3", "default/low5", "default/low7"]
    assert {preemptor for _, preemptor, _ in result.preemptions} == {"default/gang"}
    assert {result.outcomes[f"default/gang-{i}"].node for i in range(2)} == {"n1"}
    assert conditions(sim) == [("False", "Unschedulable", "pod group is unschedulable"), ("True", "Scheduled", "")]


def test_each_victim_is_evicted_with_an_event_naming_the_pod_group() -> None:
    sim, result = simulate(two_nodes(), fillers("low") + gang(1, "1"), [pod_group("gang", 1, priority=100)], gates=WAP)
    # Equally important victims are reprieved in the cluster's order: the last one stays a victim.
    assert result.preemptions == [("default/low7", "default/gang", "n1")]
    assert ("default/low7", "Normal", "Preempted", "Preempted by podgroup uid-gang on node cluster") in sim.cluster.events
    assert result.outcomes["default/gang-0"].node == "n1"


def test_lower_priority_pods_go_before_a_pod_group_of_the_same_priority() -> None:
    objects = fillers("single", count=4) + [raw_member(f"member{i}", "victims", cpu="1", node_name=f"n{i % 2}")
                                            for i in range(4)]
    sim, result = simulate(two_nodes(), objects + gang(2, "1"),
                           [pod_group("gang", 2, priority=100), pod_group("victims", 4, priority=0, mode="PodGroup")],
                           gates=WAP)
    assert victims(result) == ["default/single1", "default/single3"]


def test_a_victim_gang_whose_disruption_mode_is_pod_group_is_evicted_whole() -> None:
    sim, result = simulate(two_nodes(), fillers("v", "victims") + gang(2, "1"),
                           [pod_group("gang", 2, priority=100), pod_group("victims", 8, priority=0, mode="PodGroup")],
                           gates=WAP)
    assert victims(result) == [f"default/v{i}" for i in range(8)]
    assert all(result.outcomes[f"default/gang-{i}"].node for i in range(2))


def test_a_victim_gang_whose_disruption_mode_is_pod_loses_only_the_members_in_the_way() -> None:
    sim, result = simulate(two_nodes(), fillers("v", "victims") + gang(2, "1"),
                           [pod_group("gang", 2, priority=100), pod_group("victims", 8, priority=0, mode="Pod")],
                           gates=WAP)
    assert victims(result) == ["default/v5", "default/v7"]


def test_a_victim_gang_of_higher_priority_than_the_preemptor_is_left_alone() -> None:
    sim, result = simulate(two_nodes(), fillers("v", "victims", priority=0) + gang(2, "1"),
                           [pod_group("gang", 2, priority=100), pod_group("victims", 8, priority=500, mode="PodGroup")],
                           gates=WAP)
    assert result.preemptions == []
    assert conditions(sim)[0] == ("False", "Unschedulable",
                                  "pod group is unschedulable, No preemption victims found for incoming preemptor")


@pytest.mark.parametrize("gates, message", [
    pytest.param(WAP, "pod group is unschedulable, " + CONSTRAINED, id="TopologyAwareWorkloadScheduling off"),
    pytest.param(TAS_WAP, "0/2 placements are available, first placement status: pod group is unschedulable, " + CONSTRAINED,
                 id="TopologyAwareWorkloadScheduling on"),
])
def test_a_constrained_group_is_refused_with_upstream_s_message(gates: dict[str, bool], message: str) -> None:
    sim, result = simulate(two_nodes(), fillers("low") + gang(2, "1"), [pod_group("gang", 2, priority=100, topology=ZONE)],
                           gates=gates)
    assert result.preemptions == []
    assert conditions(sim) == [("False", "Unschedulable", message)]


def test_a_group_with_a_pod_that_never_preempts_does_not_preempt() -> None:
    pods = gang(2, "1")
    pods[1]["spec"]["preemptionPolicy"] = "Never"
    sim, result = simulate(two_nodes(), fillers("low") + pods, [pod_group("gang", 2, priority=100)], gates=WAP)
    assert result.preemptions == []
    assert conditions(sim) == [("False", "Unschedulable", "pod group is unschedulable, not eligible due to preemptionPolicy=Never.")]


def test_a_group_too_large_for_the_cluster_even_without_its_victims_evicts_nothing() -> None:
    sim, result = simulate(two_nodes(), fillers("low") + gang(2, "5"), [pod_group("gang", 2, priority=100)], gates=WAP)
    assert result.preemptions == []
    # The dry run's status joins the group's, as upstream appends it: the same words twice.
    assert conditions(sim) == [("False", "Unschedulable", "pod group is unschedulable, pod group is unschedulable")]


def test_members_do_not_preempt_pod_by_pod_when_the_group_preempts() -> None:
    sim, result = simulate(two_nodes(), fillers("low") + gang(2, "5"), [pod_group("gang", 2, priority=100)], gates=WAP)
    assert result.outcomes["default/gang-0"].message.endswith(
        "preemption: not eligible due to workload aware preemption enabled")


def test_without_the_gate_members_preempt_pod_by_pod() -> None:
    gates = {"GenericWorkload": True, "GangScheduling": True}
    sim, result = simulate(two_nodes(), fillers("low") + gang(2, "2"), [pod_group("gang", 2)], gates=gates)
    assert result.preemptions and all(pre == "default/gang-0" or pre == "default/gang-1"
                                      for _, pre, _ in result.preemptions)


def test_a_profile_without_default_preemption_says_workload_aware_preemption_is_disabled() -> None:
    features = Features.from_gates(WAP)
    registry = in_tree_registry(features)
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}}}]}, registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    sched = new_scheduler(config, SimulatedCluster(clock), clock, registry)
    sched.on_node_add(make_node("node1", cpu="1"))
    sched.on_pod_group_add(group("pg", 1))
    sched.on_pod_add(member("big", cpu="2"))
    sched.schedule_one()
    [cycle] = list(sched.group_cycles)
    assert cycle.condition == ("False", "Unschedulable", "pod group is unschedulable, " + NOT_REGISTERED)


def test_the_dry_runs_leave_the_cluster_as_it_was() -> None:
    sim, _ = simulate(two_nodes(), fillers("low") + gang(2, "5"), [pod_group("gang", 2, priority=100)], gates=WAP)
    for name, info in sim.scheduler.cache.nodes.items():
        assert list(info.pods) == [f"low{i}" for i in range(8) if f"n{i % 2}" == name]
        assert info.requested.milli_cpu == 4000


# -- asynchronous eviction -------------------------------------------------------------
def test_a_group_s_members_wait_at_pre_enqueue_while_its_victims_are_evicted() -> None:
    features = Features.from_gates(WAP)
    registry = in_tree_registry(features)
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    cluster = SimulatedCluster(clock)
    pending: list[Callable[[bool], None]] = []
    cluster.preempt_pod_for_group = lambda victim, grp, scheduler, done=None: pending.append(done)  # type: ignore[method-assign,assignment,misc]
    sched = new_scheduler(config, cluster, clock, registry, tie_break="name")
    sched.on_node_add(make_node("node1", cpu="2"))
    for name in ("low1", "low2"):
        sched.on_pod_add(make_pod(name, uid=name, cpu="1", node_name="node1", priority=0))
    sched.on_pod_group_add(PodGroup("default", "pg", "uid-pg", 1, "1", 1, priority=100))
    urgent = member("urgent", cpu="2", priority=0)
    sched.on_pod_add(urgent)
    sched.schedule_one()
    plugin = sched.profiles["default-scheduler"].plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    assert len(pending) == 1  # the first victim; the last waits for it
    status = plugin.pre_enqueue(urgent)
    assert status is not None and status.message == "waiting for the preemption for this pod group to be finished"
    pending[0](True)
    assert len(pending) == 2 and plugin.pre_enqueue(urgent) is not None  # now the last victim
    last = sched.cache.get_pod(plugin.executor.last_victims["uid-pg"])
    assert last is not None
    sched.on_pod_delete(last)  # its deletion seen: enough to let the group in
    assert plugin.pre_enqueue(urgent) is None
    pending[1](True)
    assert plugin.executor.preempting == set()


def test_a_group_s_preemption_counts_its_victims_as_upstream_s_executor_observes_them() -> None:
    features = Features.from_gates(WAP)
    registry = in_tree_registry(features)
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    objects = [("t", {"kind": "Node", **n}) for n in two_nodes()] + [("t", pod_group("gang", 2, priority=100))]
    objects += [("t", {"kind": "Pod", **p}) for p in fillers("low") + gang(2, "2")]
    snapshot = snapshot_from_objects(objects, plugin_kinds=frozenset(k for _, k in registry.object_kinds()))
    sim = Simulation(snapshot, config, registry, tie_break="name")
    metrics = SchedulerMetrics()
    metrics.enable_pod_groups()
    sim.scheduler.metrics = metrics
    sim.run()
    text = metrics.exposition().decode()
    assert "scheduler_preemption_victims_count 1.0" in text and "scheduler_preemption_victims_sum 4.0" in text
    assert "scheduler_preemption_attempts_total 0.0" in text  # the members' PostFilter refused before preempting


# -- upstream's integration scenarios (test/integration/scheduler/podgroup) ---------------
def _one_node_cluster(pods: list[dict[str, Any]], groups: list[dict[str, Any]], gates: dict[str, bool]
                      ) -> tuple[Simulation, SimulationResult]:
    """One 4-cpu node in zone1; ``pods`` (bound ones first) of 1 cpu unless said."""
    return simulate([node("node", cpu="4", zone="zone1")], pods, groups, gates=gates)


def _bound(name: str, priority: int, cpu: str = "1") -> dict[str, Any]:
    return raw_member(name, None, cpu=cpu, priority=priority, node_name="node")


@pytest.mark.parametrize("gates", [WAP, TAS_WAP], ids=["TAS off", "TAS on"])
def test_integration_gang_schedules_with_workload_aware_preemption(gates: dict[str, bool]) -> None:
    pods = [_bound(f"low-p{i}", 10) for i in range(1, 5)] + [raw_member(f"p{i}", "pg1", priority=100) for i in range(1, 5)]
    sim, result = _one_node_cluster(pods, [pod_group("pg1", 3, priority=100)], gates)
    assert all(result.outcomes[f"default/p{i}"].node == "node" for i in range(1, 5))
    assert victims(result) == [f"default/low-p{i}" for i in range(1, 5)]


@pytest.mark.parametrize("gates", [WAP, TAS_WAP], ids=["TAS off", "TAS on"])
def test_integration_gang_schedules_with_partial_workload_aware_preemption(gates: dict[str, bool]) -> None:
    pods = [_bound("very-low-p1", 5), _bound("very-low-p2", 5), _bound("low-p1", 10), _bound("low-p2", 10),
            raw_member("mid-p1", "mid-pg", priority=50), raw_member("mid-p2", "mid-pg", priority=50)]
    sim, result = _one_node_cluster(pods, [pod_group("mid-pg", 2, priority=50)], gates)
    assert {result.outcomes[f"default/mid-p{i}"].node for i in (1, 2)} == {"node"}
    assert victims(result) == ["default/very-low-p1", "default/very-low-p2"]


@pytest.mark.parametrize("gates", [{"GenericWorkload": True, "GangScheduling": True,
                                    "TopologyAwareWorkloadScheduling": True}, TAS_WAP],
                         ids=["does not use pod by pod preemption", "does not use workload preemption"])
def test_integration_tas_gang_with_constraint(gates: dict[str, bool]) -> None:
    pods = [_bound("very-low-p1", 5), _bound("very-low-p2", 5), _bound("low-p1", 10), _bound("low-p2", 10),
            raw_member("mid-p1", "mid-pg", priority=50), raw_member("mid-p2", "mid-pg", priority=50)]
    sim, result = _one_node_cluster(pods, [pod_group("mid-pg", 2, priority=50, topology=ZONE)], gates)
    assert result.preemptions == []
    assert result.outcomes["default/mid-p1"].node is None and result.outcomes["default/mid-p2"].node is None
