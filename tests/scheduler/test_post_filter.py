"""PostFilter plugins read why each node was filtered out (upstream's NodeToStatusReader)."""

from __future__ import annotations

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework import (
    Code,
    CycleState,
    NodeToStatusReader,
    PluginSpec,
    PostFilterResult,
    Status,
)
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.objects import PodInfo
from kubesched.plugins.registry import in_tree_registry


class Reads:
    name = "Reads"

    def __init__(self) -> None:
        self.seen: list[object] = []

    def post_filter(self, state: CycleState, pod: PodInfo,
                    filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status | None]:
        self.seen.append({
            "small": filtered.status_of("small").message,
            "tainted": filtered.status_of("tainted").code,
            "unresolvable": filtered.node_names_with(Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
            "unschedulable": filtered.node_names_with(Code.UNSCHEDULABLE),
        })
        return None, Status(Code.UNSCHEDULABLE, "nothing to preempt")


def _node(name: str, cpu: str, taints: list[dict[str, str]] | None = None) -> dict[str, object]:
    return {"kind": "Node", "metadata": {"name": name}, "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}


def test_post_filter_gets_each_nodes_rejecting_status():
    plugin = Reads()
    registry = in_tree_registry()
    registry.register(PluginSpec("Reads", lambda args, handle: plugin))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [
        {"schedulerName": "default-scheduler",  # Reads alone at PostFilter: DefaultPreemption off
         "plugins": {"postFilter": {"enabled": [{"name": "Reads"}], "disabled": [{"name": "DefaultPreemption"}]}}}]},
        registry)
    objects = [
        _node("small", "3"),
        {"kind": "Pod", "metadata": {"name": "running", "namespace": "default", "uid": "running"},
         "spec": {"nodeName": "small", "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}}}]}},
        _node("tainted", "8", [{"key": "dedicated", "effect": "NoSchedule"}]),
        {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "p"},
         "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}}}]}},
    ]
    result = Simulation(snapshot_from_objects([("t", o) for o in objects]), config, registry).run()
    assert plugin.seen[0] == {
        "small": "Insufficient cpu",
        "tainted": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "unresolvable": ["tainted"],
        "unschedulable": ["small"],
    }
    assert result.outcomes["default/p"].message.endswith(". no new claims to deallocate, nothing to preempt")
