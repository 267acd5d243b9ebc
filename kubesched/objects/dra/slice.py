"""``ResourceSlice`` (resource.k8s.io/v1): one part of a driver's pool of devices.

Validated as the API server validates it: one node selection field, devices or shared
counters but not both, unique device and counter-set names. A slice the API server would
reject raises ``ObjectError`` naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ObjectError
from .device import CounterSet, Device, DraNodeSelector, parse_counter_set, parse_device, parse_dra_node_selector
from .fields import dns_subdomain, list_of, mapping, optional_bool, optional_int, optional_string, string
from .meta import ObjectMeta, parse_meta

__all__ = ["ResourcePool", "ResourceSlice", "parse_resource_slice"]


@dataclass(slots=True, frozen=True)
class ResourcePool:
    name: str
    generation: int
    resource_slice_count: int


@dataclass(slots=True, frozen=True, eq=False)
class ResourceSlice:
    """A parsed slice. ``node_name`` is None unless set (upstream's ``*string``)."""

    meta: ObjectMeta
    driver: str
    pool: ResourcePool
    node_name: str | None
    node_selector: DraNodeSelector | None
    all_nodes: bool
    per_device_node_selection: bool
    devices: tuple[Device, ...]
    shared_counters: tuple[CounterSet, ...]

    @property
    def name(self) -> str:
        return self.meta.name


def parse_resource_slice(raw: Any) -> ResourceSlice:
    """One ``ResourceSlice`` document; raises ``ObjectError`` for what the API server rejects."""
    doc = mapping(raw, "")
    meta = parse_meta(doc.get("metadata"), namespaced=False)
    spec = mapping(doc.get("spec"), "spec")
    driver = dns_subdomain(string(spec.get("driver"), "spec.driver"), "spec.driver", 63)
    pool_raw = mapping(spec.get("pool"), "spec.pool")
    pool = ResourcePool(
        string(pool_raw.get("name"), "spec.pool.name"),
        optional_int(pool_raw.get("generation"), "spec.pool.generation") or 0,
        optional_int(pool_raw.get("resourceSliceCount"), "spec.pool.resourceSliceCount") or 0,
    )
    if pool.generation < 0:
        raise ObjectError("spec.pool.generation", "must be greater than or equal to 0")
    if pool.resource_slice_count <= 0:
        raise ObjectError("spec.pool.resourceSliceCount", "must be greater than zero")
    node_name = optional_string(spec.get("nodeName"), "spec.nodeName")
    if node_name == "":
        raise ObjectError("spec.nodeName", "must be either unset or set to a non-empty string")
    node_selector = parse_dra_node_selector(spec["nodeSelector"], "spec.nodeSelector") if spec.get("nodeSelector") is not None else None
    if node_selector is not None and len(node_selector.compiled.terms) != 1:
        raise ObjectError("spec.nodeSelector.nodeSelectorTerms", "must have exactly one node selector term")
    all_nodes = optional_bool(spec.get("allNodes"), "spec.allNodes")
    if all_nodes is False:
        raise ObjectError("spec.allNodes", "must be either unset or set to true")
    per_device = optional_bool(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection")
    if per_device is False:
        raise ObjectError("spec.perDeviceNodeSelection", "must be either unset or set to true")
    chosen = [n for n, v in (("nodeName", node_name), ("nodeSelector", node_selector), ("allNodes", all_nodes), ("perDeviceNodeSelection", per_device)) if v]
    if not chosen:
        raise ObjectError("spec", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")
    if len(chosen) > 1:
        raise ObjectError("spec", f"exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set ({', '.join(chosen)})")
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        raise ObjectError("spec", "only one of `sharedCounters` or `devices` is allowed")
    devices = tuple(parse_device(d, f"spec.devices[{i}]", bool(per_device)) for i, d in enumerate(list_of(spec.get("devices"), "spec.devices")))
    seen: set[str] = set()
    for i, device in enumerate(devices):
        if device.name in seen:
            raise ObjectError(f"spec.devices[{i}].name", f'Duplicate value: "{device.name}"')
        seen.add(device.name)
    counters = tuple(parse_counter_set(c, f"spec.sharedCounters[{i}]") for i, c in enumerate(list_of(spec.get("sharedCounters"), "spec.sharedCounters")))
    seen_sets: set[str] = set()
    for i, counter_set in enumerate(counters):
        if counter_set.name in seen_sets:
            raise ObjectError(f"spec.sharedCounters[{i}].name", f'Duplicate value: "{counter_set.name}"')
        seen_sets.add(counter_set.name)
    return ResourceSlice(
        meta=meta,
        driver=driver,
        pool=pool,
        node_name=node_name,
        node_selector=node_selector,
        all_nodes=bool(all_nodes),
        per_device_node_selection=bool(per_device),
        devices=devices,
        shared_counters=counters,
    )
