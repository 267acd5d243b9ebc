"""The plugin registry: plugin name -> how to build it and read its args."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["PluginSpec", "Registry"]


@dataclass(slots=True, frozen=True)
class PluginSpec:
    """How to make one plugin: ``factory(args, handle)``, with args read by ``parse_args(raw)``.

    ``parse_args`` raises ``ArgsError`` for bad args; None means the plugin takes none.
    """

    name: str
    factory: Callable[[Any, Any], Any]
    parse_args: Callable[[Any], Any] | None = None


class Registry:
    def __init__(self, specs: list[PluginSpec] | None = None) -> None:
        self._specs: dict[str, PluginSpec] = {}
        for spec in specs or []:
            self.register(spec)

    def register(self, spec: PluginSpec) -> None:
        if spec.name in self._specs:
            raise ValueError(f"a plugin named {spec.name} already exists")
        self._specs[spec.name] = spec

    def add(self, name: str, factory: Callable[[Any, Any], Any], parse_args: Callable[[Any], Any] | None = None) -> None:
        """Register an out-of-tree plugin (the SDK's entry point)."""
        self.register(PluginSpec(name, factory, parse_args))

    def get(self, name: str) -> PluginSpec | None:
        return self._specs.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    def merged(self, other: "Registry") -> "Registry":
        out = Registry(list(self._specs.values()))
        for spec in other._specs.values():
            out.register(spec)
        return out
