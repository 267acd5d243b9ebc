"""``Node``: a node parsed once into what scheduling reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from .annotations import NO_ANNOTATIONS, parse_annotations
from .errors import ObjectError
from .resources import Resource, parse_resource_list
from .taints import Taint, parse_taints

__all__ = ["Node", "parse_node"]


@dataclass(slots=True, eq=False)
class Node:
    name: str
    uid: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: Resource
    images: dict[str, int]  # every name of every image on the node -> size in bytes
    raw: dict[str, Any] | None = None
    # ``status.declaredFeatures``: what the kubelet says it supports (NodeDeclaredFeatures).
    declared_features: tuple[str, ...] = ()
    # ``metadata.annotations``, read-only and shared (see ``objects/annotations.py``).
    annotations: Mapping[str, str] = field(default_factory=lambda: NO_ANNOTATIONS)

    def __repr__(self) -> str:
        return f"Node({self.name})"


_ALLOCATABLE: dict[tuple[tuple[str, object], ...], Resource] = {}  # raw lists -> parsed, per instance type


def _allocatable(raw_capacity: Any, raw_allocatable: Any) -> Resource:
    """What a node offers, from its status; remembered by the raw lists, since nodes of one
    instance type report the same ones. The API server copies capacity into allocatable
    only when allocatable is absent."""
    key: tuple[tuple[str, object], ...] | None = None
    if (type(raw_capacity) is dict and type(raw_allocatable) in (dict, type(None))
            and all(type(v) is str for v in raw_capacity.values())
            and all(type(v) is str for v in (raw_allocatable or {}).values())):
        # Strings only (what the API server writes): ``1`` and ``true`` make equal keys.
        key = (("", raw_allocatable is None), *raw_capacity.items(), ("", None), *(raw_allocatable or {}).items())
        found = _ALLOCATABLE.get(key)
        if found is not None:
            return found
    capacity = parse_resource_list(raw_capacity, "status.capacity")
    allocatable = parse_resource_list(raw_allocatable, "status.allocatable")
    resources = Resource.from_list(capacity if raw_allocatable is None else allocatable)
    if key is not None:
        if len(_ALLOCATABLE) >= 4096:
            _ALLOCATABLE.clear()
        _ALLOCATABLE[key] = resources
    return resources


def parse_node(raw: Mapping[str, Any], keep_raw: bool = False) -> Node:
    """Compile a v1.Node. Allocatable defaults to capacity, as the API server does."""
    if not isinstance(raw, Mapping):
        raise ObjectError("", "a node must be an object")
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ObjectError("metadata.name", "is required")
    labels = meta.get("labels") or {}
    if not isinstance(labels, Mapping) or not all(isinstance(v, str) for v in labels.values()):
        raise ObjectError("metadata.labels", "must be a map of strings")
    resources = _allocatable(status.get("capacity"), status.get("allocatable"))
    images: dict[str, int] = {}
    raw_images: Any = status.get("images") or []
    if not isinstance(raw_images, list):
        raise ObjectError("status.images", "must be a list")
    for i, image in enumerate(raw_images):
        if not isinstance(image, Mapping):
            raise ObjectError(f"status.images[{i}]", "must be a container image")
        size = image.get("sizeBytes") or 0
        if not isinstance(size, int):
            raise ObjectError(f"status.images[{i}].sizeBytes", "must be an integer")
        for image_name in image.get("names") or []:
            images[str(image_name)] = size
    return Node(
        name=name,
        uid=str(meta.get("uid") or name),
        labels={str(k): v for k, v in labels.items()},
        taints=parse_taints(spec.get("taints"), "spec.taints"),
        unschedulable=bool(spec.get("unschedulable")),
        allocatable=resources.copy(),
        images=images,
        raw=dict(raw) if keep_raw else None,
        declared_features=_declared_features(status.get("declaredFeatures")),
        annotations=parse_annotations(meta.get("annotations")),
    )


def _declared_features(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(f, str) for f in raw):
        raise ObjectError("status.declaredFeatures", "must be a list of strings")
    return tuple(raw)
