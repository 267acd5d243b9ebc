"""Reading plugin args from a ``pluginConfig`` entry, strictly, as upstream decodes them."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Mapping, TypeVar, cast

__all__ = ["ArgsError", "decode_args", "json_name", "expect_fields", "get_int", "get_bool", "get_list", "get_str"]

A = TypeVar("A")


class ArgsError(ValueError):
    """A bad field in a plugin's args; ``field`` is its path inside the args."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def expect_fields(raw: object, allowed: tuple[str, ...], path: str = "") -> Mapping[str, object]:
    """Reject a non-object or a field the args type does not have (strict decoding)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ArgsError(path, f"must be an object, got {type(raw).__name__}")
    for key in raw:
        if key not in allowed and key not in ("apiVersion", "kind"):
            raise ArgsError(f"{path}.{key}" if path else key, f'unknown field "{key}"')
    return raw


def get_int(raw: Mapping[str, object], key: str, default: int, path: str = "") -> int:
    value = raw.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise ArgsError(f"{path}{key}", f"must be an integer, got {value!r}")
    return value


def get_bool(raw: Mapping[str, object], key: str, default: bool, path: str = "") -> bool:
    value = raw.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ArgsError(f"{path}{key}", f"must be a boolean, got {value!r}")
    return value


def get_str(raw: Mapping[str, object], key: str, default: str, path: str = "") -> str:
    value = raw.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ArgsError(f"{path}{key}", f"must be a string, got {value!r}")
    return value


def get_list(raw: Mapping[str, object], key: str, path: str = "") -> list[object]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ArgsError(f"{path}{key}", f"must be a list, got {type(value).__name__}")
    return value


# -- dataclass args: one decoder for every plugin ---------------------------------

def json_name(field_name: str) -> str:
    """``ignored_resources`` -> ``ignoredResources``: the Kubernetes spelling of a field."""
    head, *rest = field_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def decode_args(args_type: type[A], raw: object, path: str = "") -> A:
    """Decode ``raw`` (a ``pluginConfig[].args`` object) into the dataclass ``args_type``, strictly.

    Fields are read by their camelCase names (or ``field(metadata={"json": "name"})``);
    missing fields take the dataclass's defaults; an unknown field, a value of the wrong
    type, or a missing field without default is an ``ArgsError`` naming the field's path.
    Supported field types: ``bool``, ``int``, ``float``, ``str``, ``Literal[...]``,
    ``X | None``, ``list[X]``, ``tuple[X, ...]``, ``dict[str, X]`` and nested dataclasses.
    After decoding, a ``validate()`` method, if the class has one, returns a list of
    ``(field path, message)`` problems; the first becomes the error.
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
            raise ArgsError(path, f"Unsupported value: {_go(raw)}: supported values: {', '.join(_go(a) for a in allowed)}")
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
        return {str(k): _decode(item, v, _join(path, str(k))) for k, v in raw.items()}
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
    hints = typing.get_type_hints(cls)
    fields = [f for f in dataclasses.fields(cls) if f.init]
    by_json = {str(f.metadata.get("json", json_name(f.name))): f for f in fields}
    for key in raw:
        if key not in by_json and key not in ("apiVersion", "kind"):
            raise ArgsError(_join(path, str(key)), f'unknown field "{key}"')
    values: dict[str, object] = {}
    for key, f in by_json.items():
        where = _join(path, key)
        if key in raw:
            values[f.name] = _decode(hints[f.name], raw[key], where)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ArgsError(where, "Required value")
    return cls(**values)


def _type_name(raw: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(raw), type(raw).__name__
    )


def _go(raw: object) -> str:
    if isinstance(raw, str):
        return f'"{raw}"'
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if raw is None:
        return "null"
    return repr(raw)
