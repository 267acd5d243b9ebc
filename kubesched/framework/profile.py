"""Building a ``Framework`` from a profile: instantiate plugins, expand ``multiPoint``, set weights.

Follows upstream's ``NewFramework`` and ``expandMultiPointPlugins``: a plugin
listed under ``multiPoint`` joins every extension point it implements, unless
that point disables it; a plugin also listed at a specific point keeps that
point's position (it "overrides" the multiPoint entry).
"""

from __future__ import annotations

from typing import Callable

from .config import ConfigError, Profile, SchedulerConfig
from .config_validation import score_weight_overflow
from .handle import Handle
from .interfaces import Plugin
from .registry import Registry
from .runtime import EXTENSION_POINTS, POINT_METHODS, Framework

__all__ = ["build_framework", "build_profiles", "implements", "HandleFactory"]

HandleFactory = Callable[[str], Handle]
"""The handle for a profile, by its scheduler name."""


def implements(plugin: object, point: str) -> bool:
    return any(callable(getattr(plugin, m, None)) for m in POINT_METHODS[point])


def _instantiate(name: str, profile: Profile, registry: Registry, handle: Handle, instances: dict[str, Plugin],
                 path: str) -> Plugin:
    if name not in instances:
        spec = registry.get(name)
        if spec is None:
            raise ConfigError([(path, f'plugin "{name}" does not exist')])
        try:
            plugin = spec.build(profile.plugin_config.get(name), handle)
        except ConfigError:
            raise
        except Exception as err:  # a plugin's own bug or refusal: one line naming it
            raise ConfigError([(path, f'plugin "{name}": initializing: {err}')]) from err
        if getattr(plugin, "name", None) != name:
            raise ConfigError([(path, f'plugin "{name}": its factory made a plugin named {getattr(plugin, "name", None)!r}')])
        instances[name] = plugin
    return instances[name]


def build_framework(profile: Profile, registry: Registry, handle: Handle, path: str = "profile") -> Framework:
    problems: list[tuple[str, str]] = []
    instances: dict[str, Plugin] = {}
    points: dict[str, list[Plugin]] = {}
    multi = profile.plugins["multiPoint"].enabled
    for point in EXTENSION_POINTS:
        plugin_set = profile.plugins[point]
        specific: list[str] = []
        for ref in plugin_set.enabled:
            plugin = _instantiate(ref.name, profile, registry, handle, instances, path)
            if not implements(plugin, point):
                problems.append((f"{path}.plugins.{point}", f'plugin "{ref.name}" does not extend {point} plugin'))
                continue
            if ref.name in specific:
                problems.append((f"{path}.plugins.{point}", f'plugin "{ref.name}" already registered as "{point}"'))
                continue
            specific.append(ref.name)
        disabled = {r.name for r in plugin_set.disabled}
        ordered = list(specific)
        if "*" not in disabled and multi:
            overrides: list[str] = []
            from_multi: list[str] = []
            for ref in multi:
                plugin = _instantiate(ref.name, profile, registry, handle, instances, path)
                if not implements(plugin, point) or ref.name in disabled:
                    continue
                if ref.name in specific:
                    overrides.append(ref.name)
                    continue
                if ref.name in from_multi:
                    problems.append((f"{path}.plugins.multiPoint", f'plugin "{ref.name}" already registered as "{point}"'))
                    continue
                from_multi.append(ref.name)
            ordered = (
                [n for n in specific if n in overrides] + from_multi + [n for n in specific if n not in overrides]
            )
        points[point] = [instances[n] for n in ordered]
    if len(points["queueSort"]) != 1:
        problems.append(
            (f"{path}.plugins.queueSort",
             f'only one queue sort plugin required for profile with scheduler name "{profile.scheduler_name}", '
             f"but got {len(points['queueSort'])}")
        )
    if not points["bind"]:
        problems.append(
            (f"{path}.plugins.bind", f'at least one bind plugin is needed for profile with scheduler name "{profile.scheduler_name}"')
        )
    if len(points["placementGenerate"]) > 1:
        problems.append(
            (f"{path}.plugins.placementGenerate",
             f'at most one placement generate plugin is allowed for profile with scheduler name "{profile.scheduler_name}"')
        )
    weights = _weights(profile, "score", instances)
    placement_weights = _weights(profile, "placementScore", instances)
    for point, found in (("score", weights), ("placementScore", placement_weights)):
        overflow = score_weight_overflow(point, list(found.values()))
        if overflow:
            problems.append((f"{path}.plugins.{point}", overflow))
    if problems:
        raise ConfigError(problems)
    return Framework(profile.scheduler_name, points, weights, profile.percentage_of_nodes_to_score, instances,
                     placement_weights, handle.features.enable_workload_aware_preemption)


def _weights(profile: Profile, point: str, instances: dict[str, Plugin]) -> dict[str, int]:
    """``getValidScoreWeights``: the weight of every plugin of ``point`` (Score or PlacementScore),
    the point's own entry first, then multiPoint's; an unset weight is 1."""
    weights: dict[str, int] = {}
    for ref in list(profile.plugins[point].enabled) + list(profile.plugins["multiPoint"].enabled):
        found = instances.get(ref.name)
        if found is None or not implements(found, point) or ref.name in weights:
            continue
        weights[ref.name] = ref.weight or 1
    return weights


def build_profiles(config: SchedulerConfig, registry: Registry, handles: HandleFactory) -> dict[str, Framework]:
    profiles = {}
    problems: list[tuple[str, str]] = []
    for i, profile in enumerate(config.profiles):
        try:
            handle = handles(profile.scheduler_name)
            profiles[profile.scheduler_name] = build_framework(profile, registry, handle, f"profiles[{i}]")
        except ConfigError as err:
            problems.extend(err.problems)
    if problems:
        raise ConfigError(problems)
    return profiles
