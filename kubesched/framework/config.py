"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``): decoding, defaults, validation.

Decoding is strict, as upstream's: an unknown field is an error. Defaults follow
``apis/config/v1/defaults.go``: one ``default-scheduler`` profile when none is
given, the default plugins merged under each profile's own (``mergePlugins``),
default args for plugins that have them. Validation reports every problem, each
with the path of the field at fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .args import ArgsError
from .extender_config import ExtenderConfig, parse_extenders
from .registry import Registry
from .runtime import EXTENSION_POINTS

__all__ = [
    "API_VERSION",
    "KIND",
    "ConfigError",
    "ExtenderConfig",
    "PluginRef",
    "PluginSet",
    "Profile",
    "SchedulerConfig",
    "parse_config",
    "default_config",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
POINTS_WITH_MULTI = EXTENSION_POINTS + ("multiPoint",)

_TOP_FIELDS = (
    "apiVersion",
    "kind",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "healthzBindAddress",
    "metricsBindAddress",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    "delayCacheUntilActive",
)
_LEADER_FIELDS = (
    "leaderElect",
    "leaseDuration",
    "renewDeadline",
    "retryPeriod",
    "resourceLock",
    "resourceName",
    "resourceNamespace",
)
_CLIENT_FIELDS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
_PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")


class ConfigError(ValueError):
    """Every problem found in a configuration, each as ``(field path, message)``."""

    def __init__(self, problems: list[tuple[str, str]], source: str = "") -> None:
        self.problems = problems
        self.source = source
        super().__init__("; ".join(f"{f}: {m}" for f, m in problems))

    def lines(self) -> list[str]:
        prefix = f"{self.source}: " if self.source else ""
        return [f"{prefix}KubeSchedulerConfiguration {f}: {m}" for f, m in self.problems]


@dataclass(slots=True)
class PluginRef:
    name: str
    weight: int = 0


@dataclass(slots=True)
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[PluginRef] = field(default_factory=list)


@dataclass(slots=True)
class Profile:
    scheduler_name: str
    plugins: dict[str, PluginSet]
    plugin_config: dict[str, Any]  # plugin name -> parsed args
    percentage_of_nodes_to_score: int | None = None


@dataclass(slots=True)
class LeaderElection:
    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass(slots=True)
class SchedulerConfig:
    profiles: list[Profile]
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    parallelism: int = 16
    delay_cache_until_active: bool = False  # with leader election: fill the caches only once leading
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100
    extenders: list[ExtenderConfig] = field(default_factory=list)

    def profile(self, name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == name), None)


