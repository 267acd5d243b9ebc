"""Call costs that cel-go's estimator takes from its libraries: Kubernetes' ``library.CostEstimator``
(apiserver/pkg/cel/library/cost.go: strings, regex, lists, URL, IP, CIDR, quantity, semver,
format) and the overload estimators of cel-go's sets and lists extensions."""

from __future__ import annotations

import math
from collections.abc import Callable

from .declarations import CIDR, FORMAT, IP, QUANTITY, SEMVER, URL
from .estimates import (
    LIST_CREATE, MAX_FORMAT_SIZE, ONE, REGEX_FACTOR, STRING_FACTOR, U64, ZERO, AstNode, Estimate, Sizer, fixed,
)
from .syntax import Literal

__all__ = ["library_cost", "OVERLOAD_ESTIMATORS", "literal_int"]


def library_cost(sized: Sizer, function: str, overload: str, target: AstNode | None, args: list[AstNode]) -> tuple[Estimate, Estimate | None] | None:
    """Kubernetes' ``library.CostEstimator.EstimateCallCost``."""
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
        if target.type.params:
            element = target.type.params[0]
            elem_cost = ONE
            if element.kind in ("string", "bytes"):
                item = AstNode(target.path + ["@items"] if target.path is not None else None, element, None, None)
                elem_cost = elem_cost.add(sized(item).factor(STRING_FACTOR))
            return sized(target).multiply(elem_cost), None
        return sized(target).factor(STRING_FACTOR), None
    if function == "url" and len(args) == 1:
        sz = sized(args[0])
        return sz.factor(STRING_FACTOR), sz
    if function in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
        sz = sized(target)
        return sz.factor(STRING_FACTOR), sz
    if function == "replace" and target is not None and len(args) >= 2:
        return replace_cost(sized(target), sized(args[0]), sized(args[1]))
    if function == "split" and target is not None:
        sz = sized(target)
        limit = sz.max
        if len(args) > 1 and isinstance(args[1].expr, Literal) and args[1].expr.kind == "int":
            limit = literal_int(args[1].expr.value)
        return sz.factor(2 * STRING_FACTOR), Estimate(0, limit)
    if function == "join" and target is not None:
        list_size = sized(target)
        size = ZERO
        if target.type.params:
            item = AstNode(target.path + ["@items"] if target.path is not None else None, target.type.params[0], None, None)
            size = list_size.multiply(sized(item))
        if args:
            separators = Estimate(max(list_size.min - 1, 0), max(list_size.max - 1, 0))
            size = size.add(sized(args[0]).multiply(separators))
        return size.factor(STRING_FACTOR), size
    if function in ("find", "findAll") and target is not None and args:
        sz = sized(target)
        string_cost = sz.add(ONE).factor(STRING_FACTOR)
        return string_cost.multiply(sized(args[0]).factor(REGEX_FACTOR)), Estimate(0, sz.max)
    if function in ("cidr", "isIP", "isCIDR") and args:
        return sized(args[0]).factor(STRING_FACTOR), None
    if function == "ip":
        if overload == "cidr_ip":
            return ONE, None
        if args:
            return sized(args[0]).factor(STRING_FACTOR), None
    if function == "ip.isCanonical" and args:
        return sized(args[0]).factor(2 * STRING_FACTOR), None
    if function in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast"):
        return ONE, None
    if function in ("containsIP", "containsCIDR") and args:
        ip_size = Estimate(4, 16)
        cost = ip_size.add(ip_size).factor(STRING_FACTOR)
        if function == "containsCIDR":
            cost = cost.add(ip_size.factor(STRING_FACTOR)).add(ONE)
        if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
            cost = cost.add(sized(args[0]).factor(STRING_FACTOR))
        return cost, None
    if function in ("quantity", "isQuantity", "semver", "isSemver") and args:
        return sized(args[0]).factor(STRING_FACTOR), None
    if function == "format.named":
        return ONE, None
    if function == "validate" and args:
        # MaxNameFormatRegexSize (128) times the regex factor, per character.
        return sized(args[0]).factor(STRING_FACTOR).factor(128 * REGEX_FACTOR), None
    if function in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch",
                    "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery"):
        return ONE, None
    if function == "_==_" and len(args) == 2:
        lhs, rhs = args
        if lhs.type == rhs.type:
            if lhs.type in (IP, CIDR, QUANTITY, SEMVER):
                return ONE, None
            if lhs.type == FORMAT:
                return Estimate(1, MAX_FORMAT_SIZE).factor(STRING_FACTOR), None
            if lhs.type == URL:
                size = ONE
                if rhs.size is not None:
                    size = rhs.size.union(rhs.size)  # upstream compares the right side with itself
                return Estimate(1, size.max).factor(STRING_FACTOR), None
    return None

