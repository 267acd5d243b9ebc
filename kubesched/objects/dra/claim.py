"""``ResourceClaim``, ``ResourceClaimTemplate`` and ``DeviceClass`` (resource.k8s.io/v1)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

from ..errors import ObjectError
from .allocation import AllocationResult, parse_allocation
from .fields import list_of, mapping, optional_mapping, string
from .meta import ObjectMeta, _string_map, parse_meta
from .request import (
    DeviceConfiguration,
    DeviceConstraint,
    DeviceRequest,
    DeviceSelector,
    parse_claim_configs,
    parse_constraints,
    parse_requests,
    parse_selectors,
)

__all__ = [
    "ResourceClaimSpec",
    "ResourceClaimConsumerReference",
    "ResourceClaimStatus",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceClass",
    "parse_claim_spec",
    "parse_resource_claim",
    "parse_resource_claim_template",
    "parse_device_class",
    "DELETE_PROTECTION_FINALIZER",
    "ADMIN_ACCESS_NAMESPACE_LABEL",
    "check_admin_access",
]

DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
ADMIN_ACCESS_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"


@dataclass(slots=True, frozen=True, eq=False)
class ResourceClaimSpec:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()


@dataclass(slots=True, frozen=True)
class ResourceClaimConsumerReference:
    resource: str
    name: str
    uid: str
    api_group: str = ""


@dataclass(slots=True, frozen=True, eq=False)
class ResourceClaimStatus:
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()


@dataclass(slots=True, frozen=True, eq=False)
class ResourceClaim:
    """A claim. Immutable: ``with_status`` makes the copy a status write would store."""

    meta: ObjectMeta
    spec: ResourceClaimSpec
    status: ResourceClaimStatus = ResourceClaimStatus()

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def key(self) -> str:
        """``<namespace>/<name>``."""
        return f"{self.meta.namespace}/{self.meta.name}"

    @property
    def allocation(self) -> AllocationResult | None:
        return self.status.allocation

    def with_status(self, status: ResourceClaimStatus) -> "ResourceClaim":
        return dataclasses.replace(self, status=status)

    def with_meta(self, meta: ObjectMeta) -> "ResourceClaim":
        return dataclasses.replace(self, meta=meta)


@dataclass(slots=True, frozen=True, eq=False)
class ResourceClaimTemplate:
    """A template: the claim's labels/annotations and spec (``spec.metadata``, ``spec.spec``)."""

    meta: ObjectMeta
    claim_labels: Mapping[str, str]
    claim_annotations: Mapping[str, str]
    spec: ResourceClaimSpec


@dataclass(slots=True, frozen=True, eq=False)
class DeviceClass:
    meta: ObjectMeta
    selectors: tuple[DeviceSelector, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()
    extended_resource_name: str | None = None

    @property
    def name(self) -> str:
        return self.meta.name


def parse_claim_spec(raw: Any, path: str) -> ResourceClaimSpec:
    spec = optional_mapping(raw, path)
    devices = optional_mapping(spec.get("devices"), f"{path}.devices")
    requests = parse_requests(devices.get("requests"), f"{path}.devices.requests")
    return ResourceClaimSpec(
        requests,
        parse_constraints(devices.get("constraints"), f"{path}.devices.constraints", requests),
        parse_claim_configs(devices.get("config"), f"{path}.devices.config", requests),
    )


def _consumers(raw: Any, path: str) -> tuple[ResourceClaimConsumerReference, ...]:
    out = []
    for i, item in enumerate(list_of(raw, path)):
        ref = mapping(item, f"{path}[{i}]")
        out.append(
            ResourceClaimConsumerReference(
                string(ref.get("resource"), f"{path}[{i}].resource"),
                string(ref.get("name"), f"{path}[{i}].name"),
                string(ref.get("uid"), f"{path}[{i}].uid", required=False),
                string(ref.get("apiGroup"), f"{path}[{i}].apiGroup", required=False),
            )
        )
    return tuple(out)


def parse_resource_claim(raw: Any) -> ResourceClaim:
    doc = mapping(raw, "")
    meta = parse_meta(doc.get("metadata"), namespaced=True, allow_generate_name=True)
    spec = parse_claim_spec(doc.get("spec"), "spec")
    status_raw = optional_mapping(doc.get("status"), "status")
    allocation = parse_allocation(status_raw["allocation"], "status.allocation") if status_raw.get("allocation") is not None else None
    status = ResourceClaimStatus(allocation, _consumers(status_raw.get("reservedFor"), "status.reservedFor"))
    return ResourceClaim(meta, spec, status)


def parse_resource_claim_template(raw: Any) -> ResourceClaimTemplate:
    doc = mapping(raw, "")
    meta = parse_meta(doc.get("metadata"), namespaced=True)
    spec = optional_mapping(doc.get("spec"), "spec")
    claim_meta = optional_mapping(spec.get("metadata"), "spec.metadata")
    return ResourceClaimTemplate(
        meta,
        _string_map(claim_meta.get("labels"), "spec.metadata.labels"),
        _string_map(claim_meta.get("annotations"), "spec.metadata.annotations"),
        parse_claim_spec(spec.get("spec"), "spec.spec"),
    )


def parse_device_class(raw: Any) -> DeviceClass:
    doc = mapping(raw, "")
    meta = parse_meta(doc.get("metadata"), namespaced=False)
    spec = optional_mapping(doc.get("spec"), "spec")
    return DeviceClass(
        meta,
        parse_selectors(spec.get("selectors"), "spec.selectors"),
        parse_claim_configs(spec.get("config"), "spec.config", None),
        string(spec.get("extendedResourceName"), "spec.extendedResourceName", required=False) or None,
    )


def check_admin_access(spec: ResourceClaimSpec, namespace_labels: Mapping[str, str] | None, spec_path: str = "spec") -> None:
    """The API server's admission of admin access (``AuthorizedForAdmin``): a claim (or template,
    with ``spec_path="spec.spec"``) asking for it must be in a namespace labelled
    ``resource.kubernetes.io/admin-access: "true"``; raises ``ObjectError`` otherwise."""
    for i, request in enumerate(spec.requests):
        if request.exactly is not None and request.exactly.admin_access:
            if (namespace_labels or {}).get(ADMIN_ACCESS_NAMESPACE_LABEL) != "true":
                raise ObjectError(
                    f"{spec_path}.devices.requests[{i}].adminAccess",
                    f"Forbidden: admin access to devices requires the `{ADMIN_ACCESS_NAMESPACE_LABEL}: true` label on the containing namespace",
                )
            return
