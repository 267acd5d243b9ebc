"""Validating a defaulted ``KubeSchedulerConfiguration``, as upstream's validation does.

``ValidateKubeSchedulerConfiguration`` (``apis/config/validation/validation.go``) with
component-base's ``ValidateClientConnectionConfiguration`` and
``ValidateLeaderElectionConfiguration``, in their order, each problem a field error
printed as apimachinery prints it (``Invalid value: 0: should be ...``, a duration by
its ``String()``, a struct by ``%#v``). Every problem is reported.
"""

from __future__ import annotations

from typing import Any, Sequence

from collections.abc import Mapping

from ..objects.api_messages import label_key
from .args import go_quote
from .config_go import NANOS_PER_SECOND, format_duration
from .config_types import API_VERSION, PluginSet, SchedulerConfig
from .interfaces import MAX_NODE_SCORE
from .runtime import EXTENSION_POINTS

__all__ = ["validate_config", "INVALID_PLUGINS", "score_weight_overflow"]

# invalidPluginsByVersion for v1: removed plugins a v1 configuration may not name.
INVALID_PLUGINS = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})

Problems = list[tuple[str, str]]


def _duration(seconds: float) -> str:
    return format_duration(round(seconds * NANOS_PER_SECOND))


def _invalid_plugin(name: str) -> str:
    return (f"Invalid value: {go_quote(name)}: was invalid in version {go_quote(API_VERSION)} "
            f"(KubeSchedulerConfiguration is version {go_quote(API_VERSION)})")


def _go_plugin_set(plugins: PluginSet) -> str:
    """The internal ``config.PluginSet`` as ``%#v`` prints it."""
    def plugins_of(items: Sequence[tuple[str, int]]) -> str:
        if not items:
            return "[]config.Plugin(nil)"
        inner = ", ".join(f"config.Plugin{{Name:{go_quote(n)}, Weight:{w}}}" for n, w in items)
        return f"[]config.Plugin{{{inner}}}"

    enabled = [(p.name, p.weight) for p in plugins.enabled]
    disabled = [(p.name, 0) for p in plugins.disabled]
    return f"config.PluginSet{{Enabled:{plugins_of(enabled)}, Disabled:{plugins_of(disabled)}}}"


def _same_plugin_set(a: PluginSet, b: PluginSet) -> bool:
    """``apiequality.Semantic.DeepEqual`` of two plugin sets (nil and empty lists alike)."""
    return ([(p.name, p.weight) for p in a.enabled] == [(p.name, p.weight) for p in b.enabled]
            and [p.name for p in a.disabled] == [p.name for p in b.disabled])


def _percentage(value: int | None, path: str, problems: Problems) -> None:
    if value is not None and not 0 <= value <= 100:
        problems.append((path, f"Invalid value: {value}: not in valid range [0-100]"))


def _leader_election(cfg: SchedulerConfig, problems: Problems) -> None:
    le = cfg.leader_election
    if not le.leader_elect:
        return
    for key, value in (("leaseDuration", le.lease_duration), ("renewDeadline", le.renew_deadline),
                       ("retryPeriod", le.retry_period)):
        if value <= 0:
            problems.append((f"leaderElection.{key}", f"Invalid value: {_duration(value)}: must be greater than zero"))
    if le.lease_duration <= le.renew_deadline:
        problems.append(("leaderElection.leaseDuration",
                         f"Invalid value: {_duration(le.renew_deadline)}: LeaseDuration must be greater than RenewDeadline"))
    for key, text in (("resourceLock", le.resource_lock), ("resourceNamespace", le.resource_namespace),
                      ("resourceName", le.resource_name)):
        if not text:
            problems.append((f"leaderElection.{key}", f'Invalid value: "": {key} is required'))
    if le.resource_lock != "leases":
        problems.append(("leaderElection.resourceLock",
                         f'Invalid value: {go_quote(le.resource_lock)}: resourceLock value must be "leases"'))


def _plugin_config(index: int, cfg: SchedulerConfig, names: Sequence[str] | None, problems: Problems) -> None:
    """``validatePluginConfig``: removed plugins named at a point or in ``pluginConfig``, duplicates."""
    profile = cfg.profiles[index]
    path = f"profiles[{index}]"
    for point in EXTENSION_POINTS:
        for i, ref in enumerate(profile.plugins[point].enabled):
            if ref.name in INVALID_PLUGINS:
                problems.append((f"{path}.plugins.{point}.enabled[{i}]", _invalid_plugin(ref.name)))
    seen: set[str] = set()
    for i, name in enumerate(names or ()):
        where = f"{path}.pluginConfig[{i}]"
        first = name not in seen
        if not first:
            problems.append((where, f"Duplicate value: {go_quote(name)}"))
        seen.add(name)
        if name in INVALID_PLUGINS:
            problems.append((where, _invalid_plugin(name)))
        elif name == "NodeAffinity" and first:
            _added_affinity_keys(profile.raw_args.get(name), f"{where}.args", problems)


def _term_keys(term: object, path: str, problems: Problems) -> None:
    """``labels.NewRequirement``'s key check on a node selector term's label expressions (a key
    failing ``IsLabelKey``: one ``Invalid value`` joining its problems)."""
    expressions = term.get("matchExpressions") if isinstance(term, Mapping) else None
    for i, expression in enumerate(expressions if isinstance(expressions, list) else ()):
        key = expression.get("key") if isinstance(expression, Mapping) else None
        if isinstance(key, str):
            found = label_key(key)
            if found:
                problems.append((f"{path}.matchExpressions[{i}].key", f"Invalid value: {go_quote(key)}: {'; '.join(found)}"))


