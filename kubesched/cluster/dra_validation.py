"""DRA objects in a snapshot, checked as the API server checks them before storing them.

A DeviceClass, ResourceClaim, ResourceClaimTemplate or ResourceSlice the API server would
refuse (a field of the wrong type, a duplicate device name in a slice, a CEL selector that
does not compile, ...) is bad input: one line naming the object and the field, and nothing
is loaded. Parsing is ``kubesched.objects.dra``'s; selectors are compiled with the DRA CEL
environment (the API server compiles them on admission).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..objects.dra import (
    DeviceRequest,
    check_admin_access,
    DeviceSelector,
    parse_device_class,
    parse_resource_claim,
    parse_resource_claim_template,
    parse_resource_slice,
)
from ..objects.errors import ObjectError
from ..cel import selector_problem

__all__ = ["DRA_KINDS", "validate_dra_object", "admin_access_problems"]

DRA_KINDS = frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"})


def _check(selectors: tuple[DeviceSelector, ...], path: str) -> None:
    for i, selector in enumerate(selectors):
        problem = selector_problem(selector.expression)  # compile error, too long, or too costly
        if problem is not None:
            raise ObjectError(f"{path}[{i}].cel.expression", problem)


def _check_requests(requests: tuple[DeviceRequest, ...], path: str) -> None:
    for i, request in enumerate(requests):
        if request.exactly is not None:
            _check(request.exactly.selectors, f"{path}[{i}].exactly.selectors")
        for k, sub in enumerate(request.first_available):
            _check(sub.selectors, f"{path}[{i}].firstAvailable[{k}].selectors")


def validate_dra_object(kind: str, raw: Mapping[str, Any]) -> None:
    """Raise ``ObjectError`` (field, message) when the API server would refuse ``raw``."""
    if kind == "DeviceClass":
        _check(parse_device_class(raw).selectors, "spec.selectors")
    elif kind == "ResourceClaim":
        _check_requests(parse_resource_claim(raw).spec.requests, "spec.devices.requests")
    elif kind == "ResourceClaimTemplate":
        _check_requests(parse_resource_claim_template(raw).spec.requests, "spec.spec.devices.requests")
    elif kind == "ResourceSlice":
        parse_resource_slice(raw)


def admin_access_problems(objects: Mapping[str, list[dict[str, Any]]],
                          namespaces: Mapping[str, Mapping[str, str]]) -> list[tuple[Mapping[str, Any], str, str]]:
    """Claims and templates asking for admin access in a namespace of the snapshot without the
    ``resource.kubernetes.io/admin-access: "true"`` label (the API server's admission refuses
    them); namespaces the snapshot does not list are not judged. ``(object, field, message)``."""
    out: list[tuple[Mapping[str, Any], str, str]] = []
    for kind, parse, path in (("ResourceClaim", parse_resource_claim, "spec"),
                              ("ResourceClaimTemplate", parse_resource_claim_template, "spec.spec")):
        for raw in objects.get(kind, []):
            try:
                parsed = parse(raw)
                labels = namespaces.get(parsed.meta.namespace)
                if labels is not None:
                    check_admin_access(parsed.spec, labels, path)
            except ObjectError as err:
                out.append((raw, err.field, err.message))
    return out
