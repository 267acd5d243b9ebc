"""apimachinery's validation messages, worded and rendered as the API server words them.

An object the API server would refuse is reported with the field path and the text
``field.Error`` prints after it (``Required value``, ``Invalid value: "x": <detail>``,
``Too many: 2: must have at most 1 item``, ...), so a user who knows the API server's
answers recognises ours. Two families of format checks exist upstream with slightly
different words: ``util/validation`` (metadata names, ``Pod.spec.schedulingGroup``: lengths
in "characters") and ``api/validate/content`` (declarative validation: lengths in "bytes");
both are here, named after their origin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

__all__ = [
    "Problem",
    "dns1123_label",
    "dns1123_subdomain",
    "duplicate",
    "forbidden",
    "go_json",
    "go_quote",
    "go_value",
    "invalid",
    "label_key",
    "not_supported",
    "path_segment_name",
    "required",
    "too_many",
]

Problem = tuple[str, str]
"""``(field path, message)``: the message is what ``field.Error`` prints after ``<path>: ``."""

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_LABEL_RE = re.compile(_LABEL)
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN)
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")
_KEY_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_NAME_RE = re.compile(_KEY_NAME)
_KEY_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', "
                 "and must start and end with an alphanumeric character")


def regex_error(message: str, regex: str, *examples: str) -> str:
    """apimachinery's ``RegexError`` (its doubled space before ``or`` included)."""
    if not examples:
        return f"{message} (regex used for validation is '{regex}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{regex}')"


def _too_long(limit: int, unit: str) -> str:
    return f"must be no more than {limit} {unit}"


def _size(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))  # Go's len(): bytes


def dns1123_label(value: str, unit: str = "bytes") -> list[str]:
    """``IsDNS1123Label``: ``unit`` is "bytes" (content) or "characters" (util/validation)."""
    out: list[str] = []
    if _size(value) > 63:
        out.append(_too_long(63, unit))
    if _LABEL_RE.fullmatch(value) is None:
        if _SUBDOMAIN_RE.fullmatch(value) is not None:
            out.append("must not contain dots")
        else:
            out.append(regex_error(_LABEL_MSG, _LABEL, "my-name", "123-abc"))
    return out


def dns1123_subdomain(value: str, unit: str = "bytes") -> list[str]:
    """``IsDNS1123Subdomain``: ``unit`` is "bytes" (content) or "characters" (util/validation)."""
    out: list[str] = []
    if _size(value) > 253:
        out.append(_too_long(253, unit))
    if _SUBDOMAIN_RE.fullmatch(value) is None:
        out.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN, "example.com"))
    return out


def label_key(value: str) -> list[str]:
    """``IsLabelKey`` (= ``IsQualifiedName``): an optional DNS subdomain prefix and ``/``, then a name."""
    out: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [f"a valid label key {regex_error(_KEY_NAME_MSG, _KEY_NAME, 'MyName', 'my.name', '123-abc')}"
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            out.extend(f"prefix part {message}" for message in dns1123_subdomain(prefix))
    if not name:
        out.append("name part must be non-empty")
    elif _size(name) > 63:
        out.append(f"name part {_too_long(63, 'bytes')}")
    if _KEY_NAME_RE.fullmatch(name) is None:
        out.append(f"name part {regex_error(_KEY_NAME_MSG, _KEY_NAME, 'MyName', 'my.name', '123-abc')}")
    return out


def path_segment_name(value: str) -> list[str]:
    """``IsPathSegmentName``: what may be one segment of a URL path."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def go_quote(value: str) -> str:
    """A string as Go's ``%q`` (``strconv.Quote``) prints it."""
    out = ['"']
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif not ch.isprintable():
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_json(value: object) -> str:
    """``encoding/json``'s compact output: HTML characters escaped, as Go escapes them."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def go_value(value: object) -> str:
    """A bad value as ``field.Error`` prints it: strings quoted, numbers bare, the rest as JSON."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return go_json(value)


def required(path: str, detail: str = "") -> Problem:
    return path, f"Required value: {detail}" if detail else "Required value"


def forbidden(path: str, detail: str = "") -> Problem:
    return path, f"Forbidden: {detail}" if detail else "Forbidden"


def invalid(path: str, value: object, detail: str) -> Problem:
    return path, f"Invalid value: {go_value(value)}: {detail}" if detail else f"Invalid value: {go_value(value)}"


def duplicate(path: str, value: object) -> Problem:
    return path, f"Duplicate value: {go_value(value)}"


def not_supported(path: str, value: object, supported: Sequence[str]) -> Problem:
    detail = ", ".join(go_quote(v) for v in supported)
    return path, (f"Unsupported value: {go_value(value)}: supported values: {detail}" if supported
                  else f"Unsupported value: {go_value(value)}")


def too_many(path: str, actual: int, limit: int) -> Problem:
    return path, f"Too many: {actual}: must have at most {limit} {'item' if limit == 1 else 'items'}"
