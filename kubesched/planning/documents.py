"""Results as JSON-ready data: dataclass fields in camelCase, as ``simulate -o json`` writes them.

Only field names are renamed: the keys of mappings inside results (node names, pod
names, resource names) are data and stay as they are.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

__all__ = ["JSONValue", "to_document", "camel"]

JSONValue = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_document(value: object) -> JSONValue:
    """A result (dataclasses, lists, dicts, tuples, scalars) as plain JSON data."""
    if is_dataclass(value) and not isinstance(value, type):
        return {camel(f.name): to_document(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): to_document(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_document(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
