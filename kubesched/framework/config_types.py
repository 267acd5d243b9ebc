"""The decoded, defaulted ``KubeSchedulerConfiguration``: what the scheduler runs with.

Field for field upstream's internal ``config.KubeSchedulerConfiguration`` after
``SetDefaults_KubeSchedulerConfiguration``; durations and backoffs in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .extender_config import ExtenderConfig
from .runtime import EXTENSION_POINTS

__all__ = [
    "API_VERSION",
    "KIND",
    "DEFAULT_SCHEDULER_NAME",
    "POINTS_WITH_MULTI",
    "ConfigError",
    "PluginRef",
    "PluginSet",
    "Profile",
    "LeaderElection",
    "SchedulerConfig",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
POINTS_WITH_MULTI = EXTENSION_POINTS + ("multiPoint",)


class ConfigError(ValueError):
    """Every problem found in a configuration, each as ``(field path, message)``.

    A problem with an empty field path is about the file itself (not UTF-8, not YAML,
    not one document) and prints without the ``KubeSchedulerConfiguration`` prefix.
    """

    def __init__(self, problems: list[tuple[str, str]], source: str = "") -> None:
        self.problems = problems
        self.source = source
        super().__init__("; ".join(f"{f}: {m}" if f else m for f, m in problems))

    def lines(self) -> list[str]:
        prefix = f"{self.source}: " if self.source else ""
        return [f"{prefix}KubeSchedulerConfiguration {f}: {m}" if f else f"{prefix}{m}" for f, m in self.problems]


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
    plugins: dict[str, PluginSet]  # merged with the defaults (mergePlugins), every point present
    plugin_config: dict[str, Any]  # plugin name -> decoded, defaulted args (the file's first, then defaults)
    percentage_of_nodes_to_score: int | None = None
    raw_args: dict[str, Any] = field(default_factory=dict)  # plugin name -> args as the file wrote them


@dataclass(slots=True)
class LeaderElection:
    """``LeaderElectionConfiguration`` (component-base), durations in seconds."""

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
    percentage_of_nodes_to_score: int = 0  # 0: adaptive (upstream's DefaultPercentageOfNodesToScore)
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    parallelism: int = 16
    delay_cache_until_active: bool = False  # with leader election: fill the caches only once leading
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    # clientConnection
    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = 100
    # debuggingConfiguration (inline in v1)
    enable_profiling: bool = True
    enable_contention_profiling: bool | None = True  # None: unset (profiling off and not asked for)
    extenders: list[ExtenderConfig] = field(default_factory=list)

    def profile(self, name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == name), None)
