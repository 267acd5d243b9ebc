"""Snapshots with pod groups for the `simulate` report specs: two racks of two 8-CPU nodes,
a gang that fits one rack, a gang no rack holds, a basic group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.dumps import node, pod, write_list

RACK = "topology.kubernetes.io/rack"
ALL_GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


def pod_group(name: str, min_count: int | None = None, rack: bool = False, namespace: str = "ml") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if rack:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-pg-{name}", "generation": 1,
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": spec}


def member(name: str, group: str | None, cpu: str, node_name: str = "", namespace: str = "ml") -> dict[str, Any]:
    raw = pod(name, cpu=cpu, memory="1Gi", namespace=namespace, node_name=node_name)
    if group is not None:
        raw["spec"]["schedulingGroup"] = {"podGroupName": group}
    return raw


def racks() -> list[dict[str, Any]]:
    return [node(f"rack-{r}-{i}", cpu="8", memory="32Gi", labels={RACK: f"rack-{r}"}) for r in "ab" for i in (1, 2)]


def gang_cluster(path: Path, extra: list[dict[str, Any]] | None = None) -> Path:
    """``ml/train`` (gang of 4 x 3 CPU in one rack: fits), ``ml/train-xl`` (gang of 5 x 5 CPU
    in one rack: a rack holds two, so none is bound), ``ml/web`` (basic, 3 x 1 CPU)."""
    items = [*racks(), pod_group("train", 4, rack=True), pod_group("train-xl", 5, rack=True), pod_group("web")]
    items += [member(f"train-{i}", "train", "3") for i in range(4)]
    items += [member(f"train-xl-{i}", "train-xl", "5") for i in range(5)]
    items += [member(f"web-{i}", "web", "1") for i in range(3)]
    return write_list(path, items + list(extra or []))