def _empty_term(term: object) -> bool:
    return not isinstance(term, Mapping) or not (term.get("matchExpressions") or term.get("matchFields"))


def _added_affinity_keys(raw_args: object, path: str, problems: Problems) -> None:
    """``ValidateNodeAffinityArgs``: the label keys of ``addedAffinity``'s terms, required then
    preferred, by upstream's paths (a preferred term's expressions sit right under its index,
    no ``preference``; empty terms and zero-weight preferred terms are not parsed). Weights
    get no range check there: 101 passes."""
    affinity = raw_args.get("addedAffinity") if isinstance(raw_args, Mapping) else None
    if not isinstance(affinity, Mapping):
        return
    base = f"{path}.addedAffinity"
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    for i, term in enumerate(terms if isinstance(terms, list) else ()):
        if not _empty_term(term):
            _term_keys(term, f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]", problems)
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    for i, item in enumerate(preferred if isinstance(preferred, list) else ()):
        if not isinstance(item, Mapping) or not item.get("weight") or _empty_term(item.get("preference")):
            continue
        _term_keys(item.get("preference"), f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]", problems)


_INT64 = 2**64


def _int64(value: int) -> int:
    """``value`` wrapped as Go's int64 arithmetic wraps it."""
    value %= _INT64
    return value - _INT64 if value >= 2**63 else value


def score_weight_overflow(point: str, weights: Sequence[int]) -> str:
    """``getValidScoreWeights``' overflow check on one point's weights, in its order (the point's
    own entries, then multiPoint's; zero already made one): each weight times ``MaxNodeScore``
    must not exceed ``MaxTotalScore`` (int64's largest) less the sum so far, computed as Go
    computes it. A negative weight before another plugin's makes that difference wrap around
    to a negative number, so upstream refuses the profile. "" when the weights pass; otherwise
    ``NewFramework``'s message (``point``: "score" or "placementScore")."""
    total = 0
    for weight in weights:
        if _int64(weight * MAX_NODE_SCORE) > _int64(2**63 - 1 - total):
            what = "placement score plugins" if point == "placementScore" else "score plugins"
            return f"{what}: total score of Score plugins could overflow"
        total = _int64(total + weight * MAX_NODE_SCORE)
    return ""


def _common_queue_sort(cfg: SchedulerConfig, problems: Problems) -> None:
    """``validateCommonQueueSort``: every profile's queueSort set (and its args) as the first's."""
    first = cfg.profiles[0]
    canon = first.plugins["queueSort"]
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        problems.append(("profiles[0].plugins.queueSort.Enabled",
                         f"Invalid value: {len(canon.enabled)}: only one queue sort plugin can be enabled"))
    args: Any = first.plugin_config.get(name) if name else None
    for i, profile in enumerate(cfg.profiles[1:], start=1):
        current = profile.plugins["queueSort"]
        if not _same_plugin_set(canon, current):
            problems.append((f"profiles[{i}].plugins.queueSort",
                             f"Invalid value: {_go_plugin_set(current)}: must be the same for all profiles"))
        if name and name in profile.plugin_config and profile.plugin_config[name] != args:
            problems.append((f"profiles[{i}].pluginConfig.args",
                             f"Invalid value: {name} args: queueSort must be the same for all profiles"))


def validate_config(cfg: SchedulerConfig, plugin_config_names: Sequence[Sequence[str]] | None = None) -> Problems:
    """Every problem upstream's validation finds in ``cfg``, in its order (extenders excepted:
    ``extender_config`` validates them as it decodes them).

    ``plugin_config_names``: per profile, the ``pluginConfig`` names as the file lists them
    (for duplicates); without it only the defaulted entries are known, which cannot repeat.
    Callers that change a configuration after loading (command-line flags) validate again.
    """
    problems: Problems = []
    if cfg.burst < 0:
        problems.append(("clientConnection.burst", f"Invalid value: {cfg.burst}: must be non-negative"))
    _leader_election(cfg, problems)
    if cfg.parallelism <= 0:
        problems.append(("parallelism", f"Invalid value: {cfg.parallelism}: should be an integer value greater than zero"))
    if not cfg.profiles:
        problems.append(("profiles", "Required value"))
    else:
        existing: dict[str, int] = {}
        for i, profile in enumerate(cfg.profiles):
            path = f"profiles[{i}]"
            if not profile.scheduler_name:
                problems.append((f"{path}.schedulerName", "Required value"))
            _percentage(profile.percentage_of_nodes_to_score, f"{path}.percentageOfNodesToScore", problems)
            names = plugin_config_names[i] if plugin_config_names is not None and i < len(plugin_config_names) else None
            _plugin_config(i, cfg, names, problems)
            if profile.scheduler_name in existing:
                # field.Duplicate with the earlier profile's path (a fmt.Stringer) as the value
                problems.append((f"{path}.schedulerName",
                                 f"Duplicate value: profiles[{existing[profile.scheduler_name]}].schedulerName"))
            existing[profile.scheduler_name] = i
        _common_queue_sort(cfg, problems)
    _percentage(cfg.percentage_of_nodes_to_score, "percentageOfNodesToScore", problems)
    if cfg.pod_initial_backoff_seconds <= 0:
        problems.append(("podInitialBackoffSeconds",
                         f"Invalid value: {int(cfg.pod_initial_backoff_seconds)}: must be greater than 0"))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        problems.append(("podMaxBackoffSeconds", f"Invalid value: {int(cfg.pod_max_backoff_seconds)}: "
                                                 "must be greater than or equal to PodInitialBackoffSeconds"))
    return problems
