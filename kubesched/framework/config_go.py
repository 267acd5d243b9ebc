"""Go's value semantics where a ``KubeSchedulerConfiguration`` needs them.

``time.ParseDuration`` and ``Duration.String`` (exact, in integer nanoseconds),
``encoding/json``'s ``UnmarshalTypeError`` text, and how ``field.Error`` prints
a bad value (``%v``, ``%q``, ``fmt.Stringer``, ``%#v``).
"""

from __future__ import annotations

import math


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
_LIMIT = 1 << 63


def _quote(text: str) -> str:
    """The ``time`` package's ``quote``: non-ASCII and control characters as ``\\x`` escapes of their bytes."""
    out = ['"']
    for ch in text:
        if ord(ch) >= 0x80 or ord(ch) < 0x20:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogateescape"))
        else:
            out.append("\\" + ch if ch in ('"', "\\") else ch)
    out.append('"')
    return "".join(out)


def _leading_int(text: str) -> tuple[int, str]:
    """Go's ``leadingInt``: the leading digits, ``ValueError`` when they overflow."""
    i = 0
    value = 0
    while i < len(text) and "0" <= text[i] <= "9":
        if value > _LIMIT // 10:
            raise ValueError
        value = value * 10 + ord(text[i]) - 48
        if value > _LIMIT:
            raise ValueError
        i += 1
    return value, text[i:]


def _leading_fraction(text: str) -> tuple[int, float, str]:
    """Go's ``leadingFraction``: the digits (as many as fit), their scale, the rest."""
    i = 0
    value = 0
    scale = 1.0
    overflow = False
    while i < len(text) and "0" <= text[i] <= "9":
        if not overflow:
            if value > (_LIMIT - 1) // 10:
                overflow = True
            else:
                candidate = value * 10 + ord(text[i]) - 48
                if candidate > _LIMIT:
                    overflow = True
                else:
                    value = candidate
                    scale *= 10
        i += 1
    return value, scale, text[i:]


def parse_duration(text: str) -> int:
    """``time.ParseDuration``: nanoseconds (exactly as Go computes them); ``ValueError`` with Go's message."""
    original = text
    invalid = ValueError(f"time: invalid duration {_quote(original)}")
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
        if not (text[0] == "." or "0" <= text[0] <= "9"):
            raise invalid
        before = len(text)
        try:
            whole, text = _leading_int(text)
        except ValueError:
            raise invalid from None
        pre = before != len(text)
        fraction, scale, post = 0, 1.0, False
        if text[:1] == ".":
            text = text[1:]
            before = len(text)
            fraction, scale, text = _leading_fraction(text)
            post = before != len(text)
        if not pre and not post:
            raise invalid
        end = 0
        while end < len(text) and text[end] != "." and not "0" <= text[end] <= "9":
            end += 1
        if end == 0:
            raise ValueError(f"time: missing unit in duration {_quote(original)}")
        unit_name, text = text[:end], text[end:]
        unit = _UNITS.get(unit_name)
        if unit is None:
            raise ValueError(f"time: unknown unit {_quote(unit_name)} in duration {_quote(original)}")
        if whole > _LIMIT // unit:
            raise invalid
        value = whole * unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))  # float64, as Go: exact for fractions of hours
            if value > _LIMIT:
                raise invalid
        total += value
        if total > _LIMIT:
            raise invalid
    if negative:
        return -total
    if total > _LIMIT - 1:
        raise invalid
    return total


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
