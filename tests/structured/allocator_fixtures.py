"""Builders for allocator tests, named after upstream's allocator_testing.go helpers: they
write resource.k8s.io/v1 JSON, parsed through the real parsers."""

from __future__ import annotations

from typing import Any

from kubesched.objects.dra import DeviceClass, ResourceClaim, ResourceSlice, parse_device_class, parse_resource_claim, parse_resource_slice
from kubesched.objects.node import Node, parse_node

DRIVER_A = "driver-a"
DRIVER_B = "driver-b"
POOL_1 = "pool-1"
POOL_2 = "pool-2"
NODE_1 = "node-1"
NODE_2 = "node-2"
REGION_1 = "region-1"
CLASS_A = "class-a"
CLASS_B = "class-b"

INT_ATTRIBUTE = f"{DRIVER_A}/numa"
VERSION_ATTRIBUTE = f"{DRIVER_A}/driverVersion"
STRING_ATTRIBUTE = f"{DRIVER_A}/stringAttribute"
BOOL_ATTRIBUTE = f"{DRIVER_A}/boolAttribute"

TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value", "effect": "NoExecute"}
TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TOLERATION_NO_EXECUTE = {"key": "taint-key", "operator": "Equal", "value": "taint-value", "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE = {"key": "taint-key", "operator": "Equal", "value": "taint-value", "effect": "NoSchedule"}


def node(name: str = NODE_1, region: str = REGION_1) -> Node:
    return parse_node({"metadata": {"name": name, "labels": {"region": region}}, "status": {"allocatable": {"cpu": "1"}}})


def device_class(name: str, driver: str, **spec: Any) -> DeviceClass:
    return parse_device_class({"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}], **spec}})


def device(name: str, capacity: dict[str, Any] | None = None, attributes: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, **fields}
    if capacity:
        out["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in capacity.items()}
    if attributes:
        out["attributes"] = attributes
    return out


def resource_slice(name: str, node_name: str | None, pool: str, driver: str, *devices: dict[str, Any], generation: int = 1, count: int = 1, **spec: Any) -> ResourceSlice:
    doc: dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count}, **spec}
    if node_name is not None:
        doc["nodeName"] = node_name
    if devices:
        doc["devices"] = list(devices)
    return parse_resource_slice({"metadata": {"name": name}, "spec": doc})


def counter_slice(name: str, node_name: str, pool: str, driver: str, counter_sets: dict[str, dict[str, str]], generation: int = 1, count: int = 2) -> ResourceSlice:
    sets = [{"name": s, "counters": {c: {"value": v} for c, v in counters.items()}} for s, counters in counter_sets.items()]
    return resource_slice(name, node_name, pool, driver, generation=generation, count=count, sharedCounters=sets)


def consumes(counter_set: str, **counters: str) -> dict[str, Any]:
    return {"consumesCounters": [{"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}]}


def request(name: str, class_name: str, count: int = 1, *selectors: str, **exactly: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count, **exactly}
    if selectors:
        spec["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": spec}


def all_request(name: str, class_name: str, **exactly: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "All", **exactly}}


def sub_request(name: str, class_name: str, count: int = 1, *selectors: str, **fields: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "deviceClassName": class_name, "allocationMode": "ExactCount", "count": count, **fields}
    if selectors:
        spec["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return spec


def prioritized(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str, *requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None, config: list[dict[str, Any]] | None = None, status: dict[str, Any] | None = None) -> ResourceClaim:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    doc: dict[str, Any] = {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": {"devices": devices}}
    if status:
        doc["status"] = status
    return parse_resource_claim(doc)
