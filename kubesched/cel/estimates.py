"""Cost and size estimates as cel-go's checker computes them (checker/cost.go): (min, max)
pairs of unsigned 64-bit integers that saturate, and sizes by path in an environment's declared
sizes (dynamic-resource-allocation/cel's ``sizeEstimator``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .celtypes import CelType
from .syntax import Node

__all__ = ["Estimate", "AstNode", "Sizer", "DeclSize", "UNKNOWN", "ZERO", "ONE", "fixed", "size_from_path",
           "U64", "STRING_FACTOR", "REGEX_FACTOR", "LIST_CREATE", "MAP_CREATE", "MAX_FORMAT_SIZE"]

U64 = 2**64 - 1
STRING_FACTOR = 0.1  # common.StringTraversalCostFactor
REGEX_FACTOR = 0.25  # common.RegexStringLengthCostFactor
LIST_CREATE, MAP_CREATE = 10, 30
MAX_FORMAT_SIZE = 64  # cel.MaxFormatSize


@dataclass(slots=True, frozen=True)
class Estimate:
    """A (min, max) size or cost."""

    min: int
    max: int

    def add(self, other: Estimate) -> Estimate:
        return Estimate(min(self.min + other.min, U64), min(self.max + other.max, U64))

    def multiply(self, other: Estimate) -> Estimate:
        return Estimate(min(self.min * other.min, U64), min(self.max * other.max, U64))

    def factor(self, per_unit: float) -> Estimate:
        return Estimate(_by_factor(self.min, per_unit), _by_factor(self.max, per_unit))

    def union(self, other: Estimate) -> Estimate:
        return Estimate(min(self.min, other.min), max(self.max, other.max))


def _by_factor(x: int, y: float) -> int:
    fx = float(x)
    if fx > 0 and y > 0 and fx > U64 / y:
        return U64
    ceil = math.ceil(fx * y)
    return U64 if ceil >= 2.0**64 else int(ceil)


def fixed(n: int) -> Estimate:
    return Estimate(n, n)


UNKNOWN = Estimate(0, U64)
ZERO = fixed(0)
ONE = fixed(1)


@dataclass(slots=True, frozen=True)
class DeclSize:
    """A declared type's maximum size (``DeclType.MaxElements``) and its parts."""

    max: int
    fields: tuple[tuple[str, DeclSize], ...] = ()
    key: DeclSize | None = None
    elem: DeclSize | None = None
    attribute: bool = False  # upstream's attributeType: any name of an attribute map has it


def size_from_path(path: list[str] | None, sizes: Mapping[str, DeclSize]) -> Estimate | None:
    """The DRA ``sizeEstimator``: sizes of what a declared variable holds (``sizes``, by
    variable name), by path."""
    node = sizes.get(path[0]) if path else None
    if node is None or path is None:
        return None
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node.elem is None:
                return None
            node = node.elem
        elif name == "@keys":
            if node.key is None:
                return None
            node = node.key
        else:
            found = dict(node.fields).get(name)
            if found is None:
                if node.elem is not None and node.elem.attribute:
                    node = node.elem
                    continue
                return None
            node = found
    return Estimate(0, node.max)


@dataclass(slots=True)
class AstNode:
    """What an estimator sees of an argument: its path, type, node and computed size."""

    path: list[str] | None
    type: CelType
    expr: Node | None
    size: Estimate | None



Sizer = Callable[[AstNode], Estimate]
