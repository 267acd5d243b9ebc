"""HTTP scheduler extenders: upstream's ``HTTPExtender`` (``pkg/scheduler/extender.go``) and
the three places the scheduler calls them (``schedule_one.go``).

* ``find_nodes_that_pass_extenders``: after the Filter plugins, each interested extender
  (configuration order, ignorable ones last) filters the feasible nodes; the nodes it
  rejects get its message as their status (Unschedulable, or UnschedulableAndUnresolvable).
* ``prioritize_with_extenders``: each interested prioritizer's ``score * weight * 10``
  (``MaxNodeScore / MaxExtenderPriority``) is added to the plugins' totals; errors are ignored.
* ``extenders_binding``: the first interested binder binds instead of the Bind plugins.

The wire format is ``k8s.io/kube-scheduler/extender/v1``: Go field names, so ``"Pod"``,
``"Nodes"``, ``"NodeNames"``, ``"FailedNodes"``...; responses are read case-insensitively, as
Go's ``encoding/json`` reads them. The client and the wire types are in ``extender_client``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ..cache.cache import Snapshot
from ..framework.config import ConfigError, SchedulerConfig
from ..framework.interfaces import MAX_NODE_SCORE
from ..framework.runtime import ScoreOutcome
from ..framework.status import Code, Status
from ..objects.node import Node
from ..objects.pod import PodInfo
from ..plugins.noderesources.fit import NAME as FIT_NAME, FitArgs
from .extender_client import MAX_EXTENDER_PRIORITY, ExtenderError, HTTPExtender, Victims
from .fit_error import Diagnosis

__all__ = [
    "EXTENDER_NAME",
    "BindingObserver",
    "ExtenderError",
    "HTTPExtender",
    "Victims",
    "build_extenders",
    "extenders_binding",
    "find_nodes_that_pass_extenders",
    "prioritize_with_extenders",
]

log = logging.getLogger(__name__)

EXTENDER_NAME = "Extender"  # framework.ExtenderName: in UnschedulablePlugins when an extender rejected nodes


@runtime_checkable
class BindingObserver(Protocol):
    """A cluster client that must be told of a binding an extender made (the simulated API
    server: a live cluster's informer sees it by itself)."""

    def observe_binding(self, pod: PodInfo, node_name: str) -> None: ...


def build_extenders(config: SchedulerConfig) -> tuple[list[HTTPExtender], SchedulerConfig]:
    """upstream's ``buildExtenders``: a client per extender, the ignorable ones last; and, when
    extenders manage resources with ``ignoredByScheduler``, every profile's NodeResourcesFit
    args with those as their ``ignoredResources`` (replacing the profile's own)."""
    if not config.extenders:
        return [], config
    clients: list[HTTPExtender] = []
    for i, ext in enumerate(config.extenders):
        try:
            clients.append(HTTPExtender(ext))
        except ExtenderError as err:
            raise ConfigError([(f"extenders[{i}].tlsConfig", str(err))]) from None
    ordered = [e for e in clients if not e.is_ignorable()] + [e for e in clients if e.is_ignorable()]
    ignored = [r.name for ext in config.extenders for r in ext.managed_resources if r.ignored_by_scheduler]
    if not ignored:
        return ordered, config
    profiles = []
    for i, profile in enumerate(config.profiles):
        args = profile.plugin_config.get(FIT_NAME)
        if args is None:
            raise ConfigError([(f"profiles[{i}].pluginConfig", "can't find NodeResourcesFitArgs in plugin config")])
        if not isinstance(args, FitArgs):
            raise ConfigError([(f"profiles[{i}].pluginConfig",
                                f"want args to be of type NodeResourcesFitArgs, got {type(args).__name__}")])
        plugin_config = {**profile.plugin_config, FIT_NAME: replace(args, ignored_resources=tuple(sorted(ignored)))}
        profiles.append(replace(profile, plugin_config=plugin_config))
    return ordered, replace(config, profiles=profiles)


def _nodes(snapshot: Snapshot, rows: np.ndarray) -> list[Node]:
    infos = snapshot.node_infos
    out: list[Node] = []
    for row in rows.tolist():
        info = infos[row]
        if info is None:  # pragma: no cover - feasible rows are live
            raise ExtenderError(f"node table row {row} is not a node")
        out.append(info.node)
    return out


def find_nodes_that_pass_extenders(extenders: Sequence[HTTPExtender], pod: PodInfo, snapshot: Snapshot,
                                   feasible: np.ndarray, diagnosis: Diagnosis) -> np.ndarray:
    """``findNodesThatPassExtenders``: the feasible rows (in the order the last extender gave
    them) that every interested filtering extender kept. A failing extender is skipped when
    ignorable and fails the attempt (``ExtenderError``) otherwise."""
    before = len(feasible)
    for ext in extenders:
        if not len(feasible):
            break
        if not ext.is_filter() or not ext.is_interested(pod):  # no filterVerb: upstream's Filter keeps every node
            continue
        nodes = _nodes(snapshot, feasible)
        try:
            kept, failed, unresolvable = ext.filter(pod, nodes)
        except ExtenderError as err:
            if ext.is_ignorable():
                log.info("Skipping extender %s as it returned error and has ignorable flag set: %s", ext.name, err)
                continue
            raise
        for name, message in unresolvable.items():
            diagnosis.set_extender_status(name, _row(snapshot, name), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message))
        for name, message in failed.items():
            if name not in unresolvable:  # failedAndUnresolvable takes precedence
                diagnosis.set_extender_status(name, _row(snapshot, name), Status(Code.UNSCHEDULABLE, message))
        row_of = {node.name: row for node, row in zip(nodes, feasible.tolist())}
        feasible = np.fromiter((row_of[name] for name in kept), dtype=np.int64, count=len(kept))
    if len(feasible) != before:
        diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
    return feasible


