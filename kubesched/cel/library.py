"""Kubernetes' CEL quantity and semver libraries on the CEL engine's plain values.

The engine (``common-expression-language``) only carries CEL's own value types, so a
``Quantity`` is a one-entry map ``{QUANTITY_TAG: "<numerator>/<denominator>"}`` and a
``Semver`` a one-entry map ``{SEMVER_TAG: "<major>.<minor>.<patch>[-pre]"}``. Both texts are
canonical for the value, so CEL's ``==`` on them is upstream's value equality; every other
operation is a function below (``x.f(y)`` is ``f(x, y)`` in the engine). Names follow
``k8s.io/apiserver/pkg/cel/library`` (quantity.go, semver.go).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import cache, lru_cache

from kubesched.objects.quantity import parse_quantity

from .engine import extension_functions
from .semver import SemverError, Version, normalize_semver, parse_semver

__all__ = ["QUANTITY_TAG", "SEMVER_TAG", "quantity_value", "semver_value", "FUNCTIONS", "all_functions", "CelValue", "CelFunction"]

QUANTITY_TAG = "kubernetes.Quantity"
SEMVER_TAG = "kubernetes.Semver"

# What flows between the engine and these functions.
CelValue = object
QuantityMap = dict[str, str]
CelFunction = Callable[[], object] | Callable[[CelValue], object] | Callable[[CelValue, CelValue], object] | Callable[[CelValue, CelValue, CelValue], object]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


class NoSuchOverload(TypeError):
    """Arguments of types the function has no overload for (cel-go's ``no such overload``)."""

    def __init__(self) -> None:
        super().__init__("no such overload")


def quantity_value(value: Fraction) -> QuantityMap:
    """The engine value of a quantity."""
    return {QUANTITY_TAG: f"{value.numerator}/{value.denominator}"}


def semver_value(version: Version) -> dict[str, str]:
    return {SEMVER_TAG: version.key()}


@lru_cache(maxsize=8192)
def _fraction(text: str) -> Fraction:
    return Fraction(text)


def _as_quantity(value: CelValue) -> Fraction:
    if isinstance(value, Mapping) and len(value) == 1:
        text = value.get(QUANTITY_TAG)
        if isinstance(text, str):
            return _fraction(text)
    raise NoSuchOverload()


def _as_semver(value: CelValue) -> Version:
    if isinstance(value, Mapping) and len(value) == 1:
        text = value.get(SEMVER_TAG)
        if isinstance(text, str):
            return parse_semver(text)
    raise NoSuchOverload()


def _is_quantity(value: CelValue) -> bool:
    return isinstance(value, Mapping) and len(value) == 1 and QUANTITY_TAG in value


def _string(value: CelValue) -> str:
    if not isinstance(value, str):
        raise NoSuchOverload()
    return value


def quantity(text: CelValue) -> QuantityMap:
    try:
        return quantity_value(parse_quantity(_string(text)))
    except ValueError:
        raise ValueError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None


def is_quantity(text: CelValue) -> bool:
    try:
        parse_quantity(_string(text))
    except ValueError:
        return False
    return True


def _compare(a: CelValue, b: CelValue) -> int:
    if _is_quantity(a):
        x, y = _as_quantity(a), _as_quantity(b)
        return (x > y) - (x < y)
    return _as_semver(a).compare(_as_semver(b))


def compare_to(a: CelValue, b: CelValue) -> int:
    return _compare(a, b)


def is_less_than(a: CelValue, b: CelValue) -> bool:
    return _compare(a, b) < 0


def is_greater_than(a: CelValue, b: CelValue) -> bool:
    return _compare(a, b) > 0


def _operand(value: CelValue) -> Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return _as_quantity(value)


def add(a: CelValue, b: CelValue) -> QuantityMap:
    return quantity_value(_as_quantity(a) + _operand(b))


def sub(a: CelValue, b: CelValue) -> QuantityMap:
    return quantity_value(_as_quantity(a) - _operand(b))


def sign(a: CelValue) -> int:
    value = _as_quantity(a)
    return (value > 0) - (value < 0)


def is_integer(a: CelValue) -> bool:
    value = _as_quantity(a)
    return value.denominator == 1 and _INT64_MIN <= value.numerator <= _INT64_MAX


def as_integer(a: CelValue) -> int:
    if not is_integer(a):
        raise ValueError("cannot convert value to integer")
    return _as_quantity(a).numerator


def as_approximate_float(a: CelValue) -> float:
    return float(_as_quantity(a))


def semver(text: CelValue, normalize: CelValue = False) -> dict[str, str]:
    raw = _string(text)
    if not isinstance(normalize, bool):
        raise NoSuchOverload()
    try:
        return semver_value(parse_semver(normalize_semver(raw) if normalize else raw))
    except SemverError as err:
        raise ValueError(str(err)) from None


def is_semver(text: CelValue, normalize: CelValue = False) -> bool:
    try:
        semver(text, normalize)
    except ValueError:
        return False
    return True


def major(a: CelValue) -> int:
    return _as_semver(a).major


def minor(a: CelValue) -> int:
    return _as_semver(a).minor


def patch(a: CelValue) -> int:
    return _as_semver(a).patch


FUNCTIONS: dict[str, CelFunction] = {
    "quantity": quantity,
    "isQuantity": is_quantity,
    "compareTo": compare_to,
    "isLessThan": is_less_than,
    "isGreaterThan": is_greater_than,
    "add": add,
    "sub": sub,
    "sign": sign,
    "isInteger": is_integer,
    "asInteger": as_integer,
    "asApproximateFloat": as_approximate_float,
    "semver": semver,
    "isSemver": is_semver,
    "major": major,
    "minor": minor,
    "patch": patch,
}

def find(text: CelValue, pattern: CelValue) -> str:
    """The regex library's ``find``: the first match, or the empty string."""
    match = _regex(pattern).search(_string(text))
    return match.group(0) if match else ""


def find_all(text: CelValue, pattern: CelValue, limit: CelValue = -1) -> list[str]:
    """``findAll``: every match (at most ``limit`` when not negative)."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise NoSuchOverload()
    found = [m.group(0) for m in _regex(pattern).finditer(_string(text))]
    return found if limit < 0 else found[:limit]


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _regex(pattern: CelValue) -> re.Pattern[str]:
    return _compiled(_string(pattern))


def is_sorted(items: CelValue) -> bool:
    """The lists library's ``isSorted``."""
    if not isinstance(items, list):
        raise NoSuchOverload()
    return all(a <= b for a, b in zip(items, items[1:]))


def index_of(target: CelValue, item: CelValue, *offset: CelValue) -> object:
    """``indexOf`` of the strings extension, or of the lists library on a list."""
    if isinstance(target, list):
        return next((i for i, value in enumerate(target) if value == item), -1)
    return extension_functions()["strings"]["indexOf"](target, item, *offset)


def last_index_of(target: CelValue, item: CelValue, *offset: CelValue) -> object:
    if isinstance(target, list):
        return next((i for i in range(len(target) - 1, -1, -1) if target[i] == item), -1)
    return extension_functions()["strings"]["lastIndexOf"](target, item, *offset)


FUNCTIONS.update({"find": find, "findAll": find_all, "isSorted": is_sorted, "indexOf": index_of, "lastIndexOf": last_index_of})



@cache
def all_functions() -> Mapping[str, CelFunction]:
    """``FUNCTIONS`` and what Kubernetes' base CEL environment also has: cel-go's strings, sets
    and lists extensions (and the lists library's sum/min/max), which the engine's package ships
    as Python functions. Built on first use, since it loads the engine (see ``engine``)."""
    functions = dict(FUNCTIONS)
    for library in ("strings", "sets", "lists", "core"):
        for name, function in extension_functions()[library].items():
            if name not in ("contains", "bool"):  # CEL's own contains and bool() stay the engine's
                functions.setdefault(name, function)
    return functions
