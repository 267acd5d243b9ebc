"""The ``extenders`` of a ``KubeSchedulerConfiguration``: decoding, defaults, validation.

Field names are upstream's (``k8s.io/kube-scheduler/config/v1`` ``Extender``); the
checks and their messages are ``validateExtenders`` (``apis/config/validation``):
a prioritizer needs a positive weight, at most one extender binds, managed
resources are valid extended resource names, each managed by one extender only.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Callable, Mapping

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "ExtenderConfig",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "parse_extenders",
    "parse_go_duration",
]

# upstream's DefaultExtenderTimeout, applied by NewHTTPExtender when httpTimeout is unset or 0
DEFAULT_EXTENDER_TIMEOUT = 5.0

_EXTENDER_FIELDS = (
    "urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
    "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable",
)
_TLS_FIELDS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")
_RESOURCE_FIELDS = ("name", "ignoredByScheduler")

Report = Callable[[str, str], None]  # (field path, message)


@dataclass(slots=True, frozen=True)
class ExtenderTLSConfig:
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""  # PEM; base64 in the configuration file, as Go's []byte
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(slots=True, frozen=True)
class ExtenderManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(slots=True, frozen=True)
class ExtenderConfig:
    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT  # seconds; negative: no timeout
    node_cache_capable: bool = False
    managed_resources: tuple[ExtenderManagedResource, ...] = ()
    ignorable: bool = False


# -- Go's time.ParseDuration ----------------------------------------------------------
_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_COMPONENT = re.compile(r"(\d+\.?\d*|\.\d+)([^\d.]*)")


def parse_go_duration(text: str) -> float:
    """``time.ParseDuration`` in seconds; raises ``ValueError`` with Go's message."""
    invalid = f'time: invalid duration "{text}"'
    rest = text
    sign = 1.0
    if rest[:1] in ("+", "-"):
        sign = -1.0 if rest[0] == "-" else 1.0
        rest = rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(invalid)
    total = 0.0
    while rest:
        match = _COMPONENT.match(rest)
        if match is None:
            raise ValueError(invalid)
        number, unit = match.groups()
        if not unit:
            raise ValueError(f'time: missing unit in duration "{text}"')
        if unit not in _UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{text}"')
        total += float(number) * _UNITS[unit]
        rest = rest[match.end():]
    return sign * total


# -- decoding ---------------------------------------------------------------------------
def _object(raw: object, allowed: tuple[str, ...], path: str, report: Report) -> Mapping[str, object]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        report(path, f"must be an object, got {type(raw).__name__}")
        return {}
    for key in raw:
        if key not in allowed:
            report(f"{path}.{key}", f'unknown field "{key}"')
    return raw


def _string(raw: Mapping[str, object], key: str, path: str, report: Report) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        report(f"{path}.{key}", f"must be a string, got {value!r}")
        return ""
    return value


def _bool(raw: Mapping[str, object], key: str, path: str, report: Report) -> bool:
    value = raw.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        report(f"{path}.{key}", f"must be a boolean, got {value!r}")
        return False
    return value


def _bytes(raw: Mapping[str, object], key: str, path: str, report: Report) -> bytes:
    text = _string(raw, key, path, report)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        report(f"{path}.{key}", "illegal base64 data")
        return b""


def _tls(raw: object, path: str, report: Report) -> ExtenderTLSConfig | None:
    if raw is None:
        return None
    fields = _object(raw, _TLS_FIELDS, path, report)
    return ExtenderTLSConfig(
        insecure=_bool(fields, "insecure", path, report),
        server_name=_string(fields, "serverName", path, report),
        cert_file=_string(fields, "certFile", path, report),
        key_file=_string(fields, "keyFile", path, report),
        ca_file=_string(fields, "caFile", path, report),
        cert_data=_bytes(fields, "certData", path, report),
        key_data=_bytes(fields, "keyData", path, report),
        ca_data=_bytes(fields, "caData", path, report),
    )


