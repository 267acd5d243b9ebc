"""Readers for the JSON fields of resource.k8s.io/v1 objects, each failing with the field path.

Every DRA record is parsed through these, so that an object the API server would reject
raises one ``ObjectError`` naming the field, and nothing further is read from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ObjectError
from .quantity import Quantity, parse_dra_quantity

__all__ = [
    "mapping",
    "optional_mapping",
    "string",
    "optional_string",
    "optional_bool",
    "optional_int",
    "string_list",
    "list_of",
    "quantity",
    "JsonObject",
]

# A JSON object as read from a document; records keep such parts only where the scheduler
# passes them through unread (opaque driver parameters, label maps).
JsonObject = dict[str, object]


def mapping(raw: Any, path: str) -> Mapping[str, Any]:
    if type(raw) is dict:  # the common case, without the ABC check
        return raw
    if not isinstance(raw, Mapping):
        raise ObjectError(path, "must be an object")
    return raw


def optional_mapping(raw: Any, path: str) -> Mapping[str, Any]:
    """An object that may be absent or null (read as empty)."""
    if raw is None:
        return {}
    if type(raw) is dict:
        return raw
    return mapping(raw, path)


def string(raw: Any, path: str, required: bool = True) -> str:
    if raw is None or raw == "":
        if required:
            raise ObjectError(path, "Required value")
        return ""
    if not isinstance(raw, str):
        raise ObjectError(path, "must be a string")
    return raw


def optional_string(raw: Any, path: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ObjectError(path, "must be a string")
    return raw


def optional_bool(raw: Any, path: str) -> bool | None:
    if raw is None:
        return None
    if not isinstance(raw, bool):
        raise ObjectError(path, "must be a boolean")
    return raw


def optional_int(raw: Any, path: str) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int):
        if isinstance(raw, float) and raw.is_integer():
            return int(raw)
        raise ObjectError(path, "must be an integer")
    return raw


def list_of(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ObjectError(path, "must be a list")
    return raw


def string_list(raw: Any, path: str) -> tuple[str, ...]:
    items = list_of(raw, path)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ObjectError(f"{path}[{i}]", "must be a string")
    return tuple(items)


def quantity(raw: Any, path: str) -> Quantity:
    try:
        return parse_dra_quantity(raw)
    except ValueError as err:
        raise ObjectError(path, str(err)) from None
