"""What planning runs read: the plugin registry, configurations (a file or ``default``), the snapshot.

A run starts from a picklable spec that holds paths, not parsed objects, so that a
sweep can ship it to another process or machine; the run loads its own inputs there.
Every problem a user can cause is raised as ``PlanningError`` with one line per
problem, which the commands print before exiting 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import orjson

from ..cluster.simulated import Simulation
from ..cluster.snapshot import ClusterSnapshot, SnapshotError, load_snapshot
from ..cluster.yaml_documents import YAMLError, yaml_documents
from ..framework.config import ConfigError, SchedulerConfig, default_config, parse_config
from ..framework.features import FeatureGateError, Features, parse_feature_gates
from ..framework.loader import PluginLoadError, load_plugins
from ..framework.registry import Registry
from ..plugins.registry import in_tree_registry
from ..scheduler.scheduler import Attempt

__all__ = ["DEFAULT_CONFIG", "TIE_BREAKS", "PlanningError", "load_registry", "load_config_file", "read_snapshot",
           "new_simulation", "parse_documents"]

DEFAULT_CONFIG = "default"  # a config "path" that means kube-scheduler's defaults
TIE_BREAKS = ("random", "name")
S = TypeVar("S", bound=Simulation)


class PlanningError(ValueError):
    """Input a user can get wrong: ``lines`` holds one line per problem."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


def load_registry(plugins: Sequence[str] = (), feature_gates: Sequence[str] = ()) -> Registry:
    """The in-tree plugins, installed ones (entry points) and ``module:attribute`` ones, with
    the default profile and plugins' gates from ``feature_gates`` (``--feature-gates`` values:
    ``Key=bool,...``; a gate kube-scheduler would refuse is a ``PlanningError``)."""
    try:
        features = Features.from_gates(parse_feature_gates(list(feature_gates)))
    except FeatureGateError as err:
        raise PlanningError([str(err)]) from None
    try:
        return load_plugins(in_tree_registry(features), plugins)
    except PluginLoadError as err:
        raise PlanningError(err.lines) from None


def load_config_file(path: str, registry: Registry) -> SchedulerConfig:
    """The KubeSchedulerConfiguration at ``path``; ``default`` is the default configuration."""
    config = _load_config_file(path, registry)
    for line in registry.broken_warnings():  # installed packages that failed to load, not needed here
        print(line, file=sys.stderr)
    return config


def _load_config_file(path: str, registry: Registry) -> SchedulerConfig:
    if path == DEFAULT_CONFIG:
        return default_config(registry)
    try:
        text = Path(path).read_bytes()
    except OSError as err:
        raise PlanningError([f"{path}: {err.strerror or err}"]) from None
    try:
        docs = [d for d in parse_documents(text) if d is not None]
    except YAMLError as err:
        raise PlanningError([f"{path}: {err}"]) from None
    if len(docs) != 1:
        raise PlanningError([f"{path}: want exactly one KubeSchedulerConfiguration document, found {len(docs)}"])
    try:
        return parse_config(docs[0], registry, source=path)
    except ConfigError as err:
        err.source = path
        raise PlanningError(err.lines()) from None


def parse_documents(text: bytes) -> list[object]:
    """The documents of a YAML or JSON file (JSON read fast); raises ``YAMLError``."""
    if text.lstrip()[:1] in (b"{", b"["):
        try:
            return [orjson.loads(text)]
        except orjson.JSONDecodeError:
            pass  # YAML that starts with a flow mapping: read it as YAML
    return yaml_documents(text)


def read_snapshot(path: str, registry: Registry, keep_raw_objects: bool = False) -> ClusterSnapshot:
    """The snapshot at ``path`` with the kinds the registry's plugins read."""
    try:
        return load_snapshot(path, frozenset(kind for _, kind in registry.object_kinds()), keep_raw_objects)
    except SnapshotError as err:
        raise PlanningError([str(p) for p in err.problems]) from None


def new_simulation(kind: type[S], snapshot: ClusterSnapshot, config: SchedulerConfig, registry: Registry,
                   source: str, tie_break: str, seed: int, on_attempt: Callable[[Attempt], None] | None = None) -> S:
    """A ``Simulation`` (or subclass); a configuration its plugins reject when they are built
    (bad plugin args) is a ``PlanningError`` naming ``source``."""
    try:
        return kind(snapshot, config, registry, tie_break=tie_break, seed=seed, on_attempt=on_attempt)
    except ConfigError as err:
        err.source = err.source or source
        raise PlanningError(err.lines()) from None
