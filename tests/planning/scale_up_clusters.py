"""Hand-built clusters for the scale-up tests: pools of nodes, DaemonSet pods on them, pending
pods of a few workloads, and the plan ``simulate --scale-up`` makes for them."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.simulated import Simulation, SimulationResult
from kubesched.cluster.snapshot import ClusterSnapshot, snapshot_from_objects
from kubesched.framework.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.planning.scale_up import ScaleUpPlan, ScaleUpSpec, plan_scale_up
from tests.helpers import node, pod

POOL = "node.kubernetes.io/instance-type"
REGISTRY = in_tree_registry()
CONFIG = default_config(REGISTRY)


def pool_node(name: str, pool: str, cpu: str = "4", memory: str = "16Gi", **kwargs: Any) -> dict[str, Any]:
    labels = {POOL: pool, **kwargs.pop("labels", {})}
    return node(name, cpu=cpu, memory=memory, labels=labels, **kwargs)


def owned(raw: dict[str, Any], kind: str, owner: str) -> dict[str, Any]:
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": owner,
                                           "uid": f"uid-{kind}-{owner}", "controller": True}]
    return raw


def daemon_pod(node_name: str, cpu: str = "500m", daemonset: str = "agent") -> dict[str, Any]:
    return owned(pod(f"{daemonset}-{node_name}", namespace="kube-system", cpu=cpu, memory="64Mi", node_name=node_name),
                 "DaemonSet", daemonset)


def replicas(owner: str, count: int, cpu: str = "1", memory: str = "1Gi", start: int = 0,
             **kwargs: Any) -> list[dict[str, Any]]:
    """``count`` pending pods of one ReplicaSet, created a second apart (queue order)."""
    labels = {"app": owner, **kwargs.pop("labels", {})}
    return [owned(pod(f"{owner}-{i}", cpu=cpu, memory=memory, labels=labels, uid=f"uid-{owner}-{i}",
                      created=f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z", **kwargs), "ReplicaSet", owner)
            for i in range(start, start + count)]


def snapshot(*items: dict[str, Any]) -> ClusterSnapshot:
    return snapshot_from_objects([("test.yaml", item) for item in items])


def run(snap: ClusterSnapshot, tie_break: str = "name") -> tuple[Simulation, SimulationResult]:
    sim = Simulation(snap, CONFIG, REGISTRY, tie_break=tie_break, seed=0)
    return sim, sim.run()


def plan(*items: dict[str, Any], spec: ScaleUpSpec | None = None, tie_break: str = "name") -> ScaleUpPlan:
    """The scale-up ``simulate --scale-up`` would report for ``items``."""
    sim, result = run(snapshot(*items), tie_break)
    return plan_scale_up(sim, result, CONFIG, REGISTRY, spec or ScaleUpSpec(), tie_break, 0)


def placed_with(items: list[dict[str, Any]], extra_nodes: list[dict[str, Any]], tie_break: str = "name") -> set[str]:
    """An independent check: a plain simulation of ``items`` plus ``extra_nodes``; the pods it places."""
    _, result = run(snapshot(*items, *extra_nodes), tie_break)
    return {key for key, outcome in result.outcomes.items() if outcome.node}
