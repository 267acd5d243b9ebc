"""A defaulted configuration written back as a v1 document, as ``--write-config-to`` writes it.

Upstream converts its internal configuration to ``kubescheduler.config.k8s.io/v1`` and
encodes it as YAML through JSON: ``omitempty`` fields left out when empty, structs
always present, every map's keys in sorted order, plugin args with their
``apiVersion``/``kind``. ``versioned_config`` builds that document; dump it with
``yaml.safe_dump(doc, sort_keys=True)``.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from .args import json_name
from .config_go import NANOS_PER_SECOND, format_duration
from .config_types import API_VERSION, KIND, POINTS_WITH_MULTI, PluginSet, Profile, SchedulerConfig
from .extender_config import ExtenderConfig

__all__ = ["versioned_config", "encode_args"]


def _number(value: float) -> int | float:
    """A float as Go's JSON writes it: integral values without a fraction."""
    return int(value) if float(value).is_integer() else value


def _seconds(value: float) -> str:
    return format_duration(round(value * NANOS_PER_SECOND))


def _value(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dataclass(value, {})
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _value(v) for k, v in sorted(value.items())}
    if isinstance(value, float):
        return _number(value)
    return value


def _dataclass(obj: Any, raw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    raw_fields = raw if isinstance(raw, dict) else {}
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        key = str(f.metadata.get("json", json_name(f.name)))
        if f.metadata.get("decode") is not None:  # parsed by hand: the file's text is what there is to write
            if raw_fields.get(key) is not None:
                out[key] = raw_fields[key]
            continue
        value = getattr(obj, f.name)
        if value is None or (isinstance(value, (list, tuple, dict)) and not value):
            continue  # omitempty: nil pointers and empty lists are left out
        nested = raw_fields.get(key)
        out[key] = _dataclass(value, nested) if dataclasses.is_dataclass(value) and not isinstance(value, type) else _value(value)
    return dict(sorted(out.items()))


def encode_args(name: str, args: Any, raw: Any) -> Any:
    """A plugin's decoded, defaulted args as a ``<Name>Args`` object; args kubesched could not
    decode into a dataclass are written as the file gave them."""
    if dataclasses.is_dataclass(args) and not isinstance(args, type):
        body = _dataclass(args, raw)
    elif isinstance(raw, dict):
        body = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
    else:
        return raw
    return dict(sorted({"apiVersion": API_VERSION, "kind": f"{name}Args", **body}.items()))


def _plugin_set(plugins: PluginSet) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if plugins.disabled:
        out["disabled"] = [{"name": p.name} for p in plugins.disabled]
    if plugins.enabled:
        out["enabled"] = [{"name": p.name, **({"weight": p.weight} if p.weight else {})} for p in plugins.enabled]
    return out


def _profile(profile: Profile) -> dict[str, Any]:
    out: dict[str, Any] = {}
    configs = []
    for name, raw in profile.raw_args.items():  # the file's entries first, in its order
        decoded = name in profile.plugin_config  # else kept undecoded: no such plugin, or none to decode
        configs.append({"args": encode_args(name, profile.plugin_config[name], raw) if decoded else raw, "name": name})
    for name, args in profile.plugin_config.items():  # then the defaults upstream appends, by name
        if name not in profile.raw_args:
            configs.append({"args": encode_args(name, args, None), "name": name})
    if configs:
        out["pluginConfig"] = configs
    if profile.percentage_of_nodes_to_score is not None:
        out["percentageOfNodesToScore"] = profile.percentage_of_nodes_to_score
    out["plugins"] = {point: _plugin_set(profile.plugins[point]) for point in sorted(POINTS_WITH_MULTI)}
    if profile.scheduler_name:
        out["schedulerName"] = profile.scheduler_name
    return out


def _extender(ext: ExtenderConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"urlPrefix": ext.url_prefix, "httpTimeout": _seconds(ext.http_timeout)}
    for key, value in (("filterVerb", ext.filter_verb), ("preemptVerb", ext.preempt_verb),
                       ("prioritizeVerb", ext.prioritize_verb), ("weight", ext.weight), ("bindVerb", ext.bind_verb),
                       ("enableHTTPS", ext.enable_https), ("nodeCacheCapable", ext.node_cache_capable),
                       ("ignorable", ext.ignorable)):
        if value:
            out[key] = value
    if ext.managed_resources:
        out["managedResources"] = [
            {"name": r.name, **({"ignoredByScheduler": True} if r.ignored_by_scheduler else {})} for r in ext.managed_resources
        ]
    tls = ext.tls_config
    if tls is not None:
        fields = {"insecure": tls.insecure, "serverName": tls.server_name, "certFile": tls.cert_file, "keyFile": tls.key_file,
                  "caFile": tls.ca_file, "certData": base64.b64encode(tls.cert_data).decode(),
                  "keyData": base64.b64encode(tls.key_data).decode(), "caData": base64.b64encode(tls.ca_data).decode()}
        out["tlsConfig"] = dict(sorted((k, v) for k, v in fields.items() if v))
    return dict(sorted(out.items()))


def versioned_config(cfg: SchedulerConfig) -> dict[str, Any]:
    """``cfg`` as the v1 document upstream's ``--write-config-to`` writes for it (keys sorted)."""
    le = cfg.leader_election
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "clientConnection": {
            "acceptContentTypes": cfg.accept_content_types,
            "burst": cfg.burst,
            "contentType": cfg.content_type,
            "kubeconfig": cfg.kubeconfig,
            "qps": _number(cfg.qps),
        },
        "enableProfiling": cfg.enable_profiling,
        "leaderElection": {
            "leaderElect": le.leader_elect,
            "leaseDuration": _seconds(le.lease_duration),
            "renewDeadline": _seconds(le.renew_deadline),
            "resourceLock": le.resource_lock,
            "resourceName": le.resource_name,
            "resourceNamespace": le.resource_namespace,
            "retryPeriod": _seconds(le.retry_period),
        },
        "parallelism": cfg.parallelism,
        "percentageOfNodesToScore": cfg.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": int(cfg.pod_initial_backoff_seconds),
        "podMaxBackoffSeconds": int(cfg.pod_max_backoff_seconds),
        "profiles": [_profile(p) for p in cfg.profiles],
    }
    if cfg.enable_contention_profiling is not None:
        doc["enableContentionProfiling"] = cfg.enable_contention_profiling
    if cfg.extenders:
        doc["extenders"] = [_extender(e) for e in cfg.extenders]
    if cfg.delay_cache_until_active:
        doc["delayCacheUntilActive"] = True
    return dict(sorted(doc.items()))
