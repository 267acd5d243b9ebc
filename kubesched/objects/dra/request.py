"""What a ResourceClaim asks for: device requests, subrequests, constraints and configs.

``RequestSpec`` is upstream's ``requestAccessor``: the same fields for an ``exactly`` request
and for each ``firstAvailable`` subrequest, so the allocator handles both alike. Parsing applies
the API server's defaulting (``allocationMode: ExactCount`` with ``count: 1``, toleration
operator ``Equal``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

from ..errors import ObjectError
from .device import DEVICE_TAINT_EFFECTS, DeviceTaint
from .fields import list_of, mapping, optional_bool, optional_int, optional_mapping, quantity, string, string_list
from .quantity import Quantity

__all__ = [
    "EXACT_COUNT",
    "ALL",
    "DeviceSelector",
    "DeviceToleration",
    "RequestSpec",
    "DeviceRequest",
    "DeviceConstraint",
    "OpaqueDeviceConfiguration",
    "DeviceConfiguration",
    "parse_selectors",
    "parse_opaque",
    "parse_requests",
    "parse_constraints",
    "parse_claim_configs",
]

EXACT_COUNT = "ExactCount"
ALL = "All"


@dataclass(slots=True, frozen=True)
class DeviceSelector:
    """A CEL selector (the only selector type in v1)."""

    expression: str


@dataclass(slots=True, frozen=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: DeviceTaint) -> bool:
        """``resourceclaim.ToleratesTaint``: node-taint semantics for device taints."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.operator == "Equal" and self.value == taint.value


@dataclass(slots=True, frozen=True, eq=False)
class RequestSpec:
    """An ``exactly`` request or one ``firstAvailable`` subrequest (no admin access there)."""

    name: str
    device_class_name: str
    allocation_mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None
    selectors: tuple[DeviceSelector, ...] = ()
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity_requests: Mapping[str, Quantity] | None = None


@dataclass(slots=True, frozen=True, eq=False)
class DeviceRequest:
    """One entry of ``spec.devices.requests``: exactly one of ``exactly`` and ``first_available``."""

    name: str
    exactly: RequestSpec | None
    first_available: tuple[RequestSpec, ...] = ()


@dataclass(slots=True, frozen=True)
class DeviceConstraint:
    requests: tuple[str, ...]
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(slots=True, frozen=True, eq=False)
class OpaqueDeviceConfiguration:
    driver: str
    parameters: object


@dataclass(slots=True, frozen=True, eq=False)
class DeviceConfiguration:
    """A config entry of a class or claim (``requests`` is empty for class configs)."""

    requests: tuple[str, ...]
    opaque: OpaqueDeviceConfiguration | None


def parse_selectors(raw: Any, path: str) -> tuple[DeviceSelector, ...]:
    out = []
    for i, item in enumerate(list_of(raw, path)):
        sel = mapping(item, f"{path}[{i}]")
        cel = mapping(sel.get("cel"), f"{path}[{i}].cel")
        out.append(DeviceSelector(string(cel.get("expression"), f"{path}[{i}].cel.expression")))
    return tuple(out)


def _tolerations(raw: Any, path: str) -> tuple[DeviceToleration, ...]:
    out = []
    for i, item in enumerate(list_of(raw, path)):
        tol = mapping(item, f"{path}[{i}]")
        operator = string(tol.get("operator"), f"{path}[{i}].operator", required=False) or "Equal"
        if operator not in ("Equal", "Exists"):
            raise ObjectError(f"{path}[{i}].operator", f'Unsupported value: "{operator}": supported values: "Equal", "Exists"')
        value = string(tol.get("value"), f"{path}[{i}].value", required=False)
        if operator == "Exists" and value:
            raise ObjectError(f"{path}[{i}].value", "must be empty for operator `Exists`")
        effect = string(tol.get("effect"), f"{path}[{i}].effect", required=False)
        if effect and effect not in DEVICE_TAINT_EFFECTS:
            raise ObjectError(f"{path}[{i}].effect", f'Unsupported value: "{effect}": supported values: "NoExecute", "NoSchedule", "None"')
        out.append(
            DeviceToleration(
                string(tol.get("key"), f"{path}[{i}].key", required=False),
                operator,
                value,
                effect,
                optional_int(tol.get("tolerationSeconds"), f"{path}[{i}].tolerationSeconds"),
            )
        )
    return tuple(out)


