"""Small clusters for the planning tests, written as snapshot files the commands read.

Pods and nodes come from ``tests.helpers`` (the same builders the scheduler's own tests
use); a workload is a Deployment around such a pod.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import load_snapshot
from kubesched.planning.inputs import load_config_file, load_registry
from tests.helpers import pod

TOPOLOGY_ZONE = "topology.kubernetes.io/zone"


def write(path: Path, *items: dict[str, Any]) -> str:
    """``items`` as one YAML List (a snapshot, or pod spec files)."""
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(items)}))
    return str(path)


def write_one(path: Path, obj: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def deployment(name: str, template: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    """A Deployment whose pod template is ``template`` (a pod from ``tests.helpers.pod``)."""
    labels = dict(template["metadata"].get("labels") or {"app": name})
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": copy.deepcopy(template["spec"])}},
    }


def copies(template: dict[str, Any], count: int, prefix: str = "copy") -> list[dict[str, Any]]:
    """``count`` pending copies of a pod, created one second apart (queue order is creation order)."""
    out = []
    for i in range(count):
        item = copy.deepcopy(template)
        item["metadata"]["name"] = f"{prefix}-{i}"
        item["metadata"]["uid"] = f"uid-{prefix}-{i}"
        item["metadata"]["creationTimestamp"] = f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z"
        out.append(item)
    return out


def simulate_placements(snapshot_path: str, config: str = "default", seed: int = 0,
                        tie_break: str = "name") -> dict[str, str | None]:
    """The independent path: ``simulate``'s Simulation over a snapshot file, pod -> node."""
    registry = load_registry()
    snapshot = load_snapshot(snapshot_path, frozenset(kind for _, kind in registry.object_kinds()))
    result = Simulation(snapshot, load_config_file(config, registry), registry, tie_break=tie_break, seed=seed).run()
    return {key: outcome.node for key, outcome in result.outcomes.items()}


def small_pod(name: str = "app", cpu: str = "1", memory: str = "1Gi", **kwargs: Any) -> dict[str, Any]:
    return pod(name, cpu=cpu, memory=memory, **kwargs)
