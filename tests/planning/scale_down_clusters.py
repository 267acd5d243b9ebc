"""Hand-built clusters for the scale-down tests: nodes and bound pods as kubectl writes them,
compiled with their documents kept (scale-down reads pods' volumes from them)."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.snapshot import ClusterSnapshot, snapshot_from_objects
from kubesched.framework.config import default_config
from kubesched.planning.scale_down import ScaleDownOptions, ScaleDownResult, plan_scale_down
from kubesched.plugins.registry import in_tree_registry
from tests.cli.dumps import node, other, pod

__all__ = ["node", "pod", "snapshot", "plan", "daemonset_pod", "mirror_pod", "pdb", "annotated", "kept_reasons"]

REGISTRY = in_tree_registry()
KINDS = frozenset(kind for _, kind in REGISTRY.object_kinds())


def snapshot(*items: dict[str, Any]) -> ClusterSnapshot:
    return snapshot_from_objects([("cluster.yaml", item) for item in items], plugin_kinds=KINDS, keep_raw_objects=True)


def plan(*items: dict[str, Any], options: ScaleDownOptions = ScaleDownOptions()) -> ScaleDownResult:
    return plan_scale_down(snapshot(*items), default_config(REGISTRY), REGISTRY, options, tie_break="name")


def daemonset_pod(name: str, node_name: str, cpu: str = "100m") -> dict[str, Any]:
    p = pod(name, cpu=cpu, node_name=node_name)
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u-ds",
                                         "controller": True}]
    return p


def mirror_pod(name: str, node_name: str, cpu: str = "100m") -> dict[str, Any]:
    p = pod(name, cpu=cpu, node_name=node_name, namespace="kube-system")
    p["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    p["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": "u-n",
                                         "controller": True}]
    return p


def pdb(name: str, app: str, namespace: str = "default", **spec: object) -> dict[str, Any]:
    return other("PodDisruptionBudget", name, api_version="policy/v1", namespace=namespace,
                 spec={"selector": {"matchLabels": {"app": app}}, **spec})


def annotated(obj: dict[str, Any], **annotations: str) -> dict[str, Any]:
    obj["metadata"].setdefault("annotations", {}).update(annotations)
    return obj


def kept_reasons(result: ScaleDownResult) -> dict[str, str]:
    return {k.node: k.message for k in result.kept}
