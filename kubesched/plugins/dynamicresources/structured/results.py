"""The parts of an allocation result besides the devices: configs and the node selector."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from kubesched.objects.dra import (
    FROM_CLAIM,
    FROM_CLASS,
    Device,
    DeviceAllocationConfiguration,
    DeviceClass,
    DraNodeSelector,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.objects.selectors import parse_node_selector

from .types import AllocationError

__all__ = ["build_configs", "build_node_selector"]


def build_configs(
    claim: ResourceClaim,
    chosen: Sequence[tuple[str, DeviceClass | None]],
    selected_subs: Mapping[str, str],
) -> tuple[DeviceAllocationConfiguration, ...]:
    """Class configs first (one entry per class config, naming every request that used the
    class), then the claim's configs for the allocated requests, as upstream lists them (a
    claim config naming several requests is listed once per request it names)."""
    out: list[DeviceAllocationConfiguration] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for request_name, device_class in chosen:
        if device_class is None:
            continue
        found = class_ranges.get(device_class.name)
        if found is not None:
            for i in range(*found):
                entry = out[i]
                out[i] = DeviceAllocationConfiguration(entry.source, (*entry.requests, request_name), entry.opaque)
            continue
        start = len(out)
        for config in device_class.config:
            out.append(DeviceAllocationConfiguration(FROM_CLASS, (request_name,), config.opaque))
        class_ranges[device_class.name] = (start, len(out))
    for config in claim.spec.config:
        if not config.requests:
            out.append(DeviceAllocationConfiguration(FROM_CLAIM, config.requests, config.opaque))
            continue
        for request in claim.spec.requests:
            if request.name in config.requests:
                out.append(DeviceAllocationConfiguration(FROM_CLAIM, config.requests, config.opaque))
                continue
            sub = selected_subs.get(request.name)
            if sub is not None and f"{request.name}/{sub}" in config.requests:
                out.append(DeviceAllocationConfiguration(FROM_CLAIM, config.requests, config.opaque))
    return tuple(out)


def _requirement_key(requirement: object) -> tuple[str, str, frozenset[str]]:
    if not isinstance(requirement, Mapping):
        return ("", "", frozenset())
    values = requirement.get("values") or []
    return (str(requirement.get("key", "")), str(requirement.get("operator", "")), frozenset(str(v) for v in values) if isinstance(values, list) else frozenset())


def build_node_selector(devices: Sequence[tuple[ResourceSlice, Device]], node_name: str) -> DraNodeSelector | None:
    """``createNodeSelector``: pinned to the node when a device is node-local (or binds to the
    node); otherwise the union of the requirements of the pools' selectors; None for devices
    available on all nodes."""
    expressions: list[object] = []
    fields: list[object] = []
    for slice_, device in devices:
        if slice_.per_device_node_selection:
            name, selector = device.node_name, device.node_selector
        else:
            name, selector = slice_.node_name, slice_.node_selector
        if name is not None or device.binds_to_node:
            raw = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
            return DraNodeSelector(parse_node_selector(raw, "nodeSelector"), dict(raw))
        if selector is None:
            continue
        terms = selector.raw.get("nodeSelectorTerms")
        if not isinstance(terms, list) or not terms:
            continue
        if len(terms) > 1:
            raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        term = terms[0] if isinstance(terms[0], Mapping) else {}
        for source, into in ((term.get("matchFields"), fields), (term.get("matchExpressions"), expressions)):
            for requirement in source or []:
                if _requirement_key(requirement) not in {_requirement_key(r) for r in into}:
                    into.append(copy.deepcopy(requirement))
    if not expressions and not fields:
        return None
    merged: dict[str, object] = {}
    if expressions:
        merged["matchExpressions"] = expressions
    if fields:
        merged["matchFields"] = fields
    raw_selector: dict[str, object] = {"nodeSelectorTerms": [merged]}
    return DraNodeSelector(parse_node_selector(raw_selector, "nodeSelector"), raw_selector)
