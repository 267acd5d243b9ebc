"""Readers for the JSON fields of resource.k8s.io/v1 objects, each failing with the field path.

Every DRA record is parsed through these, so that an object the API server would reject
raises one ``ObjectError`` naming the field, and nothing further is read from it.
"""

from __future__ import annotations

import re
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
    "dns_label",
    "dns_subdomain",
    "qualified_name",
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


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def dns_label(value: str, path: str) -> str:
    """An RFC 1123 label, as device and counter names must be."""
    if len(value) > 63:
        raise ObjectError(path, "must be no more than 63 characters")
    if _DNS_LABEL.fullmatch(value) is None:
        raise ObjectError(
            path,
            f"Invalid value: \"{value}\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        )
    return value


def dns_subdomain(value: str, path: str, max_length: int = 253) -> str:
    """An RFC 1123 subdomain (driver names: at most 63 characters)."""
    if len(value) > max_length:
        raise ObjectError(path, f"must be no more than {max_length} characters")
    if any(_DNS_LABEL.fullmatch(part) is None for part in value.split(".")):
        raise ObjectError(
            path,
            f"Invalid value: \"{value}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'example.com', "
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )
    return value


def qualified_name(value: str, path: str) -> str:
    """An attribute or capacity name: ``<C identifier>`` or ``<domain>/<C identifier>``."""
    domain, sep, ident = value.rpartition("/")
    if sep:
        if not domain:
            raise ObjectError(path, "the domain must not be empty")
        dns_subdomain(domain, path, 63)
    if not ident:
        raise ObjectError(path, "the name must not be empty")
    if len(ident) > 32:
        raise ObjectError(path, "must be no more than 32 characters")
    if _C_IDENTIFIER.fullmatch(ident) is None:
        raise ObjectError(
            path,
            f"Invalid value: \"{ident}\": a valid C identifier must start with alphabetic character or '_', "
            "followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', "
            "regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
        )
    return value
