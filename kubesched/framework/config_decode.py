"""Strict decoding of a ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``).

Upstream loads the file with the scheme's strict codec (``cmd/kube-scheduler/app/options``,
``apis/config/scheme``): YAML becomes JSON, JSON is decoded into the v1 Go types by
``sigs.k8s.io/json``. What that means, and what this module reproduces:

- an unknown field is a strict error ``unknown field "<path>"`` (so are the fields
  v1 dropped, such as ``healthzBindAddress`` and ``metricsBindAddress``); a key
  written twice is ``line N: key "k" already set in map``;
- a value of the wrong JSON type is ``json: cannot unmarshal string into Go struct
  field KubeSchedulerConfiguration.parallelism of type int32``; integers must fit
  their Go type (``int32``, ``int64``); YAML's ``8.0`` is the integer 8;
- ``null`` leaves a field unset (a pointer nil, a value its zero), except a duration,
  which Go parses even then (``time: invalid duration ""``);
- durations are strings in ``time.ParseDuration``'s syntax (``1m30s``, ``1.5h``).

Upstream stops at the first non-strict error; kubesched reports every problem.
The result is the v1 object with its pointers (``None``: not set), for defaulting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import yaml  # type: ignore[import-untyped]  # (no stubs installed)

from .args import go_quote
from .config_go import INT32, INT64, integer_value, json_kind, parse_duration, type_error
from .config_types import API_VERSION, KIND, POINTS_WITH_MULTI, ConfigError, PluginRef, PluginSet

__all__ = [
    "GROUP",
    "V1LeaderElection",
    "V1ClientConnection",
    "V1PluginConfig",
    "V1Profile",
    "V1Config",
    "decode_config",
    "check_type_meta",
    "read_config_text",
    "REMOVED_VERSIONS",
]

GROUP = "kubescheduler.config.k8s.io"
# Versions kube-scheduler no longer serves, with the release that removed them (KEP-785).
REMOVED_VERSIONS = {f"{GROUP}/v1beta3": "v1.29", f"{GROUP}/v1beta2": "v1.28"}

Report = Callable[[str, str], None]


@dataclass(slots=True)
class V1LeaderElection:
    leader_elect: bool | None = None
    lease_duration: int = 0  # nanoseconds; 0: unset
    renew_deadline: int = 0
    retry_period: int = 0
    resource_lock: str = ""
    resource_name: str = ""
    resource_namespace: str = ""


@dataclass(slots=True)
class V1ClientConnection:
    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = ""
    qps: float = 0.0
    burst: int = 0


@dataclass(slots=True)
class V1PluginConfig:
    name: str
    args: object  # the raw args (None: not given)


@dataclass(slots=True)
class V1Profile:
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: dict[str, PluginSet] | None = None  # None: no ``plugins``
    plugin_config: list[V1PluginConfig] = field(default_factory=list)


@dataclass(slots=True)
class V1Config:
    parallelism: int | None = None
    leader_election: V1LeaderElection = field(default_factory=V1LeaderElection)
    client_connection: V1ClientConnection = field(default_factory=V1ClientConnection)
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    profiles: list[V1Profile] = field(default_factory=list)
    extenders: object = None  # decoded by extender_config
    delay_cache_until_active: bool = False


# -- the type meta ------------------------------------------------------------------------
def check_type_meta(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``apiVersion`` and ``kind``: one clear line when the scheme cannot decode the document."""
    version = raw.get("apiVersion")
    if version != API_VERSION:
        if version is None or version == "":
            return [("apiVersion", f"Required value: kube-scheduler v1.36 reads apiVersion {API_VERSION}")]
        if not isinstance(version, str):
            return [("apiVersion", f"must be a string, got {json_kind(version)}: kube-scheduler v1.36 reads apiVersion {API_VERSION}")]
        removed = REMOVED_VERSIONS.get(version)
        if removed is not None:
            return [("apiVersion", f"{go_quote(version)} is no longer served (removed in Kubernetes {removed}): "
                                   f"kube-scheduler v1.36 reads only {API_VERSION}")]
        return [("apiVersion", f"no kind {go_quote(str(raw.get('kind') or KIND))} is registered for version "
                               f"{go_quote(version)}: kube-scheduler v1.36 reads only {API_VERSION}")]
    kind = raw.get("kind")
    if kind != KIND:
        if kind is None or kind == "":
            return [("kind", f"Required value: want {KIND}")]
        return [("kind", f"no kind {go_quote(str(kind))} is registered for version {go_quote(API_VERSION)}: want {KIND}")]
    return []


