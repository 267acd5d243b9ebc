"""Go's value semantics where a ``KubeSchedulerConfiguration`` needs them.

``time.ParseDuration`` and ``Duration.String`` (exact, in integer nanoseconds),
``encoding/json``'s ``UnmarshalTypeError`` text, and how ``field.Error`` prints
a bad value (``%v``, ``%q``, ``fmt.Stringer``, ``%#v``).
"""

from __future__ import annotations

import math
import re

from .args import go_quote

__all__ = [
    "NANOS_PER_SECOND",
    "parse_duration",
    "format_duration",
    "json_kind",
    "type_error",
    "integer_value",
    "INT32",
    "INT64",
]

NANOS_PER_SECOND = 1_000_000_000
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek small letter mu
    "ms": 1_000_000,
    "s": NANOS_PER_SECOND,
    "m": 60 * NANOS_PER_SECOND,
    "h": 3600 * NANOS_PER_SECOND,
}
_NUMBER = re.compile(r"([0-9]*)(\.[0-9]*)?")
_MAX = (1 << 63) - 1


def parse_duration(text: str) -> int:
    """``time.ParseDuration``: nanoseconds; ``ValueError`` with Go's message."""
    original = text
    invalid = ValueError(f"time: invalid duration {go_quote(original)}")
    negative = False
    if text[:1] in ("-", "+"):
        negative = text[0] == "-"
        text = text[1:]
    if text == "0":
        return 0
    if not text:
        raise invalid
    total = 0
    while text:
        match = _NUMBER.match(text)
        whole, frac = (match.group(1), match.group(2) or "") if match else ("", "")
        if not whole and len(frac) <= 1:  # no digits at all: "", ".", "s"
            raise invalid
        text = text[len(whole) + len(frac):]
        end = 0
        while end < len(text) and text[end] != "." and not text[end].isdigit():
            end += 1
        unit = text[:end]
        text = text[end:]
        if not unit:
            raise ValueError(f"time: missing unit in duration {go_quote(original)}")
        scale = _UNITS.get(unit)
        if scale is None:
            raise ValueError(f"time: unknown unit {go_quote(unit)} in duration {go_quote(original)}")
        value = int(whole or "0") * scale
        if frac[1:]:
            digits = frac[1:]
            value += int(digits) * scale // 10 ** len(digits)
        if value > _MAX:
            raise invalid
        total += value
        if total > _MAX + (1 if negative else 0):
            raise invalid
    return -total if negative else total


def _fraction(value: int, precision: int) -> tuple[str, int]:
    """Go's ``fmtFrac``: ``value``'s last ``precision`` digits as ``.ddd`` without trailing zeros."""
    digits = ""
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits = str(digit) + digits
        value //= 10
    return ("." + digits if printed else ""), value


def format_duration(nanos: int) -> str:
    """``time.Duration.String``: ``1h30m0s``, ``1.5s``, ``300ms``, ``0s``."""
    sign = "-" if nanos < 0 else ""
    u = abs(nanos)
    if u < NANOS_PER_SECOND:
        if u == 0:
            return "0s"
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            frac, whole = _fraction(u, 3)
            return f"{sign}{whole}{frac}\u00b5s"
        frac, whole = _fraction(u, 6)
        return f"{sign}{whole}{frac}ms"
    frac, seconds = _fraction(u, 9)
    out = f"{seconds % 60}{frac}s"
    minutes = seconds // 60
    if minutes > 0:
        out = f"{minutes % 60}m{out}"
        hours = minutes // 60
        if hours > 0:
            out = f"{hours}h{out}"
    return sign + out


def json_kind(raw: object) -> str:
    """The JSON value's kind as ``UnmarshalTypeError.Value`` names it (``string``, ``bool``, ...)."""
    if isinstance(raw, bool):
        return "bool"
    if isinstance(raw, (int, float)):
        return "number"
    if isinstance(raw, str):
        return "string"
    if isinstance(raw, (list, tuple)):
        return "array"
    if raw is None:
        return "null"
    return "object"


def _number_text(raw: int | float) -> str:
    """A number as the YAML-to-JSON conversion writes it (Go's shortest float form)."""
    if isinstance(raw, int):
        return str(raw)
    if raw.is_integer() and abs(raw) < 1e21:
        return str(int(raw))
    return repr(raw).replace("e+0", "e+").replace("e-0", "e-")


def type_error(raw: object, struct: str, stack: str, go_type: str, *, with_number: bool = False) -> str:
    """``json: cannot unmarshal <kind> into Go struct field <Struct>.<stack> of type <type>``."""
    kind = json_kind(raw)
    if with_number and kind == "number" and isinstance(raw, (int, float)):
        kind = f"number {_number_text(raw)}"
    return f"json: cannot unmarshal {kind} into Go struct field {struct}.{stack} of type {go_type}"


def integer_value(raw: object, bounds: tuple[int, int]) -> int | None:
    """``raw`` as a Go integer of the given range, or None when Go's decoder would refuse it.

    YAML ``8.0`` reaches the decoder as JSON ``8`` (Go writes integral floats without a
    fraction), so it is accepted as 8, as upstream accepts it.
    """
    if isinstance(raw, bool):
        return None
    value: int
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, float) and math.isfinite(raw) and raw.is_integer() and abs(raw) < 1e21:
        value = int(raw)
    else:
        return None
    low, high = bounds
    return value if low <= value <= high else None
