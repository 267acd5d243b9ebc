"""``Node``: a node parsed once into what scheduling reads."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

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

    def __repr__(self) -> str:
        return f"Node({self.name})"


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
    capacity = parse_resource_list(status.get("capacity"), "status.capacity")
    allocatable = parse_resource_list(status.get("allocatable"), "status.allocatable")
    # The API server copies capacity into allocatable only when allocatable is absent.
    merged = capacity if status.get("allocatable") is None else allocatable
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
        allocatable=Resource.from_list(merged),
        images=images,
        raw=dict(raw) if keep_raw else None,
    )