class _Problems:
    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.items.append((path, message))

    def fields(self, raw: Any, allowed: tuple[str, ...], path: str) -> Mapping[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.add(path, f"must be an object, got {type(raw).__name__}")
            return {}
        for key in raw:
            if key not in allowed:
                self.add(f"{path}.{key}" if path else key, f'unknown field "{key}"')
        return raw

    def integer(self, raw: Mapping[str, Any], key: str, path: str) -> int | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            self.add(path, f"must be an integer, got {value!r}")
            return None
        return value


def _duration(text: Any) -> float | None:
    """A Go duration such as ``15s`` or ``1m30s`` in seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    if not isinstance(text, str):
        return None
    parts = re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


def _plugin_set(raw: Any, path: str, problems: _Problems) -> PluginSet:
    raw = problems.fields(raw, ("enabled", "disabled"), path)
    out = PluginSet()
    for kind in ("enabled", "disabled"):
        items = raw.get(kind) or []
        if not isinstance(items, list):
            problems.add(f"{path}.{kind}", "must be a list")
            continue
        for i, item in enumerate(items):
            p = f"{path}.{kind}[{i}]"
            item = problems.fields(item, ("name", "weight"), p)
            name = item.get("name")
            if not isinstance(name, str) or not name:
                problems.add(f"{p}.name", "must be a plugin name")
                continue
            weight = problems.integer(item, "weight", f"{p}.weight") or 0
            if weight < 0:
                problems.add(f"{p}.weight", f"must be a non-negative integer, got {weight}")
            getattr(out, kind).append(PluginRef(name, weight))
    return out


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """``mergePluginSet``: defaults in place (overridden by custom entries), then the custom rest."""
    disabled = {p.name for p in custom.disabled}
    custom_index = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for plugin in default.enabled:
            if plugin.name in disabled:
                continue
            found = custom_index.get(plugin.name)
            if found is not None:
                replaced.add(found[0])
                plugin = found[1]
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled, [PluginRef(p.name) for p in custom.disabled])


def default_plugins(registry: Registry) -> dict[str, PluginSet]:
    """The registry's default ``multiPoint`` plugins (upstream's ``getDefaultPlugins``), those it has."""
    multi = [PluginRef(p.name, p.weight) for p in registry.defaults if p.name in registry]
    sets = {point: PluginSet() for point in POINTS_WITH_MULTI}
    sets["multiPoint"] = PluginSet(multi)
    return sets


def _args_for(name: str, raw_args: Any, registry: Registry, path: str, problems: _Problems) -> Any:
    spec = registry.get(name)
    if spec is None or not spec.takes_args:
        if raw_args:
            problems.add(path, f"plugin {name} takes no args")
        return None
    try:
        return spec.decode(raw_args)
    except ArgsError as err:
        problems.add(f"{path}.{err.field}" if err.field else path, err.message)
        return None


def _profile(raw: Any, index: int, registry: Registry, problems: _Problems, upstream_only: frozenset[str]) -> Profile | None:
    path = f"profiles[{index}]"
    raw = problems.fields(raw, _PROFILE_FIELDS, path)
    name = raw.get("schedulerName", DEFAULT_SCHEDULER_NAME) or ""
    if not isinstance(name, str) or not name:
        problems.add(f"{path}.schedulerName", "Required value")
        name = ""
    percentage = problems.integer(raw, "percentageOfNodesToScore", f"{path}.percentageOfNodesToScore")
    if percentage is not None and not 0 <= percentage <= 100:
        problems.add(f"{path}.percentageOfNodesToScore", f"Invalid value: {percentage}: not in valid range [0-100]")
    plugins_raw = problems.fields(raw.get("plugins"), POINTS_WITH_MULTI, f"{path}.plugins")
    custom = {point: _plugin_set(plugins_raw.get(point), f"{path}.plugins.{point}", problems) for point in POINTS_WITH_MULTI}
    defaults = default_plugins(registry)
    merged = {point: merge_plugin_set(defaults[point], custom[point]) for point in POINTS_WITH_MULTI}
    for point, plugin_set in custom.items():  # the defaults are valid: check what the file says, at its indices
        for i, ref in enumerate(plugin_set.enabled):
            if ref.name in registry:
                continue
            where = f"{path}.plugins.{point}.enabled[{i}]"
            if ref.name in upstream_only:
                problems.add(where, f"plugin {ref.name} is an upstream plugin kubesched does not implement; disable it")
            else:
                problems.add(where, f'plugin "{ref.name}" does not exist')
        for i, ref in enumerate(plugin_set.disabled):
            if ref.name != "*" and ref.name not in registry and ref.name not in upstream_only:
                problems.add(f"{path}.plugins.{point}.disabled[{i}]", f'plugin "{ref.name}" does not exist')
    enabled_names = {ref.name for s in merged.values() for ref in s.enabled}
    plugin_config: dict[str, Any] = {}
    configs = raw.get("pluginConfig") or []
    if not isinstance(configs, list):
        problems.add(f"{path}.pluginConfig", "must be a list")
        configs = []
    seen: set[str] = set()
    for i, entry in enumerate(configs):
        p = f"{path}.pluginConfig[{i}]"
        entry = problems.fields(entry, ("name", "args"), p)
        plugin = entry.get("name")
        if not isinstance(plugin, str) or not plugin:
            problems.add(f"{p}.name", "must be a plugin name")
            continue
        if plugin in seen:
            problems.add(f"{p}.name", f'Duplicate value: "{plugin}"')
            continue
        seen.add(plugin)
        if plugin not in registry:
            if plugin not in upstream_only:
                problems.add(f"{p}.name", f'plugin "{plugin}" does not exist')
            continue
        plugin_config[plugin] = _args_for(plugin, entry.get("args"), registry, f"{p}.args", problems)
    for plugin in enabled_names:
        spec = registry.get(plugin)
        if spec is not None and spec.takes_args and plugin not in plugin_config:
            plugin_config[plugin] = spec.decode(None)
    return Profile(name, merged, plugin_config, percentage)


def parse_config(raw: Any, registry: Registry, upstream_only: frozenset[str] | None = None, source: str = "") -> SchedulerConfig:
    """Decode, default and validate. Raises ``ConfigError`` listing every problem.

    ``upstream_only``: upstream plugins a config may disable but not enable (default:
    the registry's ``unimplemented``).
    """
    if upstream_only is None:
        upstream_only = registry.unimplemented
    problems = _Problems()
    if not isinstance(raw, Mapping):
        raise ConfigError([("", "must be a KubeSchedulerConfiguration object")], source)
    if raw.get("apiVersion") != API_VERSION:
        problems.add("apiVersion", f"must be {API_VERSION!r}, got {raw.get('apiVersion')!r}")
    if raw.get("kind") != KIND:
        problems.add("kind", f"must be {KIND!r}, got {raw.get('kind')!r}")
    problems.fields(raw, _TOP_FIELDS, "")
    config = SchedulerConfig(profiles=[])
    parallelism = problems.integer(raw, "parallelism", "parallelism")
    if parallelism is not None:
        if parallelism <= 0:
            problems.add("parallelism", f"Invalid value: {parallelism}: should be an integer value greater than zero")
        config.parallelism = parallelism
    delay = raw.get("delayCacheUntilActive")
    if delay is not None:
        if not isinstance(delay, bool):
            problems.add("delayCacheUntilActive", f"must be a boolean, got {delay!r}")
        else:
            config.delay_cache_until_active = delay
    percentage = problems.integer(raw, "percentageOfNodesToScore", "percentageOfNodesToScore")
    if percentage is not None:
        if not 0 <= percentage <= 100:
            problems.add("percentageOfNodesToScore", f"Invalid value: {percentage}: not in valid range [0-100]")
        config.percentage_of_nodes_to_score = percentage
    initial = problems.integer(raw, "podInitialBackoffSeconds", "podInitialBackoffSeconds")
    if initial is not None:
        if initial <= 0:
            problems.add("podInitialBackoffSeconds", f"Invalid value: {initial}: must be greater than 0")
        config.pod_initial_backoff_seconds = float(initial)
    maximum = problems.integer(raw, "podMaxBackoffSeconds", "podMaxBackoffSeconds")
    if maximum is not None:
        config.pod_max_backoff_seconds = float(maximum)
    if config.pod_max_backoff_seconds < config.pod_initial_backoff_seconds:
        problems.add(
            "podMaxBackoffSeconds",
            f"Invalid value: {int(config.pod_max_backoff_seconds)}: must be greater than or equal to PodInitialBackoffSeconds",
        )
    leader = problems.fields(raw.get("leaderElection"), _LEADER_FIELDS, "leaderElection")
    le = config.leader_election
    if "leaderElect" in leader:
        if not isinstance(leader["leaderElect"], bool):
            problems.add("leaderElection.leaderElect", "must be a boolean")
        else:
            le.leader_elect = leader["leaderElect"]
    for key, attr in (("leaseDuration", "lease_duration"), ("renewDeadline", "renew_deadline"), ("retryPeriod", "retry_period")):
        if key in leader:
            seconds = _duration(leader[key])
            if seconds is None or seconds < 0:
                problems.add(f"leaderElection.{key}", f"must be a positive duration such as 15s, got {leader[key]!r}")
            elif seconds > 0:  # 0s is unset: upstream's defaulting keeps 15s, 10s, 2s
                setattr(le, attr, seconds)
    for key, attr in (("resourceLock", "resource_lock"), ("resourceName", "resource_name"), ("resourceNamespace", "resource_namespace")):
        if key in leader:
            setattr(le, attr, str(leader[key]))
    if le.leader_elect and le.lease_duration <= le.renew_deadline:
        problems.add("leaderElection.leaseDuration", "must be greater than renewDeadline")
    client = problems.fields(raw.get("clientConnection"), _CLIENT_FIELDS, "clientConnection")
    config.kubeconfig = str(client.get("kubeconfig") or "")
    qps, burst = client.get("qps"), client.get("burst")
    if qps is not None:
        if isinstance(qps, bool) or not isinstance(qps, (int, float)):
            problems.add("clientConnection.qps", f"must be a number, got {qps!r}")
        elif qps != 0:  # 0 is unset: upstream defaults it to 50
            config.qps = float(qps)
    if burst is not None:
        if isinstance(burst, bool) or not isinstance(burst, int):
            problems.add("clientConnection.burst", f"must be an integer, got {burst!r}")
        elif burst != 0:  # 0 is unset: upstream defaults it to 100
            config.burst = burst
    profiles = raw.get("profiles")
    if profiles is None or profiles == []:
        profiles = [{}]
    if not isinstance(profiles, list):
        problems.add("profiles", "must be a list")
        profiles = [{}]
    names: set[str] = set()
    for i, prof in enumerate(profiles):
        profile = _profile(prof, i, registry, problems, upstream_only)
        if profile is None:
            continue
        if profile.scheduler_name and profile.scheduler_name in names:
            problems.add(f"profiles[{i}].schedulerName", f'Duplicate value: "{profile.scheduler_name}"')
        names.add(profile.scheduler_name)
        config.profiles.append(profile)
    sorts = {tuple(r.name for r in _queue_sort_refs(p)) for p in config.profiles}
    if len(sorts) > 1:
        problems.add("profiles[1].plugins.queueSort", "Invalid value: queueSort must be the same for all profiles")
    config.extenders = parse_extenders(raw.get("extenders"), problems.add)  # validated last, as upstream
    if problems.items:
        raise ConfigError(problems.items, source)
    return config


def _queue_sort_refs(profile: Profile) -> list[PluginRef]:
    specific = profile.plugins["queueSort"].enabled
    if specific:
        return specific
    disabled = {r.name for r in profile.plugins["queueSort"].disabled}
    if "*" in disabled:
        return []
    return [r for r in profile.plugins["multiPoint"].enabled if r.name == "PrioritySort" and r.name not in disabled]


def default_config(registry: Registry, upstream_only: frozenset[str] | None = None) -> SchedulerConfig:
    return parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, upstream_only)
