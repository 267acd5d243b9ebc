"""Kubernetes resource quantities (``resource.Quantity``), parsed exactly.

The scheduler only ever reads a quantity through ``Value()`` (whole units, rounded
up) or ``MilliValue()`` (thousandths, rounded up), so we parse into an exact
``Fraction`` and round the way apimachinery does.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

__all__ = ["QuantityError", "parse_quantity", "value", "milli_value"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# sign, digits with an optional fraction, then a binary/decimal suffix or an exponent.
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE](?P<exp>[+-]?[0-9]+))?$"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


@lru_cache(maxsize=4096)
def parse_quantity(text: str | int | float) -> Fraction:
    """Parse ``"100m"``, ``"1.5Gi"``, ``"12e3"`` ... into an exact number."""
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression, got {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(str(text))
    match = _QUANTITY.match(text.strip()) if isinstance(text, str) else None
    if match is None or text != text.strip():
        raise QuantityError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}"
        )
    number = Fraction(match["num"])
    if match["exp"] is not None:
        number *= Fraction(10) ** int(match["exp"])
    else:
        suffix = match["suffix"] or ""
        number *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
    return -number if match["sign"] == "-" else number


def _ceil(number: Fraction) -> int:
    """Round a fraction away from zero, as apimachinery's scaling does."""
    if number < 0:
        return -_ceil(-number)
    return -((-number.numerator) // number.denominator)


def _exact(quantity: str | int | float | Fraction) -> Fraction:
    return quantity if isinstance(quantity, Fraction) else parse_quantity(quantity)


def value(quantity: str | int | float | Fraction) -> int:
    """``Quantity.Value()``: whole units, a fraction rounded away from zero."""
    return _ceil(_exact(quantity))


def milli_value(quantity: str | int | float | Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths of a unit, rounded up."""
    return _ceil(_exact(quantity) * 1000)
