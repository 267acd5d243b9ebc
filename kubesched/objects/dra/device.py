"""Devices as a ResourceSlice publishes them (``resource.k8s.io/v1`` ``Device``).

Parsed once per slice into records the allocator reads on its hot path: attributes keyed by
their name as published (qualified or not), capacities and counters as exact quantities,
taints, and the per-device node selection used with ``perDeviceNodeSelection``.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

from ..errors import ObjectError
from ..selectors import NodeSelector, parse_node_selector
from .fields import (
    JsonObject,
    dns_label,
    list_of,
    mapping,
    optional_bool,
    optional_int,
    optional_mapping,
    optional_string,
    qualified_name,
    quantity,
    string,
    string_list,
)
from .quantity import Quantity

__all__ = [
    "DeviceAttribute",
    "CapacityRequestPolicyRange",
    "CapacityRequestPolicy",
    "DeviceCapacity",
    "DeviceTaint",
    "DeviceCounterConsumption",
    "CounterSet",
    "DraNodeSelector",
    "Device",
    "parse_device",
    "parse_counter_set",
    "parse_dra_node_selector",
    "DEVICE_TAINT_EFFECTS",
]

DEVICE_TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")

# The API server's check of version attributes (semver.org 2.0.0).
_NUMERIC = r"(0|[1-9][0-9]*)"
_SEMVER = re.compile(
    rf"^{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}"
    r"(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$"
)

INT = "int"
BOOL = "bool"
STRING = "string"
VERSION = "version"


@dataclass(slots=True, frozen=True)
class DeviceAttribute:
    """One typed attribute value. ``kind`` is ``int``, ``bool``, ``string`` or ``version``;
    two attributes are equal only when kind and value are (upstream compares the set field)."""

    kind: str
    value: int | bool | str


@dataclass(slots=True, frozen=True)
class CapacityRequestPolicyRange:
    min: Quantity | None
    max: Quantity | None
    step: Quantity | None


@dataclass(slots=True, frozen=True)
class CapacityRequestPolicy:
    default: Quantity | None
    valid_values: tuple[Quantity, ...]
    valid_range: CapacityRequestPolicyRange | None


@dataclass(slots=True, frozen=True)
class DeviceCapacity:
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


@dataclass(slots=True, frozen=True)
class DeviceTaint:
    key: str
    value: str
    effect: str
    time_added: str | None = None


@dataclass(slots=True, frozen=True, eq=False)
class DeviceCounterConsumption:
    counter_set: str
    counters: Mapping[str, Quantity]


@dataclass(slots=True, frozen=True, eq=False)
class CounterSet:
    name: str
    counters: Mapping[str, Quantity]


@dataclass(slots=True, frozen=True, eq=False)
class DraNodeSelector:
    """A ``v1.NodeSelector`` in a DRA object: compiled for matching, and the JSON as written
    (an allocation result's node selector copies its requirements)."""

    compiled: NodeSelector
    raw: JsonObject


@dataclass(slots=True, frozen=True, eq=False)
class Device:
    """One device of a slice. Compared by identity: the allocator caches per device."""

    name: str
    attributes: Mapping[str, DeviceAttribute]
    capacity: Mapping[str, DeviceCapacity]
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str | None = None
    node_selector: DraNodeSelector | None = None
    all_nodes: bool = False
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool = False
    binding_conditions: tuple[str, ...] | None = None
    binding_failure_conditions: tuple[str, ...] | None = None
    allow_multiple_allocations: bool | None = None
    # What a CEL selector sees of the device besides its driver (attributes, capacity values,
    # allowMultipleAllocations), hashable: identical devices on many nodes share selector results.
    selector_key: tuple[object, ...] = ()


def parse_dra_node_selector(raw: Any, path: str) -> DraNodeSelector:
    compiled = parse_node_selector(raw, path)
    return DraNodeSelector(compiled, copy.deepcopy(dict(raw)))


def _attribute(raw: Any, path: str) -> DeviceAttribute:
    item = mapping(raw, path)
    if len(item) == 1:  # the usual shape: one typed value
        ((kind, value),) = item.items()
        if kind == "string" and type(value) is str:
            return DeviceAttribute(STRING, value)
        if kind == "int" and type(value) is int:
            return DeviceAttribute(INT, value)
        if kind == "bool" and type(value) is bool:
            return DeviceAttribute(BOOL, value)
    found: list[DeviceAttribute] = []
    if item.get("int") is not None:
        number = optional_int(item["int"], f"{path}.int")
        assert number is not None
        found.append(DeviceAttribute(INT, number))
    if item.get("bool") is not None:
        flag = optional_bool(item["bool"], f"{path}.bool")
        assert flag is not None
        found.append(DeviceAttribute(BOOL, flag))
    if item.get("string") is not None:
        found.append(DeviceAttribute(STRING, string(item["string"], f"{path}.string", required=False)))
    if item.get("version") is not None:
        version = string(item["version"], f"{path}.version")
        if _SEMVER.match(version) is None:
            raise ObjectError(f"{path}.version", "must be a string compatible with semver.org spec 2.0.0")
        found.append(DeviceAttribute(VERSION, version))
    if len(found) != 1:
        raise ObjectError(path, "exactly one value must be specified")
    return found[0]


def _policy(raw: Any, path: str) -> CapacityRequestPolicy | None:
    if raw is None:
        return None
    item = mapping(raw, path)
    default = quantity(item["default"], f"{path}.default") if item.get("default") is not None else None
    values = tuple(quantity(v, f"{path}.validValues[{i}]") for i, v in enumerate(list_of(item.get("validValues"), f"{path}.validValues")))
    valid_range = None
    if item.get("validRange") is not None:
        rng = mapping(item["validRange"], f"{path}.validRange")

        def bound(name: str) -> Quantity | None:
            return quantity(rng[name], f"{path}.validRange.{name}") if rng.get(name) is not None else None

        valid_range = CapacityRequestPolicyRange(bound("min"), bound("max"), bound("step"))
        if valid_range.min is None:
            raise ObjectError(f"{path}.validRange.min", "Required value")
        if valid_range.step is not None and valid_range.step.value <= 0:
            raise ObjectError(f"{path}.validRange.step", "must be greater than zero")
    if values and valid_range is not None:
        raise ObjectError(path, "exactly one policy can be specified, cannot specify `validValues` and `validRange` at the same time")
    return CapacityRequestPolicy(default, values, valid_range)


def _counters(raw: Any, path: str) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, counter in optional_mapping(raw, path).items():
        counter_map = mapping(counter, f"{path}[{name}]")
        out[str(name)] = quantity(counter_map.get("value"), f"{path}[{name}].value")
    return out


def parse_counter_set(raw: Any, path: str) -> CounterSet:
    item = mapping(raw, path)
    return CounterSet(string(item.get("name"), f"{path}.name"), _counters(item.get("counters"), f"{path}.counters"))


def parse_device_taint(raw: Any, path: str) -> DeviceTaint:
    item = mapping(raw, path)
    effect = string(item.get("effect"), f"{path}.effect")
    if effect not in DEVICE_TAINT_EFFECTS:
        raise ObjectError(f"{path}.effect", f'Unsupported value: "{effect}": supported values: "NoExecute", "NoSchedule", "None"')
    return DeviceTaint(
        string(item.get("key"), f"{path}.key"),
        string(item.get("value"), f"{path}.value", required=False),
        effect,
        optional_string(item.get("timeAdded"), f"{path}.timeAdded"),
    )


def parse_device(raw: Any, path: str, per_device_node_selection: bool) -> Device:
    item = mapping(raw, path)
    name = dns_label(string(item.get("name"), f"{path}.name"), f"{path}.name")
    attributes = {
        qualified_name(str(key), f"{path}.attributes[{key}]"): _attribute(value, f"{path}.attributes[{key}]")
        for key, value in optional_mapping(item.get("attributes"), f"{path}.attributes").items()
    }
    capacity: dict[str, DeviceCapacity] = {}
    for key, value in optional_mapping(item.get("capacity"), f"{path}.capacity").items():
        qualified_name(str(key), f"{path}.capacity[{key}]")
        cap = mapping(value, f"{path}.capacity[{key}]")
        capacity[str(key)] = DeviceCapacity(
            quantity(cap.get("value"), f"{path}.capacity[{key}].value"),
            _policy(cap.get("requestPolicy"), f"{path}.capacity[{key}].requestPolicy"),
        )
    consumes = tuple(
        DeviceCounterConsumption(
            string(mapping(c, f"{path}.consumesCounters[{i}]").get("counterSet"), f"{path}.consumesCounters[{i}].counterSet"),
            _counters(c.get("counters"), f"{path}.consumesCounters[{i}].counters"),
        )
        for i, c in enumerate(list_of(item.get("consumesCounters"), f"{path}.consumesCounters"))
    )
    node_name = optional_string(item.get("nodeName"), f"{path}.nodeName") or None
    node_selector = parse_dra_node_selector(item["nodeSelector"], f"{path}.nodeSelector") if item.get("nodeSelector") is not None else None
    all_nodes = bool(optional_bool(item.get("allNodes"), f"{path}.allNodes"))
    chosen = [n for n, v in (("nodeName", node_name), ("nodeSelector", node_selector), ("allNodes", all_nodes)) if v]
    if per_device_node_selection and len(chosen) != 1:
        raise ObjectError(path, "exactly one of `nodeName`, `nodeSelector`, `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    if not per_device_node_selection and chosen:
        raise ObjectError(f"{path}.{chosen[0]}", "must not be specified when `perDeviceNodeSelection` is not set to true in the ResourceSlice spec")
    taints = tuple(parse_device_taint(t, f"{path}.taints[{i}]") for i, t in enumerate(list_of(item.get("taints"), f"{path}.taints")))
    conditions = string_list(item.get("bindingConditions"), f"{path}.bindingConditions")
    failure_conditions = string_list(item.get("bindingFailureConditions"), f"{path}.bindingFailureConditions")
    if conditions and not failure_conditions:
        raise ObjectError(f"{path}.bindingFailureConditions", "bindingFailureConditions are required to use bindingConditions")
    allow_multi = optional_bool(item.get("allowMultipleAllocations"), f"{path}.allowMultipleAllocations")
    return Device(
        name=name,
        attributes=attributes,
        capacity=capacity,
        consumes_counters=consumes,
        node_name=node_name,
        node_selector=node_selector,
        all_nodes=all_nodes,
        taints=taints,
        binds_to_node=bool(optional_bool(item.get("bindsToNode"), f"{path}.bindsToNode")),
        binding_conditions=conditions or None,
        binding_failure_conditions=failure_conditions or None,
        allow_multiple_allocations=allow_multi,
        selector_key=(
            allow_multi,
            tuple(sorted((k, a.kind, a.value) for k, a in attributes.items())),
            tuple(sorted((k, c.value.value) for k, c in capacity.items())),
        ),
    )
