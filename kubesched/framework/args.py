"""Reading plugin args from a ``pluginConfig`` entry, strictly, as upstream decodes them.

Every plugin's args, in-tree or not, are a dataclass decoded by ``decode_args``: the
Kubernetes codec's strict decoding (unknown fields and wrong types are errors naming
the field), upstream's ``SetDefaults_*`` (the dataclass defaults, and ``__post_init__``
for defaults that depend on a value, such as a weight 0 meaning 1), then upstream's
``Validate*Args`` (the class's ``validate()``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Callable, Iterable, Mapping, TypeVar, cast

from ..objects.errors import ObjectError
from .extender_config import is_qualified_name

__all__ = [
    "ArgsError",
    "decode_args",
    "json_name",
    "Int32",
    "Int64",
    "IntBits",
    "FieldDecoder",
    "Problems",
    "go_quote",
    "invalid",
    "required",
    "forbidden",
    "duplicate",
    "not_supported",
    "label_name_problems",
]

A = TypeVar("A")

FieldDecoder = Callable[[object, str], object]
"""``field(metadata={"decode": fn})``: ``fn(raw, path)`` reads a value that needs bespoke
parsing (a NodeSelector, say), raising ``ArgsError`` (or the objects layer's
``ObjectError``) with the failing field's full path."""


class ArgsError(ValueError):
    """A bad field in a plugin's args; ``field`` is its path inside the args."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class IntBits:
    """``Annotated[int, IntBits(32)]``: an integer that must fit Go's ``int32`` (as upstream's field)."""

    bits: int

    def check(self, value: int, path: str) -> None:
        bound = 1 << (self.bits - 1)
        if not -bound <= value < bound:
            raise ArgsError(path, f"must be a {self.bits}-bit integer, got {value}")


Int32 = Annotated[int, IntBits(32)]
Int64 = Annotated[int, IntBits(64)]


Problems = list[tuple[str, str]]
"""What ``validate()`` returns: ``(field path, message)`` pairs, in upstream's order."""


# -- messages as apimachinery's field.Error prints them ---------------------------------

def go_quote(value: str) -> str:
    """A string as Go's ``%q`` (``strconv.Quote``) prints it."""
    out = ['"']
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif not ch.isprintable():
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _go(raw: object) -> str:
    """A value as ``field.Error`` prints it: strings quoted, booleans and null as in Go."""
    if isinstance(raw, str):
        return go_quote(raw)
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if raw is None:
        return "null"
    return repr(raw)


def invalid(value: object, detail: str) -> str:
    """``field.Invalid``'s message: ``Invalid value: 101: not in valid range [0, 100]``."""
    return f"Invalid value: {_go(value)}: {detail}" if detail else f"Invalid value: {_go(value)}"


def required(detail: str = "") -> str:
    """``field.Required``'s message."""
    return f"Required value: {detail}" if detail else "Required value"


def forbidden(detail: str = "") -> str:
    """``field.Forbidden``'s message."""
    return f"Forbidden: {detail}" if detail else "Forbidden"


def duplicate(value: object) -> str:
    """``field.Duplicate``'s message."""
    return f"Duplicate value: {_go(value)}"


def not_supported(value: object, supported: Iterable[object]) -> str:
    """``field.NotSupported``'s message (``supported`` in the order upstream lists them, each quoted)."""
    quoted = ", ".join(go_quote(v if isinstance(v, str) else _go(v)) for v in supported)
    return f"Unsupported value: {_go(value)}: supported values: {quoted}"


def label_name_problems(value: str, path: str) -> Problems:
    """``metav1validation.ValidateLabelName``: one ``Invalid value`` per ``IsQualifiedName`` problem."""
    return [(path, invalid(value, message)) for message in is_qualified_name(value)]


