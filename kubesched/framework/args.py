"""Reading plugin args from a ``pluginConfig`` entry, strictly, as upstream decodes them."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["ArgsError", "expect_fields", "get_int", "get_bool", "get_list", "get_str"]


class ArgsError(ValueError):
    """A bad field in a plugin's args; ``field`` is its path inside the args."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def expect_fields(raw: Any, allowed: tuple[str, ...], path: str = "") -> Mapping:
    """Reject a non-object or a field the args type does not have (strict decoding)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ArgsError(path, f"must be an object, got {type(raw).__name__}")
    for key in raw:
        if key not in allowed and key not in ("apiVersion", "kind"):
            raise ArgsError(f"{path}.{key}" if path else key, f'unknown field "{key}"')
    return raw


def get_int(raw: Mapping, key: str, default: int, path: str = "") -> int:
    value = raw.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise ArgsError(f"{path}{key}", f"must be an integer, got {value!r}")
    return value


def get_bool(raw: Mapping, key: str, default: bool, path: str = "") -> bool:
    value = raw.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ArgsError(f"{path}{key}", f"must be a boolean, got {value!r}")
    return value


def get_str(raw: Mapping, key: str, default: str, path: str = "") -> str:
    value = raw.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ArgsError(f"{path}{key}", f"must be a string, got {value!r}")
    return value


def get_list(raw: Mapping, key: str, path: str = "") -> list:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ArgsError(f"{path}{key}", f"must be a list, got {type(value).__name__}")
    return value
