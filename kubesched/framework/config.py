"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``): decoding, defaults, validation.

The same three steps as kube-scheduler's loading of ``--config`` (``cmd/kube-scheduler/app/options``):

1. strict decoding into the v1 types (``config_decode``): unknown or repeated fields,
   values of the wrong type, integers out of their Go range, durations in Go's syntax;
2. defaulting (``config_defaults``, after ``apis/config/v1/defaults.go``): parallelism,
   profiles and their merged plugins and default plugin args, leader election, client
   connection, backoffs, profiling;
3. validation (``config_validation``, after ``apis/config/validation``), with upstream's
   field paths and messages.

Every problem of every step is reported, one per line (``ConfigError.lines``), where
upstream stops at the first decoding error. Plugins a profile enables must exist in the
registry (upstream finds that out when it builds the profile); plugins kubesched does
not implement may be disabled, not enabled. ``config_encode.versioned_config`` writes
the defaulted configuration back as upstream's ``--write-config-to`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .args import go_quote
from .config_decode import V1Config, check_type_meta, decode_config, read_config_text
from .config_defaults import default_config_from, default_plugins, merge_plugin_set, merge_plugins
from .config_encode import versioned_config
from .config_types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    POINTS_WITH_MULTI,
    ConfigError,
    LeaderElection,
    PluginRef,
    PluginSet,
    Profile,
    SchedulerConfig,
)
from .config_validation import INVALID_PLUGINS, validate_config
from .extender_config import ExtenderConfig, parse_extenders
from .registry import Registry

__all__ = [
    "API_VERSION",
    "KIND",
    "DEFAULT_SCHEDULER_NAME",
    "POINTS_WITH_MULTI",
    "ConfigError",
    "ExtenderConfig",
    "LeaderElection",
    "PluginRef",
    "PluginSet",
    "Profile",
    "SchedulerConfig",
    "parse_config",
    "needs_raw_objects",
    "default_config",
    "load_config",
    "validate_config",
    "versioned_config",
    "default_plugins",
    "merge_plugin_set",
    "merge_plugins",
]


def needs_raw_objects(config: SchedulerConfig, registry: Registry) -> bool:
    """Whether a profile enables a plugin whose spec says ``needs_raw`` (or the config has
    HTTP extenders, which are sent whole nodes): then nodes and bound pods keep their documents."""
    if config.extenders:
        return True
    for profile in config.profiles:
        for plugin_set in profile.plugins.values():
            for ref in plugin_set.enabled:
                spec = registry.get(ref.name)
                if spec is not None and spec.needs_raw:
                    return True
    return False


def _plugin_existence(raw: V1Config, registry: Registry, upstream_only: frozenset[str],
                      problems: list[tuple[str, str]]) -> None:
    """Plugins a profile enables that the registry lacks, at the file's own indices."""
    for i, profile in enumerate(raw.profiles):
        for point, plugin_set in (profile.plugins or {}).items():
            for j, ref in enumerate(plugin_set.enabled):
                if ref.name in registry or (ref.name in INVALID_PLUGINS and point != "multiPoint"):
                    continue  # (a removed plugin at a point: validation said so, as upstream's does)
                where = f"profiles[{i}].plugins.{point}.enabled[{j}]"
                if ref.name in upstream_only:
                    problems.append((where, f"plugin {ref.name} is an upstream plugin kubesched does not implement; disable it"))
                elif registry.broken:  # perhaps the plugin of a package that failed to load: say which
                    problems.append((where, f"plugin {go_quote(ref.name)} does not exist; installed plugin "
                                            + "; ".join(registry.broken)))
                else:
                    problems.append((where, f"plugin {go_quote(ref.name)} does not exist"))


def parse_config(raw: Any, registry: Registry, upstream_only: frozenset[str] | None = None, source: str = "") -> SchedulerConfig:
    """Decode, default and validate. Raises ``ConfigError`` listing every problem.

    ``upstream_only``: upstream plugins a config may disable but not enable (default:
    the registry's ``unimplemented``).
    """
    return _parse(raw, registry, upstream_only, source, [])


def _parse(raw: Any, registry: Registry, upstream_only: frozenset[str] | None, source: str,
           strict: list[tuple[str, str]]) -> SchedulerConfig:
    """``parse_config`` after the file's own strict errors (keys set twice)."""
    if upstream_only is None:
        upstream_only = registry.unimplemented
    if not isinstance(raw, dict):
        kind = "a list" if isinstance(raw, list) else "empty" if raw is None else f"a {type(raw).__name__}"
        raise ConfigError([("", f"not a KubeSchedulerConfiguration: the document is {kind}, not an object")], source)
    meta = check_type_meta(raw)
    if meta:
        raise ConfigError(meta, source)
    problems: list[tuple[str, str]] = list(strict)

    def report(path: str, message: str) -> None:
        problems.append((path, message))

    decoded = decode_config(raw, report)
    config = default_config_from(decoded, registry, report)
    names = [[entry.name for entry in p.plugin_config] for p in decoded.profiles] if decoded.profiles else None
    problems.extend(validate_config(config, names))
    config.extenders = parse_extenders(decoded.extenders, report)  # decoded and validated last, as upstream
    _plugin_existence(decoded, registry, upstream_only, problems)
    if problems:
        raise ConfigError(problems, source)
    return config


def default_config(registry: Registry, upstream_only: frozenset[str] | None = None) -> SchedulerConfig:
    """What kube-scheduler runs without ``--config``: every default."""
    return parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, upstream_only)


def load_config(path: str | Path, registry: Registry, upstream_only: frozenset[str] | None = None) -> SchedulerConfig:
    """The configuration file at ``path``: read, decoded, defaulted and validated.

    Raises ``ConfigError`` naming ``path``: unreadable, not UTF-8, not YAML, not exactly one
    document, a key set twice, or any problem ``parse_config`` finds.
    """
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise ConfigError([("", err.strerror or str(err))], source) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError([("", f"not UTF-8 text (byte {err.start})")], source) from None
    try:
        document, repeated = read_config_text(text)
    except ConfigError as err:
        err.source = source
        raise
    return _parse(document, registry, upstream_only, source, repeated)