def replace_cost(sz: Estimate, to_replace: Estimate, replace_with: Estimate) -> tuple[Estimate, Estimate]:
    count_max = retained_max = count_min = retained_min = 0
    if to_replace.min == 0:
        count_max = sz.max + 1 if sz.max < U64 else sz.max
        retained_max = sz.max
    elif replace_with.max <= to_replace.min:
        retained_max = sz.max
    else:
        count_max = math.ceil(sz.max / to_replace.min)
    if to_replace.max == 0:
        count_min = sz.min + 1 if sz.min < U64 else sz.min
        retained_min = sz.min
    elif to_replace.max <= replace_with.min:
        retained_min = sz.min
    else:
        count_min = math.ceil(sz.min / to_replace.max)
    size = Estimate(count_min, count_max).multiply(replace_with).add(Estimate(retained_min, retained_max))
    return sz.factor(2 * STRING_FACTOR), size


# cel-go extension libraries' overload estimators (sets, lists).
def _int_literal(node: AstNode, default: int) -> int:
    if isinstance(node.expr, Literal) and node.expr.kind == "int":
        return literal_int(node.expr.value)
    return default


def literal_int(value: object) -> int:
    """An int literal as cel-go's estimators read it (``uint64(i)``)."""
    return value % 2**64 if isinstance(value, int) else 0


def _list_call(factor: float, size: Estimate) -> tuple[Estimate, Estimate]:
    return size.factor(factor).add(ONE).add(fixed(LIST_CREATE)), size


def _sets(factor: float) -> Callable[[Sizer, AstNode | None, list[AstNode]], tuple[Estimate, Estimate | None] | None]:
    def estimate(sized: Sizer, target: AstNode | None, args: list[AstNode]) -> tuple[Estimate, Estimate | None] | None:
        if len(args) != 2:
            return None
        return sized(args[0]).multiply(sized(args[1])).factor(factor).add(ONE), None
    return estimate


def _slice(sized: Sizer, target: AstNode | None, args: list[AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is None or len(args) != 2:
        return None
    sz = sized(target)
    return _list_call(1, fixed(max(_int_literal(args[1], sz.max) - _int_literal(args[0], 0), 0)))


def _range(sized: Sizer, target: AstNode | None, args: list[AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is not None or len(args) != 1:
        return None
    return _list_call(1, fixed(_int_literal(args[0], U64)))


def _reverse(sized: Sizer, target: AstNode | None, args: list[AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is None or args:
        return None
    return _list_call(1, sized(target))


def _flatten(sized: Sizer, target: AstNode | None, args: list[AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is None or len(args) > 1:
        return None
    depth = _int_literal(args[0], U64) if args else 1
    return _list_call(float(depth), sized(target))


def _distinct(sized: Sizer, target: AstNode | None, args: list[AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is None or args:
        return None
    sz = sized(target)
    return _list_call(2.0, sz.multiply(sz))


def _sort(sized: Sizer, target: AstNode | None, args: list[AstNode]) -> tuple[Estimate, Estimate | None] | None:
    node = target if not args else args[0]
    if target is None or len(args) > 1 or node is None:
        return None
    sz = sized(node)
    element = node.type.params[0] if node.type.params else None
    factor = 2.0 + (STRING_FACTOR if element is not None and element.kind in ("string", "bytes") else 0.0)
    return _list_call(factor, sz.multiply(sz))


OVERLOAD_ESTIMATORS: dict[str, Callable[[Sizer, AstNode | None, list[AstNode]], tuple[Estimate, Estimate | None] | None]] = {
    "list_sets_contains_list": _sets(1), "list_sets_intersects_list": _sets(1), "list_sets_equivalent_list": _sets(2),
    "list_slice": _slice, "list_flatten": _flatten, "list_flatten_int": _flatten, "lists_range": _range,
    "list_reverse": _reverse, "list_distinct": _distinct,
}
OVERLOAD_ESTIMATORS.update({f"list_{t}_{suffix}": _sort for t in ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
                             for suffix in ("sort", "sortByAssociatedKeys")})
