"""Object metadata of DRA objects: what the scheduler reads and writes back."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from ..errors import ObjectError
from ..pod import OwnerRef
from .fields import list_of, mapping, optional_int, optional_mapping, optional_string, string, string_list

__all__ = ["ObjectMeta", "parse_meta", "DEFAULT_NAMESPACE"]

DEFAULT_NAMESPACE = "default"


@dataclass(slots=True, frozen=True, eq=False)
class ObjectMeta:
    """``metadata`` of a DeviceClass, ResourceSlice, ResourceClaim or template.

    ``namespace`` is ``default`` for namespaced objects that name none (as the API server
    stores them) and empty for cluster-scoped ones."""

    name: str
    namespace: str = ""
    uid: str = ""
    generate_name: str = ""
    resource_version: str = ""
    generation: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    owner_references: tuple[OwnerRef, ...] = ()
    finalizers: tuple[str, ...] = ()
    deletion_timestamp: str | None = None
    creation_timestamp: str | None = None


def _string_map(raw: Any, path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in optional_mapping(raw, path).items():
        if not isinstance(value, str):
            raise ObjectError(f"{path}[{key}]", "must be a string")
        out[str(key)] = value
    return out


def _owners(raw: Any, path: str) -> tuple[OwnerRef, ...]:
    owners = []
    for i, item in enumerate(list_of(raw, path)):
        ref = mapping(item, f"{path}[{i}]")
        owners.append(
            OwnerRef(
                kind=string(ref.get("kind"), f"{path}[{i}].kind", required=False),
                name=string(ref.get("name"), f"{path}[{i}].name", required=False),
                uid=string(ref.get("uid"), f"{path}[{i}].uid", required=False),
                controller=ref.get("controller") is True,
                api_version=string(ref.get("apiVersion"), f"{path}[{i}].apiVersion", required=False),
            )
        )
    return tuple(owners)


def parse_meta(raw: Any, namespaced: bool, allow_generate_name: bool = False) -> ObjectMeta:
    """``metadata`` with the API server's defaulting (namespace ``default``)."""
    meta = optional_mapping(raw, "metadata")
    generate_name = string(meta.get("generateName"), "metadata.generateName", required=False)
    name = string(meta.get("name"), "metadata.name", required=not (allow_generate_name and generate_name))
    namespace = string(meta.get("namespace"), "metadata.namespace", required=False) if namespaced else ""
    return ObjectMeta(
        name=name,
        namespace=(namespace or DEFAULT_NAMESPACE) if namespaced else "",
        uid=string(meta.get("uid"), "metadata.uid", required=False),
        generate_name=generate_name,
        resource_version=string(meta.get("resourceVersion"), "metadata.resourceVersion", required=False),
        generation=optional_int(meta.get("generation"), "metadata.generation") or 0,
        labels=_string_map(meta.get("labels"), "metadata.labels"),
        annotations=_string_map(meta.get("annotations"), "metadata.annotations"),
        owner_references=_owners(meta.get("ownerReferences"), "metadata.ownerReferences"),
        finalizers=string_list(meta.get("finalizers"), "metadata.finalizers"),
        deletion_timestamp=optional_string(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
        creation_timestamp=optional_string(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
    )
