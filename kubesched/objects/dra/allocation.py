"""Allocation results (``ResourceClaim.status.allocation``): parsed from claims that are
already allocated, produced by the allocator, and written back as JSON."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

from ..errors import ObjectError
from .device import DraNodeSelector, parse_dra_node_selector
from .fields import JsonObject, list_of, mapping, optional_bool, optional_mapping, optional_string, quantity, string, string_list
from .quantity import Quantity
from .request import DeviceToleration, OpaqueDeviceConfiguration, _tolerations, parse_opaque

__all__ = [
    "FROM_CLASS",
    "FROM_CLAIM",
    "DeviceRequestAllocationResult",
    "DeviceAllocationConfiguration",
    "AllocationResult",
    "parse_allocation",
    "allocation_to_json",
]

FROM_CLASS = "FromClass"
FROM_CLAIM = "FromClaim"


@dataclass(slots=True, frozen=True, eq=False)
class DeviceRequestAllocationResult:
    """One allocated device. ``request`` is ``<request>`` or ``<request>/<subrequest>``."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] | None = None
    binding_failure_conditions: tuple[str, ...] | None = None
    share_id: str | None = None
    consumed_capacity: Mapping[str, Quantity] | None = None


@dataclass(slots=True, frozen=True, eq=False)
class DeviceAllocationConfiguration:
    source: str
    requests: tuple[str, ...]
    opaque: OpaqueDeviceConfiguration | None


@dataclass(slots=True, frozen=True, eq=False)
class AllocationResult:
    devices: tuple[DeviceRequestAllocationResult, ...]
    config: tuple[DeviceAllocationConfiguration, ...] = ()
    node_selector: DraNodeSelector | None = None
    allocation_timestamp: str | None = None


def _device_result(raw: Any, path: str) -> DeviceRequestAllocationResult:
    item = mapping(raw, path)
    consumed = None
    if item.get("consumedCapacity") is not None:
        consumed = {str(k): quantity(v, f"{path}.consumedCapacity[{k}]") for k, v in optional_mapping(item["consumedCapacity"], f"{path}.consumedCapacity").items()}
    conditions = string_list(item.get("bindingConditions"), f"{path}.bindingConditions")
    failures = string_list(item.get("bindingFailureConditions"), f"{path}.bindingFailureConditions")
    return DeviceRequestAllocationResult(
        request=string(item.get("request"), f"{path}.request"),
        driver=string(item.get("driver"), f"{path}.driver"),
        pool=string(item.get("pool"), f"{path}.pool"),
        device=string(item.get("device"), f"{path}.device"),
        admin_access=optional_bool(item.get("adminAccess"), f"{path}.adminAccess"),
        tolerations=_tolerations(item.get("tolerations"), f"{path}.tolerations"),
        binding_conditions=conditions or None,
        binding_failure_conditions=failures or None,
        share_id=optional_string(item.get("shareID"), f"{path}.shareID") or None,
        consumed_capacity=consumed,
    )


def parse_allocation(raw: Any, path: str) -> AllocationResult:
    item = mapping(raw, path)
    devices = optional_mapping(item.get("devices"), f"{path}.devices")
    results = tuple(_device_result(r, f"{path}.devices.results[{i}]") for i, r in enumerate(list_of(devices.get("results"), f"{path}.devices.results")))
    configs = []
    for i, c in enumerate(list_of(devices.get("config"), f"{path}.devices.config")):
        cfg = mapping(c, f"{path}.devices.config[{i}]")
        source = string(cfg.get("source"), f"{path}.devices.config[{i}].source")
        if source not in (FROM_CLASS, FROM_CLAIM):
            raise ObjectError(f"{path}.devices.config[{i}].source", f'Unsupported value: "{source}": supported values: "FromClaim", "FromClass"')
        configs.append(
            DeviceAllocationConfiguration(
                source,
                string_list(cfg.get("requests"), f"{path}.devices.config[{i}].requests"),
                parse_opaque(cfg.get("opaque"), f"{path}.devices.config[{i}].opaque"),
            )
        )
    selector = parse_dra_node_selector(item["nodeSelector"], f"{path}.nodeSelector") if item.get("nodeSelector") is not None else None
    return AllocationResult(results, tuple(configs), selector, optional_string(item.get("allocationTimestamp"), f"{path}.allocationTimestamp"))


def _toleration_json(t: DeviceToleration) -> JsonObject:
    out: JsonObject = {}
    if t.key:
        out["key"] = t.key
    out["operator"] = t.operator
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def _device_result_json(r: DeviceRequestAllocationResult) -> JsonObject:
    out: JsonObject = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
    if r.admin_access is not None:
        out["adminAccess"] = r.admin_access
    if r.tolerations:
        out["tolerations"] = [_toleration_json(t) for t in r.tolerations]
    if r.binding_conditions:
        out["bindingConditions"] = list(r.binding_conditions)
    if r.binding_failure_conditions:
        out["bindingFailureConditions"] = list(r.binding_failure_conditions)
    if r.share_id is not None:
        out["shareID"] = r.share_id
    if r.consumed_capacity is not None:
        out["consumedCapacity"] = {k: v.text for k, v in r.consumed_capacity.items()}
    return out


def allocation_to_json(result: AllocationResult) -> JsonObject:
    """``status.allocation`` as the API server serializes it (empty fields omitted)."""
    devices: JsonObject = {"results": [_device_result_json(r) for r in result.devices]}
    if result.config:
        configs: list[object] = []
        for c in result.config:
            entry: JsonObject = {"source": c.source}
            if c.requests:
                entry["requests"] = list(c.requests)
            if c.opaque is not None:
                entry["opaque"] = {"driver": c.opaque.driver, "parameters": copy.deepcopy(c.opaque.parameters)}
            configs.append(entry)
        devices["config"] = configs
    out: JsonObject = {"devices": devices}
    if result.node_selector is not None:
        out["nodeSelector"] = copy.deepcopy(result.node_selector.raw)
    if result.allocation_timestamp is not None:
        out["allocationTimestamp"] = result.allocation_timestamp
    return out
