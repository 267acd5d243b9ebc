"""Defaulting a decoded v1 ``KubeSchedulerConfiguration``, as ``apis/config/v1/defaults.go`` does.

``SetDefaults_KubeSchedulerConfiguration``: parallelism 16; one profile when none is
given, named ``default-scheduler`` only when it is the only one and has no name; each
profile's plugins merged over the default ones (``mergePlugins``) and a default
``pluginConfig`` entry appended for every enabled plugin with args (sorted by name);
``percentageOfNodesToScore`` 0; the Lease ``leases`` in ``kube-system``/``kube-scheduler``;
client ``application/vnd.kubernetes.protobuf``, qps 50, burst 100 (0 means unset);
``RecommendedDefaultLeaderElectionConfiguration``: 15s, 10s, 2s (``0s`` means unset) and
``leaderElect`` true; backoffs 1s and 10s; profiling on, contention profiling on when
profiling is.
"""

from __future__ import annotations

from typing import Any, Callable

from .args import ArgsError, go_quote
from .config_decode import GROUP, V1Config, V1Profile
from .config_go import NANOS_PER_SECOND
from .config_types import API_VERSION, DEFAULT_SCHEDULER_NAME, POINTS_WITH_MULTI, LeaderElection, PluginRef, PluginSet, Profile, SchedulerConfig
from .registry import Registry

__all__ = ["merge_plugin_set", "merge_plugins", "default_plugins", "default_config_from", "DEFAULT_CONTENT_TYPE"]

DEFAULT_CONTENT_TYPE = "application/vnd.kubernetes.protobuf"

Report = Callable[[str, str], None]


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


def merge_plugins(default: dict[str, PluginSet], custom: dict[str, PluginSet] | None) -> dict[str, PluginSet]:
    """``mergePlugins``: the defaults when the profile has no ``plugins``, else every point merged."""
    if custom is None:
        return {point: PluginSet(list(default[point].enabled), list(default[point].disabled)) for point in POINTS_WITH_MULTI}
    return {point: merge_plugin_set(default[point], custom[point]) for point in POINTS_WITH_MULTI}


def default_plugins(registry: Registry) -> dict[str, PluginSet]:
    """The registry's default ``multiPoint`` plugins (upstream's ``getDefaultPlugins``), those it has."""
    multi = [PluginRef(p.name, p.weight) for p in registry.defaults if p.name in registry]
    sets = {point: PluginSet() for point in POINTS_WITH_MULTI}
    sets["multiPoint"] = PluginSet(multi)
    return sets


def _args(name: str, raw_args: Any, registry: Registry, path: str, report: Report) -> tuple[bool, Any]:
    """The plugin's decoded, defaulted args: ``(True, args)``, or ``(False, None)`` when it has none to decode."""
    spec = registry.get(name)
    if spec is None or not spec.takes_args:
        return False, None  # upstream: no <Name>Args kind is registered, the args are kept undecoded
    if isinstance(raw_args, dict):  # decodeNestedObjects: the args' own type meta must be the plugin's
        version, kind = raw_args.get("apiVersion"), raw_args.get("kind")
        if version not in (None, "", API_VERSION):
            report(path, f"decoding args for plugin {name}: no kind {go_quote(str(kind or name + 'Args'))} "
                         f"is registered for version {go_quote(str(version))}")
            return True, None
        if kind not in (None, "", f"{name}Args"):
            report(path, f"args for plugin {name} were not of type {name}Args.{GROUP}, got {kind}.{GROUP}")
            return True, None
    try:
        return True, spec.decode(raw_args, registry.features)
    except ArgsError as err:
        report(f"{path}.{err.field}" if err.field else path, err.message)
        return True, None


def _profile(raw: V1Profile, index: int, single: bool, registry: Registry, report: Report) -> Profile:
    name = raw.scheduler_name
    if name is None:
        name = DEFAULT_SCHEDULER_NAME if single else ""
    plugins = merge_plugins(default_plugins(registry), raw.plugins)
    plugin_config: dict[str, Any] = {}
    raw_args: dict[str, Any] = {}
    for j, entry in enumerate(raw.plugin_config):
        decoded, args = _args(entry.name, entry.args, registry, f"profiles[{index}].pluginConfig[{j}].args", report)
        if entry.name in plugin_config or entry.name in raw_args:
            continue  # a duplicate: validation reports it
        raw_args[entry.name] = entry.args
        if decoded:
            plugin_config[entry.name] = args
    for plugin in sorted({ref.name for s in plugins.values() for ref in s.enabled}):
        spec = registry.get(plugin)
        if spec is not None and spec.takes_args and plugin not in raw_args:
            plugin_config[plugin] = spec.decode(None, registry.features)
    return Profile(name, plugins, plugin_config, raw.percentage_of_nodes_to_score, raw_args)


def _seconds(nanos: int, default: float) -> float:
    return nanos / NANOS_PER_SECOND if nanos != 0 else default


def default_config_from(raw: V1Config, registry: Registry, report: Report) -> SchedulerConfig:
    """The defaulted configuration (upstream's internal object after conversion); args problems to ``report``."""
    profiles = raw.profiles or [V1Profile()]
    le = raw.leader_election
    cc = raw.client_connection
    profiling = True if raw.enable_profiling is None else raw.enable_profiling
    contention = raw.enable_contention_profiling
    if profiling and contention is None:
        contention = True
    return SchedulerConfig(
        profiles=[_profile(p, i, len(profiles) == 1, registry, report) for i, p in enumerate(profiles)],
        percentage_of_nodes_to_score=0 if raw.percentage_of_nodes_to_score is None else raw.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=float(1 if raw.pod_initial_backoff_seconds is None else raw.pod_initial_backoff_seconds),
        pod_max_backoff_seconds=float(10 if raw.pod_max_backoff_seconds is None else raw.pod_max_backoff_seconds),
        parallelism=16 if raw.parallelism is None else raw.parallelism,
        delay_cache_until_active=raw.delay_cache_until_active,
        leader_election=LeaderElection(
            leader_elect=True if le.leader_elect is None else le.leader_elect,
            lease_duration=_seconds(le.lease_duration, 15.0),
            renew_deadline=_seconds(le.renew_deadline, 10.0),
            retry_period=_seconds(le.retry_period, 2.0),
            resource_lock=le.resource_lock or "leases",
            resource_name=le.resource_name or "kube-scheduler",
            resource_namespace=le.resource_namespace or "kube-system",
        ),
        kubeconfig=cc.kubeconfig,
        accept_content_types=cc.accept_content_types,
        content_type=cc.content_type or DEFAULT_CONTENT_TYPE,
        qps=cc.qps if cc.qps != 0 else 50.0,
        burst=cc.burst if cc.burst != 0 else 100,
        enable_profiling=profiling,
        enable_contention_profiling=contention,
    )
