"""Builders for the pod-group specs: members, PodGroups, and a scheduler whose one profile
holds a scripted plugin (upstream's ``fakePodGroupPlugin``: per-pod Filter, PostFilter and
Permit answers) on one node, ``node1``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster, Simulation, SimulationResult
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import Features
from kubesched.framework.interfaces import NodeToStatusReader, PostFilterResult
from kubesched.framework.podgroups import QueuedPodGroupInfo
from kubesched.framework.queued_pod import QueuedPodInfo
from kubesched.framework.status import Code, Status
from kubesched.objects.nodeinfo import NodeInfo
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.objects.podgroup import PodGroup, parse_pod_group
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.scheduler import Scheduler
from tests.helpers import make_node, pod

__all__ = ["FakePodGroupPlugin", "default_scheduler", "group", "group_info", "member", "raw_group", "raw_member", "scripted_scheduler",
           "simulate", "unschedulable", "wait"]

GATES = {"GenericWorkload": True, "GangScheduling": True}


def member(name: str, group_name: str = "pg", priority: int | None = None, **kwargs: Any) -> PodInfo:
    raw = pod(name, uid=name, priority=priority, **kwargs)
    raw["spec"]["schedulingGroup"] = {"podGroupName": group_name}
    return parse_pod(raw)


def group(name: str = "pg", min_count: int | None = None, topology: str | None = None,
          conditions: list[dict[str, Any]] | None = None, namespace: str = "default", generation: int = 1) -> PodGroup:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    raw: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                           "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                                        "generation": generation},
                           "spec": spec}
    if conditions:
        raw["status"] = {"conditions": conditions}
    return parse_pod_group(raw)


def wait() -> Status:
    return Status(Code.WAIT)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, *reasons)


@dataclass
class FakePodGroupPlugin:
    """Scripted answers by pod name; a pod not listed is refused (as upstream's fake)."""

    filter_status: dict[str, Status | None] = field(default_factory=dict)
    post_filter_status: dict[str, Status | None] = field(default_factory=dict)
    post_filter_result: dict[str, PostFilterResult] = field(default_factory=dict)
    permit_status: dict[str, Status | None] = field(default_factory=dict)
    name: str = "FakePodGroupPlugin"

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return self.filter_status.get(pod.name, unschedulable("default fake filter failure"))

    def post_filter(self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status]:
        if pod.name in self.post_filter_status:
            status = self.post_filter_status[pod.name]
            return self.post_filter_result.get(pod.name), status if status is not None else Status(Code.SUCCESS)
        return self.post_filter_result.get(pod.name, PostFilterResult("")), unschedulable("default fake postfilter failure")

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return self.permit_status.get(pod.name, unschedulable("default fake permit failure")), 0.0


def scripted_scheduler(plugin: FakePodGroupPlugin, gates: dict[str, bool] | None = None,
                       groups: list[PodGroup] = ()) -> tuple[Scheduler, SimulatedCluster]:
    """A scheduler of one profile, ``default-scheduler``: PrioritySort, the scripted plugin
    at Filter, PostFilter and Permit, DefaultBinder; one node ``node1``."""
    registry = in_tree_registry(Features.from_gates(gates if gates is not None else {"GenericWorkload": True}))
    registry.add(plugin.name, lambda args, handle: plugin)
    enabled = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]
    plugins = {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]},
               **{point: {"enabled": [{"name": plugin.name}]} for point in ("filter", "postFilter", "permit")}}
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND,
                           "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]},
                          registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    cluster = SimulatedCluster(clock)
    sched = new_scheduler(config, cluster, clock, registry, tie_break="name")
    sched.on_node_add(make_node("node1"))
    for pg in groups:
        sched.on_pod_group_add(pg)
    return sched, cluster


def group_info(pods: list[PodInfo], name: str = "pg") -> QueuedPodGroupInfo:
    info = QueuedPodGroupInfo("default", name)
    info.set_queued_pods([QueuedPodInfo(pod=p, timestamp=0.0, attempts=1) for p in pods])
    return info


def simulate(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], groups: list[dict[str, Any]],
             gates: dict[str, bool] | None = None, tie_break: str = "name",
             seed: int | None = None) -> tuple[Simulation, SimulationResult]:
    """Run ``simulate``'s loop on raw objects (pods in queue order) with the default profile."""
    features = Features.from_gates(gates if gates is not None else GATES)
    registry = in_tree_registry(features)
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    objects = [("test", {"kind": "Node", **n}) for n in nodes] + [("test", g) for g in groups]
    objects += [("test", {"kind": "Pod", **p}) for p in pods]
    snapshot = snapshot_from_objects(objects, plugin_kinds=frozenset(k for _, k in registry.object_kinds()))
    sim = Simulation(snapshot, config, registry, tie_break=tie_break, seed=seed, on_attempt=lambda attempt: None)
    return sim, sim.run()


def raw_member(name: str, group_name: str | None, cpu: str = "1", priority: int | None = None,
               **kwargs: Any) -> dict[str, Any]:
    raw = pod(name, uid=name, cpu=cpu, priority=priority, **kwargs)
    if group_name is not None:
        raw["spec"]["schedulingGroup"] = {"podGroupName": group_name}
    return raw


def raw_group(name: str, min_count: int | None = None, topology: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "generation": 1}, "spec": spec}


def default_scheduler(gates: dict[str, bool] | None = None) -> tuple[Scheduler, SimulatedCluster]:
    """A scheduler with the default profile for these gates (GenericWorkload and
    GangScheduling unless given) and one 4-cpu node ``node1``."""
    registry = in_tree_registry(Features.from_gates(gates if gates is not None else GATES))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    cluster = SimulatedCluster(clock)
    sched = new_scheduler(config, cluster, clock, registry)
    sched.on_node_add(make_node("node1"))
    return sched, cluster