def _request_spec(raw: Any, path: str, name: str, sub: bool) -> RequestSpec:
    item = mapping(raw, path)
    mode = string(item.get("allocationMode"), f"{path}.allocationMode", required=False) or EXACT_COUNT
    if mode not in (EXACT_COUNT, ALL):
        raise ObjectError(f"{path}.allocationMode", f'Unsupported value: "{mode}": supported values: "All", "ExactCount"')
    count = optional_int(item.get("count"), f"{path}.count")
    if mode == EXACT_COUNT:
        if count is None:
            count = 1
        if count <= 0:
            raise ObjectError(f"{path}.count", "must be greater than zero")
    elif count:
        raise ObjectError(f"{path}.count", "must not be specified when allocationMode is All")
    admin = None if sub else optional_bool(item.get("adminAccess"), f"{path}.adminAccess")
    capacity = None
    if item.get("capacity") is not None:
        cap = mapping(item["capacity"], f"{path}.capacity")
        capacity = {
            str(key): quantity(value, f"{path}.capacity.requests[{key}]")
            for key, value in optional_mapping(cap.get("requests"), f"{path}.capacity.requests").items()
        }
    return RequestSpec(
        name=name,
        device_class_name=string(item.get("deviceClassName"), f"{path}.deviceClassName"),
        allocation_mode=mode,
        count=count or 0,
        admin_access=admin,
        selectors=parse_selectors(item.get("selectors"), f"{path}.selectors"),
        tolerations=_tolerations(item.get("tolerations"), f"{path}.tolerations"),
        capacity_requests=capacity,
    )


def parse_requests(raw: Any, path: str) -> tuple[DeviceRequest, ...]:
    out: list[DeviceRequest] = []
    names: set[str] = set()
    for i, item in enumerate(list_of(raw, path)):
        req = mapping(item, f"{path}[{i}]")
        name = string(req.get("name"), f"{path}[{i}].name")
        if name in names:
            raise ObjectError(f"{path}[{i}].name", f'Duplicate value: "{name}"')
        names.add(name)
        has_exactly = req.get("exactly") is not None
        subs = list_of(req.get("firstAvailable"), f"{path}[{i}].firstAvailable")
        if has_exactly == bool(subs):
            raise ObjectError(f"{path}[{i}]", "exactly one of `exactly` or `firstAvailable` is required")
        exactly = _request_spec(req["exactly"], f"{path}[{i}].exactly", name, False) if has_exactly else None
        first: list[RequestSpec] = []
        sub_names: set[str] = set()
        for j, sub in enumerate(subs):
            sub_path = f"{path}[{i}].firstAvailable[{j}]"
            sub_name = string(mapping(sub, sub_path).get("name"), f"{sub_path}.name")
            if sub_name in sub_names:
                raise ObjectError(f"{sub_path}.name", f'Duplicate value: "{sub_name}"')
            sub_names.add(sub_name)
            first.append(_request_spec(sub, sub_path, sub_name, True))
        out.append(DeviceRequest(name, exactly, tuple(first)))
    return tuple(out)


def _request_reference_ok(ref: str, requests: tuple[DeviceRequest, ...]) -> bool:
    base, _, sub = ref.partition("/")
    for request in requests:
        if request.name != base:
            continue
        if not sub:
            return True
        return any(s.name == sub for s in request.first_available)
    return False


def parse_constraints(raw: Any, path: str, requests: tuple[DeviceRequest, ...]) -> tuple[DeviceConstraint, ...]:
    out = []
    for i, item in enumerate(list_of(raw, path)):
        con = mapping(item, f"{path}[{i}]")
        names = string_list(con.get("requests"), f"{path}[{i}].requests")
        for j, ref in enumerate(names):
            if not _request_reference_ok(ref, requests):
                raise ObjectError(f"{path}[{i}].requests[{j}]", "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'")
        match = string(con.get("matchAttribute"), f"{path}[{i}].matchAttribute", required=False) or None
        distinct = string(con.get("distinctAttribute"), f"{path}[{i}].distinctAttribute", required=False) or None
        if (match is None) == (distinct is None):
            raise ObjectError(f"{path}[{i}]", "exactly one of `matchAttribute` or `distinctAttribute` is required")
        attribute = match or distinct or ""
        if "/" not in attribute:
            raise ObjectError(f"{path}[{i}].{'matchAttribute' if match else 'distinctAttribute'}", "a fully qualified name must be a domain and a name separated by a slash")
        out.append(DeviceConstraint(names, match, distinct))
    return tuple(out)


def parse_opaque(raw: Any, path: str) -> OpaqueDeviceConfiguration | None:
    if raw is None:
        return None
    item = mapping(raw, path)
    params: object = copy.deepcopy(item.get("parameters"))
    return OpaqueDeviceConfiguration(string(item.get("driver"), f"{path}.driver"), params)


def parse_claim_configs(raw: Any, path: str, requests: tuple[DeviceRequest, ...] | None) -> tuple[DeviceConfiguration, ...]:
    """Configs of a claim (``requests`` checked against the claim) or, with None, of a class."""
    out = []
    for i, item in enumerate(list_of(raw, path)):
        cfg = mapping(item, f"{path}[{i}]")
        names = string_list(cfg.get("requests"), f"{path}[{i}].requests") if requests is not None else ()
        if requests is not None:
            for j, ref in enumerate(names):
                if not _request_reference_ok(ref, requests):
                    raise ObjectError(f"{path}[{i}].requests[{j}]", "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'")
        out.append(DeviceConfiguration(names, parse_opaque(cfg.get("opaque"), f"{path}[{i}].opaque")))
    return tuple(out)