def _row(snapshot: Snapshot, name: str) -> int | None:
    info = snapshot.get(name)
    return info.row if info is not None else None


def prioritize_with_extenders(extenders: Sequence[HTTPExtender], pod: PodInfo, snapshot: Snapshot,
                              feasible: np.ndarray, scores: ScoreOutcome) -> None:
    """Add each interested prioritizer's scores to ``scores`` (one column per extender, by its
    name, and the totals); an extender that fails gives no score."""
    if scores.total is None:  # pragma: no cover - run_score always sets it
        return
    nodes: list[Node] | None = None
    position: dict[str, int] = {}
    added = np.zeros(len(feasible), dtype=np.int64)
    scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    for ext in extenders:
        if not ext.is_prioritizer() or not ext.is_interested(pod):
            continue
        if nodes is None:
            nodes = _nodes(snapshot, feasible)
            position = {node.name: i for i, node in enumerate(nodes)}
        try:
            priorities, weight = ext.prioritize(pod, nodes)
        except ExtenderError as err:
            log.debug("Failed to run extender's priority function %s, no score given: %s", ext.name, err)
            continue
        column = scores.by_plugin.get(ext.name)
        if column is None:
            column = scores.by_plugin[ext.name] = np.zeros(len(feasible), dtype=np.int64)
        for host, score in priorities:
            i = position.get(host)
            if i is not None:  # hosts outside the list sent are dropped, as upstream
                final = score * weight * scale
                column[i] += final
                added[i] += final
    scores.total = scores.total + added


def extenders_binding(extenders: Sequence[HTTPExtender], pod: PodInfo, node_name: str) -> tuple[bool, ExtenderError | None]:
    """``extendersBinding``: (whether an extender took the binding, its error). A failing
    ignorable binder passes the binding on to the next one, then to the Bind plugins."""
    for ext in extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue
        try:
            ext.bind(pod, node_name)
        except ExtenderError as err:
            if ext.is_ignorable():
                log.info("Skipping extender %s in bind as it returned error and has ignorable flag set: %s", ext.name, err)
                continue
            return True, err
        return True, None
    return False, None
