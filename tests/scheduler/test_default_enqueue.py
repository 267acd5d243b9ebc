"""A plugin that rejects pods but declares no events gets upstream's default: any cluster
event may help the pods it rejected (``defaultEnqueueExtension``)."""

from __future__ import annotations

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework import Code, CycleState, PluginSpec, Status
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.objects import NodeInfo, PodInfo
from kubesched.objects.node import parse_node
from kubesched.plugins.registry import in_tree_registry
from kubesched.queue.scheduling_queue import BACKOFF, UNSCHEDULABLE


class OnlyNodeB:
    name = "OnlyNodeB"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None if node.name == "b" else Status(Code.UNSCHEDULABLE, "not b")


def _node(name: str) -> dict:
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "5"}}}


def test_a_plugin_without_events_has_its_pods_retried_on_any_event():
    registry = in_tree_registry()
    registry.register(PluginSpec("OnlyNodeB", lambda args, handle: OnlyNodeB()))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "OnlyNodeB"}]}}}]}, registry)
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "p"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    sim = Simulation(snapshot_from_objects([("t", _node("a")), ("t", pod)]), config, registry)
    sim.run()
    queue = sim.scheduler.queue
    assert queue.where("p") == UNSCHEDULABLE
    sim.scheduler.on_node_add(parse_node(_node("b")))
    assert queue.where("p") == BACKOFF
