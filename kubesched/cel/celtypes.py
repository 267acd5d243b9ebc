"""CEL types as cel-go's checker sees them, and its assignability rules (checker/types.go).

``any`` is the well-known ``google.protobuf.Any`` that DRA declares attributes with: as in
cel-go it is assignable to and from everything (like ``dyn``), yet is its own type (a selector
may evaluate to it, not to ``dyn``; a comprehension may not range over it).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

__all__ = ["CelType", "Mapping", "INT", "UINT", "DOUBLE", "BOOL", "STRING", "BYTES", "NULL", "DYN", "ANY", "ERROR", "DURATION", "TIMESTAMP",
           "list_of", "map_of", "optional_of", "type_of", "param", "struct", "opaque", "assignable", "substitute", "fresh"]


@dataclass(slots=True, frozen=True)
class CelType:
    kind: str  # int uint double bool string bytes null dyn any error duration timestamp list map opaque struct type param
    name: str
    params: tuple[CelType, ...] = ()

    def __str__(self) -> str:
        """``FormatCELType``."""
        if self.kind in ("any", "duration", "timestamp", "param") or not self.params:
            return {"any": "any", "error": "!error!", "null": "null"}.get(self.kind, self.name)
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    def type_name(self) -> str:
        """``Type.String()`` as the DRA compiler prints the output type."""
        if self.kind == "any":
            return "google.protobuf.Any"
        if self.kind == "null":
            return "null_type"
        return str(self)


INT = CelType("int", "int")
UINT = CelType("uint", "uint")
DOUBLE = CelType("double", "double")
BOOL = CelType("bool", "bool")
STRING = CelType("string", "string")
BYTES = CelType("bytes", "bytes")
NULL = CelType("null", "null_type")
DYN = CelType("dyn", "dyn")
ANY = CelType("any", "google.protobuf.Any")
ERROR = CelType("error", "*error*")
DURATION = CelType("duration", "google.protobuf.Duration")
TIMESTAMP = CelType("timestamp", "google.protobuf.Timestamp")


def list_of(elem: CelType) -> CelType:
    return CelType("list", "list", (elem,))


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType("map", "map", (key, value))


def optional_of(elem: CelType) -> CelType:
    return CelType("opaque", "optional_type", (elem,))


def type_of(elem: CelType) -> CelType:
    return CelType("type", "type", (elem,))


def param(name: str) -> CelType:
    return CelType("param", name)


def struct(name: str) -> CelType:
    return CelType("struct", name)


def opaque(name: str) -> CelType:
    return CelType("opaque", name)


_counter = itertools.count()


def fresh() -> CelType:
    """A new type variable (cel-go's ``_var<n>``)."""
    return param(f"_var{next(_counter)}")


Mapping = dict[str, CelType]


def _dyn_or_error(t: CelType) -> bool:
    return t.kind in ("dyn", "any", "error")


def _nullable(t: CelType) -> bool:
    return t.kind in ("opaque", "struct", "any", "duration", "timestamp", "null")


def substitute(m: Mapping, t: CelType, params_to_dyn: bool = False) -> CelType:
    if t.kind == "param":
        found = m.get(t.name)
        if found is not None and found != t:
            return substitute(m, found, params_to_dyn)
        return DYN if params_to_dyn else t
    if t.params:
        return CelType(t.kind, t.name, tuple(substitute(m, p, params_to_dyn) for p in t.params))
    return t


def _occurs(m: Mapping, name: str, t: CelType) -> bool:
    t = substitute(m, t)
    if t.kind == "param":
        return t.name == name
    return any(_occurs(m, name, p) for p in t.params)


def _bind(m: Mapping, var: CelType, t: CelType) -> bool:
    bound = m.get(var.name)
    if bound is not None:
        if assignable(m, bound, t):
            return True
        if assignable(m, t, bound):
            m[var.name] = t
            return True
        return False
    if t.kind == "param" and t.name == var.name:
        return True
    if _occurs(m, var.name, t):
        return False
    m[var.name] = t
    return True


def assignable(m: Mapping, expected: CelType, actual: CelType) -> bool:
    """Whether ``actual`` may be given where ``expected`` is declared, binding type variables
    in ``m`` (in place; callers pass a copy and keep it on success)."""
    expected = substitute(m, expected)
    actual = substitute(m, actual)
    if expected.kind == "param":
        return _bind(m, expected, actual)
    if actual.kind == "param":
        return _bind(m, actual, expected)
    if _dyn_or_error(expected) or _dyn_or_error(actual):
        return True
    if expected.kind == "null":
        return _nullable(actual)
    if actual.kind == "null":
        return _nullable(expected)
    if expected.kind != actual.kind or expected.name != actual.name or len(expected.params) != len(actual.params):
        return False
    return all(assignable(m, e, a) for e, a in zip(expected.params, actual.params))