# -- the decoder --------------------------------------------------------------------------
_TOP = "KubeSchedulerConfiguration"
_LE = "LeaderElectionConfiguration"
_CC = "ClientConnectionConfiguration"
_PROFILE = "KubeSchedulerProfile"


class _Decoder:
    def __init__(self, report: Report) -> None:
        self.report = report

    def struct(self, raw: object, allowed: tuple[str, ...], path: str, struct: str, stack: str, go_type: str) -> Mapping[str, Any]:
        """A JSON object for a Go struct: unknown keys reported; null reads as empty."""
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.report(path, type_error(raw, struct, stack, go_type))
            return {}
        for key in raw:
            if key not in allowed:
                where = f"{path}.{key}" if path else str(key)
                self.report(where, f"unknown field {go_quote(where)}")
        return raw

    def array(self, raw: object, path: str, struct: str, stack: str, go_type: str) -> list[Any]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.report(path, type_error(raw, struct, stack, go_type))
            return []
        return raw

    def integer(self, raw: object, path: str, struct: str, stack: str, go_type: str) -> int | None:
        if raw is None:
            return None
        value = integer_value(raw, INT32 if go_type == "int32" else INT64)
        if value is None:
            self.report(path, type_error(raw, struct, stack, go_type, with_number=True))
        return value

    def boolean(self, raw: object, path: str, struct: str, stack: str) -> bool | None:
        if raw is None:
            return None
        if not isinstance(raw, bool):
            self.report(path, type_error(raw, struct, stack, "bool"))
            return None
        return raw

    def string(self, raw: object, path: str, struct: str, stack: str) -> str | None:
        if raw is None:
            return None
        if isinstance(raw, str):
            return raw
        if hasattr(raw, "isoformat"):  # a YAML timestamp: the JSON conversion makes it a string
            return str(raw.isoformat())
        self.report(path, type_error(raw, struct, stack, "string"))
        return None

    def float32(self, raw: object, path: str, struct: str, stack: str) -> float | None:
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            self.report(path, type_error(raw, struct, stack, "float32"))
            return None
        if not abs(float(raw)) <= 3.4028234663852886e38:
            self.report(path, type_error(raw, struct, stack, "float32", with_number=True))
            return None
        return float(raw)

    def duration(self, raw: object, path: str) -> int | None:
        """A ``metav1.Duration``: a JSON string in Go's duration syntax (null parses as "")."""
        if raw is None:
            raw = ""
        if not isinstance(raw, str):
            self.report(path, f"json: cannot unmarshal {json_kind(raw)} into Go value of type string")
            return None
        try:
            return parse_duration(raw)
        except ValueError as err:
            self.report(path, str(err))
            return None


_TOP_FIELDS = (
    "apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
    "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds",
    "profiles", "extenders", "delayCacheUntilActive",
)
_LEADER_FIELDS = (
    "leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock", "resourceName", "resourceNamespace",
)
_CLIENT_FIELDS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
_PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")


