"""Kubernetes' CEL format library (apiserver/pkg/cel/library/format.go): ``format.named(name)``
and ``format.<name>()`` give a format, ``f.validate(s)`` none when ``s`` conforms and otherwise
the list of apimachinery's validation messages.

A format is the one-entry map ``{FORMAT_TAG: name}``; the engine calls ``format.named`` and
``format.dns1123Label`` as ``k8s_format_named`` and ``k8s_format_dns1123Label`` (``lowering``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from datetime import datetime

from .engine import engine
from .library import CelFunction, CelValue, NoSuchOverload
from .netlib import is_url

__all__ = ["FORMAT_FUNCTIONS", "FORMAT_TAG"]

FORMAT_TAG = "kubernetes.NamedFormat"

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE = "(" + _KEY + ")?"
_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's ``RegexError``."""
    shown = "".join((" or " if i else "") + f"'{e}', " for i, e in enumerate(examples))
    return f"{message} ({'e.g. ' + shown if examples else ''}regex used for validation is '{pattern}')"


def _matches(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value) is not None


def _dns1123_label(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value.encode()) > 63 else []
    if not _matches(_LABEL, value):
        errs.append("must not contain dots" if _matches(_SUBDOMAIN, value) else _regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            _LABEL, "my-name", "123-abc"))
    return errs


def _dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errs = [f"must be no more than 253 {unit}"] if len(value.encode()) > 253 else []
    if not _matches(_SUBDOMAIN, value):
        errs.append(_regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            _SUBDOMAIN, "example.com"))
    return errs


def _dns1035_label(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value.encode()) > 63 else []
    if not _matches(_DNS1035, value):
        errs.append(_regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            _DNS1035, "my-name", "abc-123"))
    return errs


_KEY_MESSAGE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"


def _qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return ["a valid label key " + _regex_error(_KEY_MESSAGE, _KEY, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain(parts[0], "bytes"))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _matches(_KEY, name):
        errs.append("name part " + _regex_error(_KEY_MESSAGE, _KEY, "MyName", "my.name", "123-abc"))
    return errs


def _label_value(value: str) -> list[str]:
    errs = ["must be no more than 63 bytes"] if len(value.encode()) > 63 else []
    if not _matches(_VALUE, value):
        errs.append(_regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            _VALUE, "MyValue", "my_value", "12345"))
    return errs


def _mask_trailing_dash(value: str) -> str:
    """apimachinery's ``maskTrailingDash`` (it drops the character before the dash too)."""
    return value[:-2] + "a" if len(value) > 1 and value.endswith("-") else value


def _uri(value: str) -> list[str]:
    return [] if is_url(value) else [f'parse "{value}": invalid URI for request']


def _byte(value: str) -> list[str]:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


def _date(value: str) -> list[str]:
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        return ["invalid date"]
    return []


def _datetime(value: str) -> list[str]:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return ["invalid datetime"]
    return [] if "T" in value.upper() or " " in value else ["invalid datetime"]


_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _dns1123_label,
    "dns1123Subdomain": _dns1123_subdomain,
    "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name,
    "dns1123LabelPrefix": lambda v: _dns1123_label(_mask_trailing_dash(v)),
    "dns1123SubdomainPrefix": lambda v: _dns1123_subdomain(_mask_trailing_dash(v)),
    "dns1035LabelPrefix": lambda v: _dns1035_label(_mask_trailing_dash(v)),
    "labelValue": _label_value,
    "uri": _uri,
    "uuid": lambda v: [] if _UUID.match(v) else ["does not match the UUID format"],
    "byte": _byte,
    "date": _date,
    "datetime": _datetime,
}


def named(name: CelValue) -> object:
    """``format.named(name)``: the format, or none for a name the library does not know."""
    if not isinstance(name, str):
        raise NoSuchOverload()
    optional = engine().OptionalValue
    found: object = optional.of({FORMAT_TAG: name}) if name in _FORMATS else optional.none()
    return found


def validate(fmt: CelValue, value: CelValue) -> object:
    """``f.validate(s)``: none when ``s`` conforms, else the messages."""
    if not isinstance(fmt, Mapping) or not isinstance(fmt.get(FORMAT_TAG), str) or not isinstance(value, str):
        raise NoSuchOverload()
    errors = _FORMATS[fmt[FORMAT_TAG]](value)
    optional = engine().OptionalValue
    found: object = optional.of(errors) if errors else optional.none()
    return found


def _constant(name: str) -> CelFunction:
    def constant() -> object:
        return {FORMAT_TAG: name}

    return constant


FORMAT_FUNCTIONS: dict[str, CelFunction] = {"k8s_format_named": named, "validate": validate}
FORMAT_FUNCTIONS.update({f"k8s_format_{name}": _constant(name) for name in _FORMATS})