def _timeout(raw: Mapping[str, object], path: str, report: Report) -> float:
    value = raw.get("httpTimeout")
    if value is None:
        return DEFAULT_EXTENDER_TIMEOUT
    if not isinstance(value, str):  # metav1.Duration decodes a JSON string only
        kind = "bool" if isinstance(value, bool) else "number" if isinstance(value, (int, float)) else "object"
        report(f"{path}.httpTimeout", f"json: cannot unmarshal {kind} into Go value of type string")
        return DEFAULT_EXTENDER_TIMEOUT
    try:
        seconds = parse_go_duration(value)
    except ValueError as err:
        report(f"{path}.httpTimeout", str(err))
        return DEFAULT_EXTENDER_TIMEOUT
    return seconds if seconds != 0 else DEFAULT_EXTENDER_TIMEOUT


def _extender(raw: object, path: str, report: Report) -> ExtenderConfig:
    fields = _object(raw, _EXTENDER_FIELDS, path, report)
    weight = fields.get("weight", 0)
    if not isinstance(weight, int) or isinstance(weight, bool):
        report(f"{path}.weight", f"must be an integer, got {weight!r}")
        weight = 0
    resources: list[ExtenderManagedResource] = []
    listed = fields.get("managedResources")
    if listed is not None and not isinstance(listed, list):
        report(f"{path}.managedResources", "must be a list")
        listed = []
    for j, item in enumerate(listed or []):
        p = f"{path}.managedResources[{j}]"
        entry = _object(item, _RESOURCE_FIELDS, p, report)
        resources.append(ExtenderManagedResource(_string(entry, "name", p, report),
                                                 _bool(entry, "ignoredByScheduler", p, report)))
    return ExtenderConfig(
        url_prefix=_string(fields, "urlPrefix", path, report),
        filter_verb=_string(fields, "filterVerb", path, report),
        preempt_verb=_string(fields, "preemptVerb", path, report),
        prioritize_verb=_string(fields, "prioritizeVerb", path, report),
        weight=weight,
        bind_verb=_string(fields, "bindVerb", path, report),
        enable_https=_bool(fields, "enableHTTPS", path, report),
        tls_config=_tls(fields.get("tlsConfig"), f"{path}.tlsConfig", report),
        http_timeout=_timeout(fields, path, report),
        node_cache_capable=_bool(fields, "nodeCacheCapable", path, report),
        managed_resources=tuple(resources),
        ignorable=_bool(fields, "ignorable", path, report),
    )


# -- validation (validateExtenders) ----------------------------------------------------
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME = re.compile(f"^{_QNAME_FMT}$")
_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_FMT = f"{_DNS1123_LABEL}(\\.{_DNS1123_LABEL})*"
_DNS1123 = re.compile(f"^{_DNS1123_FMT}$")
_DNS1123_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError``, double spaces included."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def is_qualified_name(value: str) -> list[str]:
    """apimachinery's ``IsQualifiedName``: the problems with ``value`` (none when valid)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _DNS1123.match(prefix):
                errs.append("prefix part " + _regex_error(_DNS1123_MSG, _DNS1123_FMT, "example.com"))
    else:
        return [
            "a qualified name " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def _quoted(value: str) -> str:
    """A string as Go's ``%q`` prints it (close enough for names)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _validate(extenders: list[ExtenderConfig], report: Report) -> None:
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        if ext.prioritize_verb and ext.weight <= 0:
            report(f"{path}.weight", f"Invalid value: {ext.weight}: must have a positive weight applied to it")
        if ext.bind_verb:
            binders += 1
        for j, resource in enumerate(ext.managed_resources):
            where = f"{path}.managedResources[{j}].name"
            problems = is_qualified_name(resource.name)
            for msg in problems:
                report(where, f"Invalid value: {_quoted(resource.name)}: {msg}")
            if not problems and not is_extended_resource_name(resource.name):
                report(where, f"Invalid value: {_quoted(resource.name)}: is an invalid extended resource name")
            if resource.name in managed:
                report(where, f"Invalid value: {_quoted(resource.name)}: duplicate extender managed resource name")
            managed.add(resource.name)
    if binders > 1:
        report("extenders", f'Invalid value: "found {binders} extenders implementing bind": only one extender can implement bind')


def parse_extenders(raw: object, report: Report) -> list[ExtenderConfig]:
    """Decode, default and validate the ``extenders`` list; every problem goes to ``report``."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        report("extenders", "must be a list")
        return []
    extenders = [_extender(item, f"extenders[{i}]", report) for i, item in enumerate(raw)]
    _validate(extenders, report)
    return extenders