def _leader_election(d: _Decoder, raw: object) -> V1LeaderElection:
    fields = d.struct(raw, _LEADER_FIELDS, "leaderElection", _TOP, "leaderElection", "v1alpha1.LeaderElectionConfiguration")
    out = V1LeaderElection()
    out.leader_elect = d.boolean(fields.get("leaderElect"), "leaderElection.leaderElect", _LE, "leaderElection.leaderElect")
    for key, attr in (("leaseDuration", "lease_duration"), ("renewDeadline", "renew_deadline"), ("retryPeriod", "retry_period")):
        if key in fields:
            nanos = d.duration(fields[key], f"leaderElection.{key}")
            if nanos is not None:
                setattr(out, attr, nanos)
    for key, attr in (("resourceLock", "resource_lock"), ("resourceName", "resource_name"),
                      ("resourceNamespace", "resource_namespace")):
        text = d.string(fields.get(key), f"leaderElection.{key}", _LE, f"leaderElection.{key}")
        if text is not None:
            setattr(out, attr, text)
    return out


def _client_connection(d: _Decoder, raw: object) -> V1ClientConnection:
    fields = d.struct(raw, _CLIENT_FIELDS, "clientConnection", _TOP, "clientConnection", "v1alpha1.ClientConnectionConfiguration")
    out = V1ClientConnection()
    for key, attr in (("kubeconfig", "kubeconfig"), ("acceptContentTypes", "accept_content_types"), ("contentType", "content_type")):
        text = d.string(fields.get(key), f"clientConnection.{key}", _CC, f"clientConnection.{key}")
        if text is not None:
            setattr(out, attr, text)
    qps = d.float32(fields.get("qps"), "clientConnection.qps", _CC, "clientConnection.qps")
    if qps is not None:
        out.qps = qps
    burst = d.integer(fields.get("burst"), "clientConnection.burst", _CC, "clientConnection.burst", "int32")
    if burst is not None:
        out.burst = burst
    return out


def _plugin_set(d: _Decoder, raw: object, path: str, point: str) -> PluginSet:
    stack = f"profiles.plugins.{point}"
    fields = d.struct(raw, ("enabled", "disabled"), path, "Plugins", stack, "v1.PluginSet")
    out = PluginSet()
    for kind in ("enabled", "disabled"):
        items = d.array(fields.get(kind), f"{path}.{kind}", "PluginSet", f"{stack}.{kind}", "[]v1.Plugin")
        for i, item in enumerate(items):
            p = f"{path}.{kind}[{i}]"
            entry = d.struct(item, ("name", "weight"), p, "PluginSet", f"{stack}.{kind}", "v1.Plugin")
            name = d.string(entry.get("name"), f"{p}.name", "Plugin", f"{stack}.{kind}.name") or ""
            weight = d.integer(entry.get("weight"), f"{p}.weight", "Plugin", f"{stack}.{kind}.weight", "int32") or 0
            getattr(out, kind).append(PluginRef(name, weight))
    return out


def _profile(d: _Decoder, raw: object, index: int) -> V1Profile:
    path = f"profiles[{index}]"
    fields = d.struct(raw, _PROFILE_FIELDS, path, _TOP, "profiles", "v1.KubeSchedulerProfile")
    out = V1Profile()
    out.scheduler_name = d.string(fields.get("schedulerName"), f"{path}.schedulerName", _PROFILE, "profiles.schedulerName")
    out.percentage_of_nodes_to_score = d.integer(fields.get("percentageOfNodesToScore"), f"{path}.percentageOfNodesToScore",
                                                 _PROFILE, "profiles.percentageOfNodesToScore", "int32")
    if fields.get("plugins") is not None:
        plugins = d.struct(fields["plugins"], POINTS_WITH_MULTI, f"{path}.plugins", _PROFILE, "profiles.plugins", "v1.Plugins")
        out.plugins = {point: _plugin_set(d, plugins.get(point), f"{path}.plugins.{point}", point) for point in POINTS_WITH_MULTI}
    configs = d.array(fields.get("pluginConfig"), f"{path}.pluginConfig", _PROFILE, "profiles.pluginConfig", "[]v1.PluginConfig")
    for i, item in enumerate(configs):
        p = f"{path}.pluginConfig[{i}]"
        entry = d.struct(item, ("name", "args"), p, _PROFILE, "profiles.pluginConfig", "v1.PluginConfig")
        name = d.string(entry.get("name"), f"{p}.name", "PluginConfig", "profiles.pluginConfig.name") or ""
        out.plugin_config.append(V1PluginConfig(name, entry.get("args")))
    return out


