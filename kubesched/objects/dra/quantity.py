"""Quantities in DRA objects: the exact value plus the text upstream stores.

Device capacities, capacity requests and consumed capacity are ``resource.Quantity`` values
that the allocator adds, compares and sometimes rounds (``requestPolicy``). The value is kept
as an exact ``Fraction``; ``text`` is what the API server would serialize: the text as read,
or, for a value the allocator computes, apimachinery's canonical form in the given format
(``NewQuantity(v, BinarySI)`` stores 60G rounded to a 1Mi step as ``58593750Ki``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..quantity import QuantityError, parse_quantity

__all__ = ["Quantity", "parse_dra_quantity", "canonical_text", "BINARY_SI", "DECIMAL_SI"]

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"

_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


@dataclass(slots=True, frozen=True)
class Quantity:
    """A quantity: ``value`` exact, ``text`` as stored. Equal when both are (``==`` on the
    record); compare ``value`` for numeric equality, as upstream's ``Cmp`` does."""

    value: Fraction
    text: str
    # ``value`` as a plain int when whole (arithmetic on ints is many times faster).
    number: int | Fraction = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "number", self.value.numerator if self.value.denominator == 1 else self.value)

    def __str__(self) -> str:
        return self.text

    @staticmethod
    def of(value: Fraction | int, fmt: str = BINARY_SI) -> "Quantity":
        """A computed quantity, with the canonical text of ``resource.NewQuantity(value, fmt)``."""
        exact = Fraction(value)
        return Quantity(exact, canonical_text(exact, fmt))


def parse_dra_quantity(raw: object) -> Quantity:
    """A quantity field of a DRA object (a string, or a bare JSON number)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise QuantityError(f"quantities must be strings, got {raw!r}")
    return Quantity(parse_quantity(raw), raw if isinstance(raw, str) else str(raw))


def canonical_text(value: Fraction, fmt: str = BINARY_SI) -> str:
    """apimachinery's canonical serialization of ``value`` in format ``fmt``.

    BinarySI is used for integers of magnitude at least 1024 (largest power-of-1024 suffix
    that divides the value exactly); everything else is written in DecimalSI (the largest
    power-of-1000 suffix that keeps the mantissa an integer).
    """
    if fmt == BINARY_SI and value.denominator == 1 and abs(value) >= 1024:
        number = value.numerator
        exponent = 0
        while number % 1024 == 0 and exponent < len(_BINARY_SUFFIXES) - 1:
            number //= 1024
            exponent += 1
        return f"{number}{_BINARY_SUFFIXES[exponent]}"
    if value == 0:
        return "0"
    exponent = -9
    scaled = value * 10**9
    if scaled.denominator != 1:  # below nano: apimachinery rounds up to the nearest nano
        scaled = Fraction(-((-scaled.numerator) // scaled.denominator))
    number = int(scaled)
    while number % 1000 == 0 and exponent < 18:
        number //= 1000
        exponent += 3
    return f"{number}{_DECIMAL_SUFFIXES[exponent]}"