def json_name(field_name: str) -> str:
    """``ignored_resources`` -> ``ignoredResources``: the Kubernetes spelling of a field."""
    head, *rest = field_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def decode_args(args_type: type[A], raw: object, path: str = "") -> A:
    """Decode ``raw`` (a ``pluginConfig[].args`` object) into the dataclass ``args_type``, strictly.

    Fields are read by their camelCase names (or ``field(metadata={"json": "name"})``);
    a missing or null field takes the dataclass's default (as Go leaves an absent or
    null field at its zero value for defaulting to fill in); an unknown field, a value
    of the wrong type, or a missing field without default is an ``ArgsError`` naming
    the field's path. Supported field types: ``bool``, ``int`` (``Int32``/``Int64`` for
    Go's sized integers), ``float``, ``str``, ``Literal[...]``, ``X | None``,
    ``list[X]``, ``tuple[X, ...]``, ``dict[str, X]``, nested dataclasses and ``object``
    (any JSON value, unread); ``field(metadata={"decode": fn})`` reads one field with
    ``fn(raw, path)`` instead. After decoding, a ``validate()`` method, if the class
    has one, returns a list of ``(field path, message)`` problems in upstream's order;
    the first becomes the error.
    """
    value = _decode(args_type, {} if raw is None else raw, path)
    validate = getattr(value, "validate", None)
    if callable(validate):
        problems = validate()
        if isinstance(problems, list) and problems:
            where, message = problems[0]
            raise ArgsError(_join(path, str(where)), str(message))
    return cast(A, value)


def _join(path: str, name: str) -> str:
    if not path:
        return name
    if not name:
        return path
    return f"{path}{name}" if name.startswith("[") else f"{path}.{name}"


def _decode(tp: object, raw: object, path: str) -> object:
    origin = typing.get_origin(tp)
    if tp is object:
        return raw
    if origin is Annotated:
        base, *extras = typing.get_args(tp)
        value = _decode(base, raw, path)
        for extra in extras:
            if isinstance(extra, IntBits) and isinstance(value, int):
                extra.check(value, path)
        return value
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(tp)
        if raw is None and type(None) in members:
            return None
        errors: list[ArgsError] = []
        for member in members:
            if member is type(None):
                continue
            try:
                return _decode(member, raw, path)
            except ArgsError as err:
                errors.append(err)
        raise errors[0] if errors else ArgsError(path, f"invalid value {raw!r}")
    if origin is typing.Literal:
        allowed = typing.get_args(tp)
        if raw not in allowed or isinstance(raw, bool) != any(isinstance(a, bool) for a in allowed if a == raw):
            raise ArgsError(path, not_supported(raw, allowed))
        return raw
    if origin in (list, tuple):
        params = typing.get_args(tp)
        item = params[0] if params else object
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            raise ArgsError(path, f"must be a list, got {_type_name(raw)}")
        items = [_decode(item, v, f"{path}[{i}]") for i, v in enumerate(raw)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        params = typing.get_args(tp)
        item = params[1] if len(params) == 2 else object
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ArgsError(path, f"must be an object, got {_type_name(raw)}")
        return {str(k): _decode(item, v, f"{path}[{k}]") for k, v in raw.items()}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _decode_dataclass(tp, raw, path)
    if tp is bool:
        if not isinstance(raw, bool):
            raise ArgsError(path, f"must be a boolean, got {_go(raw)}")
        return raw
    if tp is int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise ArgsError(path, f"must be an integer, got {_go(raw)}")
        return raw
    if tp is float:
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise ArgsError(path, f"must be a number, got {_go(raw)}")
        return float(raw)
    if tp is str:
        if not isinstance(raw, str):
            raise ArgsError(path, f"must be a string, got {_go(raw)}")
        return raw
    raise TypeError(f"args field type {tp!r} is not supported by decode_args")


def _decode_dataclass(cls: type, raw: object, path: str) -> object:
    if not isinstance(raw, Mapping):
        raise ArgsError(path, f"must be an object, got {_type_name(raw)}")
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = [f for f in dataclasses.fields(cls) if f.init]
    by_json = {str(f.metadata.get("json", json_name(f.name))): f for f in fields}
    for key in raw:
        if key not in by_json and key not in ("apiVersion", "kind"):
            raise ArgsError(_join(path, str(key)), f'unknown field "{key}"')
    values: dict[str, object] = {}
    for key, f in by_json.items():
        where = _join(path, key)
        if raw.get(key) is not None:
            decoder = f.metadata.get("decode")
            values[f.name] = _decode(hints[f.name], raw[key], where) if decoder is None else _custom(decoder, raw[key], where)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ArgsError(where, "Required value")
    return cls(**values)


def _custom(decoder: FieldDecoder, raw: object, path: str) -> object:
    try:
        return decoder(raw, path)
    except ObjectError as err:
        raise ArgsError(err.field, err.message) from None


def _type_name(raw: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(raw), type(raw).__name__
    )