def decode_config(raw: Mapping[str, Any], report: Report) -> V1Config:
    """The v1 object ``raw`` decodes to; every decoding problem goes to ``report``."""
    d = _Decoder(report)
    fields = d.struct(raw, _TOP_FIELDS, "", _TOP, "", _TOP)
    out = V1Config()
    out.parallelism = d.integer(fields.get("parallelism"), "parallelism", _TOP, "parallelism", "int32")
    out.leader_election = _leader_election(d, fields.get("leaderElection"))
    out.client_connection = _client_connection(d, fields.get("clientConnection"))
    out.enable_profiling = d.boolean(fields.get("enableProfiling"), "enableProfiling", _TOP,
                                     "DebuggingConfiguration.enableProfiling")
    out.enable_contention_profiling = d.boolean(fields.get("enableContentionProfiling"), "enableContentionProfiling", _TOP,
                                                "DebuggingConfiguration.enableContentionProfiling")
    out.percentage_of_nodes_to_score = d.integer(fields.get("percentageOfNodesToScore"), "percentageOfNodesToScore", _TOP,
                                                 "percentageOfNodesToScore", "int32")
    out.pod_initial_backoff_seconds = d.integer(fields.get("podInitialBackoffSeconds"), "podInitialBackoffSeconds", _TOP,
                                                "podInitialBackoffSeconds", "int64")
    out.pod_max_backoff_seconds = d.integer(fields.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds", _TOP,
                                            "podMaxBackoffSeconds", "int64")
    profiles = d.array(fields.get("profiles"), "profiles", _TOP, "profiles", "[]v1.KubeSchedulerProfile")
    out.profiles = [_profile(d, item, i) for i, item in enumerate(profiles)]
    out.extenders = fields.get("extenders")
    out.delay_cache_until_active = bool(d.boolean(fields.get("delayCacheUntilActive"), "delayCacheUntilActive", _TOP,
                                                  "delayCacheUntilActive"))
    return out


# -- the file -------------------------------------------------------------------------------
def _duplicates(node: yaml.Node, path: str, report: Report) -> None:
    """Keys a YAML mapping sets twice, as upstream's strict YAML conversion reports them."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if name is not None and name != "<<":
                where = f"{path}.{name}" if path else name
                if name in seen:
                    report(where, f"line {key.start_mark.line + 1}: key {go_quote(name)} already set in map")
                seen.add(name)
                _duplicates(value, where, report)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _duplicates(item, f"{path}[{i}]", report)


def read_config_text(text: str) -> tuple[object, list[tuple[str, str]]]:
    """The one document of a configuration file, and the keys it sets twice (strict errors
    upstream reports with the others: decoding goes on).

    Raises ``ConfigError``: invalid YAML, not exactly one document.
    """
    try:
        nodes = [n for n in yaml.compose_all(text, Loader=yaml.SafeLoader)
                 if not (isinstance(n, yaml.ScalarNode) and n.tag == "tag:yaml.org,2002:null")]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError([("", f"invalid YAML{where}: {getattr(err, 'problem', None) or err}")]) from None
    if len(nodes) != 1:
        raise ConfigError([("", f"want exactly one KubeSchedulerConfiguration document, found {len(nodes)}")])
    problems: list[tuple[str, str]] = []
    _duplicates(nodes[0], "", lambda f, m: problems.append((f, m)))
    try:
        return yaml.SafeLoader("").construct_document(nodes[0]), problems
    except yaml.YAMLError as err:
        raise ConfigError([("", f"invalid YAML: {getattr(err, 'problem', None) or err}")]) from None
