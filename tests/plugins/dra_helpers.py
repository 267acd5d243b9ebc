"""Small DRA clusters for DynamicResources' tests: nodes with a driver's devices, classes, claims, pods."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

DRIVER = "gpu.example.com"
API = "resource.k8s.io/v1"
CONFIG = {"apiVersion": API_VERSION, "kind": KIND, "percentageOfNodesToScore": 100,
          "profiles": [{"schedulerName": "default-scheduler", "plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}]}


def node(name: str, **allocatable: str) -> dict[str, Any]:
    alloc = {"cpu": "8", "memory": "32Gi", "pods": "110", **allocatable}
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": alloc, "capacity": alloc}}


def gpu_slice(node_name: str, devices: int, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node_name, "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", **extra} for i in range(devices)]}}


def gpu_class(name: str = "gpu", extended: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def request(name: str = "gpu", device_class: str = "gpu", count: int = 1) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": device_class, "count": count}}


def claim(name: str, *requests: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": list(requests) or [request()]}}}


def template(name: str, *requests: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": list(requests) or [request()]}}}}


def pod(name: str, *, claims: dict[str, str] | None = None, templates: dict[str, str] | None = None,
        requests: dict[str, str] | None = None, node_name: str | None = None) -> dict[str, Any]:
    entries = [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    entries += [{"name": k, "resourceClaimTemplateName": v} for k, v in (templates or {}).items()]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m", **(requests or {})}}}]}
    if entries:
        spec["resourceClaims"] = entries
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                                        "creationTimestamp": f"2024-01-01T00:00:{len(name):02d}Z"}, "spec": spec}


def simulate(*objects: dict[str, Any], config: dict[str, Any] | None = None) -> Simulation:
    registry = in_tree_registry()
    kinds = frozenset(k for _, k in registry.object_kinds())
    snapshot = snapshot_from_objects([("test", o) for o in objects], plugin_kinds=kinds)
    sim = Simulation(snapshot, parse_config(config or CONFIG, registry, UPSTREAM_ONLY), registry, tie_break="name")
    sim.run()
    return sim


def stored_claim(sim: Simulation, name: str, namespace: str = "default") -> dict[str, Any] | None:
    store = sim.scheduler.hub.object_stores.find(API, "ResourceClaim")
    found = store.get(namespace, name) if store is not None else None
    return dict(found) if found is not None else None
