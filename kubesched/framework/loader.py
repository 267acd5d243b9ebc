"""Loading out-of-tree plugins: the ``kubesched.plugins`` entry-point group and ``module:attribute``.

What an entry point (or ``--plugin module:attribute``) names is a ``PluginSpec``, a
list or tuple of them, a ``Registry``, or a function of no arguments returning one of
those. Every problem is reported as one line naming the plugin source, so a broken
plugin stops the command with a clear message rather than a traceback.
"""

from __future__ import annotations

import importlib
from importlib.metadata import EntryPoint, entry_points
from typing import Iterable

from .registry import PluginSpec, Registry

__all__ = ["ENTRY_POINT_GROUP", "PluginLoadError", "load_plugins", "specs_from"]

ENTRY_POINT_GROUP = "kubesched.plugins"


class PluginLoadError(Exception):
    """Out-of-tree plugins that could not be loaded; ``lines`` holds one line per problem."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def specs_from(value: object, source: str) -> list[PluginSpec[object]]:
    """The plugin specs ``value`` holds; ``PluginLoadError`` when it holds something else."""
    if callable(value) and not isinstance(value, (PluginSpec, Registry, type)):
        try:
            value = value()
        except Exception as err:
            raise PluginLoadError([f"plugin {source}: calling it failed: {type(err).__name__}: {err}"]) from err
    if isinstance(value, PluginSpec):
        return [value]
    if isinstance(value, Registry):
        return value.specs()
    if isinstance(value, (list, tuple)) and all(isinstance(v, PluginSpec) for v in value):
        return list(value)
    raise PluginLoadError([
        f"plugin {source}: is a {type(value).__name__}, not a kubesched.framework.PluginSpec (or a list of them)"
    ])


def _import(target: str) -> object:
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    value: object = module
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def _from_target(target: str) -> list[PluginSpec[object]]:
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise PluginLoadError([f"plugin {target}: want module:attribute, e.g. my_plugins:spec"])
    try:
        value = _import(target)
    except AttributeError as err:
        raise PluginLoadError([f"plugin {target}: {err}"]) from err
    except Exception as err:  # ImportError, or the module raising while it loads
        raise PluginLoadError([f"plugin {target}: cannot import {module_name}: {type(err).__name__}: {err}"]) from err
    return specs_from(value, target)


def _package_of(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return str(name) if name else "?"


def _from_entry_point(ep: EntryPoint) -> list[PluginSpec[object]]:
    source = f"package {_package_of(ep)}, entry point {ep.name!r} ({ep.value})"
    try:
        value = ep.load()
    except Exception as err:
        raise PluginLoadError([f"{source}: cannot import: {type(err).__name__}: {err}"]) from err
    try:
        return specs_from(value, source)
    except PluginLoadError as err:
        raise PluginLoadError([line.removeprefix("plugin ") for line in err.lines]) from err


def load_plugins(base: Registry, targets: Iterable[str] = (), use_entry_points: bool = True) -> Registry:
    """``base`` plus the plugins of installed entry points and of ``targets`` (``module:attribute``).

    Raises ``PluginLoadError`` listing every problem: imports that fail, values that are
    not plugin specs, names that clash with a plugin already registered. An installed
    package whose entry point fails to load does not raise: it is listed in the
    registry's ``broken``, so that only a configuration enabling a plugin the registry
    lacks fails (naming the package), and other commands go on with a warning.
    """
    lines: list[str] = []
    broken: list[str] = []  # installed packages that fail: an error only where a config enables them
    found: list[tuple[str, PluginSpec[object]]] = []
    # Entry points are told from targets by where they came from, not by their class: a
    # metadata finder installed by another package (the importlib_metadata backport) yields
    # entry points of its own class.
    sources: list[tuple[str, EntryPoint | None, str]] = []
    if use_entry_points:
        sources.extend((f"{ep.value} (entry point {ep.name!r})", ep, "") for ep in entry_points(group=ENTRY_POINT_GROUP))
    sources.extend((t, None, t) for t in targets)
    for source, entry_point, target in sources:
        try:
            specs = _from_entry_point(entry_point) if entry_point is not None else _from_target(target)
        except PluginLoadError as err:
            (broken if entry_point is not None else lines).extend(err.lines)
            continue
        found.extend((source, spec) for spec in specs)
    registry = Registry(base.specs(), base.defaults, base.unimplemented, base.features)
    seen: dict[str, str] = {}
    for source, spec in found:
        if registry.get(spec.name) is spec:
            continue  # the same plugin named twice (an entry point also given with --plugin)
        if spec.name in registry:
            where = f"also from {seen[spec.name]}" if spec.name in seen else "an in-tree plugin"
            lines.append(f'plugin "{spec.name}" from {source}: a plugin of that name is already registered ({where})')
            continue
        registry.register(spec)
        seen[spec.name] = source
    if lines:
        raise PluginLoadError(lines)
    registry.unimplemented = registry.unimplemented - frozenset(seen)
    registry.broken = base.broken + broken
    return registry
