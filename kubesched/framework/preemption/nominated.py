"""Filtering one node as upstream's ``RunFilterPluginsWithNominatedPods`` does.

Pods nominated to a node (preemptors waiting for their victims to leave) hold its room
for pods of equal or lower priority: a node passes only if the pod fits both with
those nominated pods added (when there are any) and without them. Preemption's dry
run filters what-if copies of a node, so everything here works on a ``NodeInfo`` and
a ``CycleState`` the caller may have cloned, through each filter plugin's per-node
form, keeping PreFilter state right with the plugins' ``PreFilterExtensions``.
"""

from __future__ import annotations

import weakref
from typing import cast

import numpy as np

from ...objects.nodeinfo import HostPortInfo, NodeInfo
from ...objects.pod import PodInfo
from ..cycle_state import CycleState
from ..interfaces import FilterPlugin, PreFilterExtensions
from ..outcomes import FilterOutcome, FrameworkError
from ..runtime import Framework
from ..status import Code, Status
from ..views import BoolArray, SnapshotView
from .nominated_verdicts import NominatedVerdicts
from .protocols import NominatedPods

__all__ = [
    "NominatedPods",
    "clone_node_info",
    "clone_state",
    "run_filter_plugins",
    "run_pre_filter_extension_add_pod",
    "run_pre_filter_extension_remove_pod",
    "run_filters_with_nominated_pods",
    "apply_nominated_pods",
]


class _Plugins:
    """A framework's filter plugins (per-node form) and PreFilter extensions, found once:
    protocol checks cost microseconds, and a dry run asks for them thousands of times."""

    __slots__ = ("filters", "extensions", "verdicts", "order", "_active")

    def __init__(self, fwk: Framework) -> None:
        self.order = {p.name: i for i, p in enumerate(fwk.points["filter"])}
        self.filters: list[tuple[str, FilterPlugin | None]] = [
            (p.name, cast(FilterPlugin, p) if getattr(p, "filter", None) is not None else None)
            for p in fwk.points["filter"]
        ]
        self.extensions: list[tuple[str, PreFilterExtensions]] = [
            (p.name, p) for p in fwk.points["preFilter"] if isinstance(p, PreFilterExtensions)
        ]
        # First-pass verdicts of nodes with nominated pods, kept while nothing they read changes.
        self.verdicts = NominatedVerdicts()
        self._active: dict[frozenset[str], tuple[list[tuple[str, FilterPlugin | None]],
                                                 list[tuple[str, PreFilterExtensions]]]] = {}

    def active(self, skip: frozenset[str]) -> tuple[list[tuple[str, FilterPlugin | None]],
                                                     list[tuple[str, PreFilterExtensions]]]:
        """The filters and PreFilter extensions that run for a pod whose PreFilter skipped ``skip``."""
        found = self._active.get(skip)
        if found is None:
            found = self._active[skip] = ([f for f in self.filters if f[0] not in skip],
                                          [e for e in self.extensions if e[0] not in skip])
        return found


_PLUGINS: "weakref.WeakKeyDictionary[Framework, _Plugins]" = weakref.WeakKeyDictionary()
_last: list[tuple[Framework, _Plugins]] = []  # the framework asked last, at hand


def _plugins(fwk: Framework) -> _Plugins:
    if _last and _last[0][0] is fwk:
        return _last[0][1]
    found = _PLUGINS.get(fwk)
    if found is None:
        found = _PLUGINS[fwk] = _Plugins(fwk)
    _last[:] = [(fwk, found)]
    return found


def clone_state(fwk: Framework, state: CycleState) -> CycleState:
    """A copy of the state for what-if changes, or the state itself when no PreFilter
    plugin that keeps state for this pod could change it (filters only read it)."""
    if _plugins(fwk).active(state.skip_filter_plugins)[1]:
        return state.clone()
    return state


def clone_node_info(info: NodeInfo) -> NodeInfo:
    """A what-if copy (upstream's ``NodeInfo.Snapshot``): the same pods and sums, its own
    containers. The sums are copied, not recomputed: host ports are a set upstream, so
    a port two pods declare is already gone once one of them left, and stays gone."""
    ports = HostPortInfo()
    ports._by_ip = {ip: dict(pairs) for ip, pairs in info.used_ports._by_ip.items()}
    return NodeInfo(
        info.node,
        info.row,
        dict(info.pods),
        info.requested.copy(),
        info.non_zero_requested.copy(),
        ports,
        dict(info.pods_with_affinity),
        dict(info.pods_with_required_anti_affinity),
        info.generation,
    )


def run_filter_plugins(fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
    """Every Filter plugin on one node, in order, stopping at the first that rejects it
    (upstream's ``RunFilterPlugins``); the per-node form reads ``node`` itself, so a
    what-if copy is filtered as it is, not as the node table has it."""
    for name, plugin in _plugins(fwk).active(state.skip_filter_plugins)[0]:
        if plugin is None:
            raise FrameworkError(f"filter plugin {name!r} has no per-node form: preemption cannot evaluate it")
        status = plugin.filter(state, pod, node)
        if status is None or status.code == Code.SUCCESS:
            continue
        if not status.is_rejected():
            return Status(Code.ERROR, f'running "{name}" filter plugin: {status.message}', plugin=name)
        return status.with_plugin(name)
    return None


def _run_extension(fwk: Framework, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo,
                   adding: bool) -> Status | None:
    for name, plugin in _plugins(fwk).active(state.skip_filter_plugins)[1]:
        status = (plugin.add_pod if adding else plugin.remove_pod)(state, pod, other, node)
        if status is not None and not status.is_success():
            verb = "AddPod" if adding else "RemovePod"
            return Status(Code.ERROR, f'running {verb} on PreFilter plugin "{name}": {status.message}', plugin=name)
    return None


def run_pre_filter_extension_add_pod(fwk: Framework, state: CycleState, pod: PodInfo, added: PodInfo,
                                     node: NodeInfo) -> Status | None:
    """Tell every PreFilter plugin with extensions that ``added`` now runs on ``node``."""
    return _run_extension(fwk, state, pod, added, node, True)


def run_pre_filter_extension_remove_pod(fwk: Framework, state: CycleState, pod: PodInfo, removed: PodInfo,
                                        node: NodeInfo) -> Status | None:
    """Tell every PreFilter plugin with extensions that ``removed`` left ``node``."""
    return _run_extension(fwk, state, pod, removed, node, False)


def _with_nominated(fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo,
                    nominator: NominatedPods | None, own: bool = True) -> tuple[CycleState, NodeInfo] | Status | None:
    """upstream's ``addGENominatedPods``: copies of the state and node with the pods
    nominated there at ``pod``'s priority or above (but ``pod`` itself, unless ``own`` is
    False: a verdict for any pod of its shape); None when there are none."""
    if nominator is None:
        return None
    uid = pod.uid if own else None
    nominated = [p for p in nominator.nominated_pods_for_node(node.name)
                 if p.priority >= pod.priority and p.uid != uid]
    if not nominated:
        return None
    state_out, node_out = clone_state(fwk, state), clone_node_info(node)
    for other in nominated:
        node_out.add_pod(other)
        status = run_pre_filter_extension_add_pod(fwk, state_out, pod, other, node_out)
        if status is not None:
            return status
    return state_out, node_out


def run_filters_with_nominated_pods(fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo,
                                    nominator: NominatedPods | None) -> Status | None:
    """The node's verdict with nominated pods counted: first with them (if any), then,
    when that passes, without them, since they may never arrive."""
    added = _with_nominated(fwk, state, pod, node, nominator)
    if isinstance(added, Status):
        return added
    if added is not None:
        status = run_filter_plugins(fwk, added[0], pod, added[1])
        if status is not None:
            return status
    return run_filter_plugins(fwk, state, pod, node)


def apply_nominated_pods(fwk: Framework, state: CycleState, pod: PodInfo, snapshot: SnapshotView,
                         outcome: FilterOutcome, candidates: BoolArray, nominator: NominatedPods | None) -> None:
    """The first pass of upstream's two-pass filtering, for the nodes that need it.

    ``outcome`` (the filters over the node table) is the second pass, without nominated
    pods. Only nodes with pods nominated at ``pod``'s priority or above can differ; each
    such candidate node is filtered again with them, and a rejection replaces its verdict
    (upstream reports the first pass's status when it fails, whatever the second says).
    """
    if nominator is None:
        return
    names = nominator.nominated_node_names()
    if not names:
        return
    plugins = _plugins(fwk)
    rows: list[int] = []
    rejections: list[Status] = []

    def first_pass(node: NodeInfo, own: bool = True) -> Status | None:
        added = _with_nominated(fwk, state, pod, node, nominator, own)
        if added is None:
            return None
        return added if isinstance(added, Status) else run_filter_plugins(fwk, added[0], pod, added[1])

    key = plugins.verdicts.key(fwk, state, pod)
    if key is None:
        for name in names:
            node = snapshot.get(name)
            if node is not None and candidates[node.row]:
                _collect(first_pass(node), node.row, rows, rejections)
        if rows:
            _reject(outcome, rows, rejections, plugins.order)
        return
    kept = plugins.verdicts
    kept.update(key, snapshot, nominator, lambda node: first_pass(node, own=False))
    own = nominator.node_of(pod.uid)
    failing = kept.status >= 0
    own_slot = kept.slot_of(own) if own else None
    if own_slot is not None:
        failing[own_slot] = False  # its verdict counts the pod's own nomination: asked anew below
    slots = np.flatnonzero(failing)
    at = kept.rows[slots]
    inside = candidates[at]
    at, which = at[inside], kept.status[slots[inside]]
    if len(at):
        used = [kept.statuses[i] for i in np.unique(which).tolist()]
        for status in used:
            if status.code == Code.ERROR:
                raise FrameworkError(status.message)
        _reject_indexed(outcome, at, which, kept.statuses, plugins.order)
    own_node = snapshot.get(own) if own else None
    if own_node is not None and candidates[own_node.row]:
        _collect(first_pass(own_node), own_node.row, rows, rejections)
        if rows:
            _reject(outcome, rows, rejections, plugins.order)


def _collect(status: Status | None, row: int, rows: list[int], rejections: list[Status]) -> None:
    if status is None:
        return
    if status.code == Code.ERROR:
        raise FrameworkError(status.message)
    rows.append(row)
    rejections.append(status)


def _own_arrays(outcome: FilterOutcome) -> None:
    if not outcome.owns_arrays:
        outcome.status_index = np.array(outcome.status_index, dtype=np.int32)
        outcome.passed = np.array(outcome.passed, dtype=bool)
        outcome.owns_arrays = True


def _reject_indexed(outcome: FilterOutcome, rows: np.ndarray, which: np.ndarray, statuses: list[Status],
                    order: dict[str, int]) -> None:
    """Give ``rows`` the statuses ``statuses[which]`` (the list is appended whole, once)."""
    _own_arrays(outcome)
    base = len(outcome.statuses)
    outcome.statuses.extend(statuses)
    outcome.status_index[rows] = which + base
    outcome.passed[rows] = False
    if outcome.rejected_at is not None:
        positions = np.array([order.get(s.plugin, 0) for s in statuses], dtype=np.int16)
        outcome.rejected_at[rows] = positions[which]


def _reject(outcome: FilterOutcome, rows: list[int], rejections: list[Status], order: dict[str, int]) -> None:
    """Give ``rows`` their first-pass statuses; a status object shared by rows is listed once."""
    _own_arrays(outcome)
    index: dict[int, int] = {}  # by identity: kept verdicts share their status objects
    indices = []
    for status in rejections:
        i = index.get(id(status))
        if i is None:
            i = index[id(status)] = len(outcome.statuses)
            outcome.statuses.append(status)
        indices.append(i)
    at = np.array(rows, dtype=np.int64)
    outcome.status_index[at] = indices
    outcome.passed[at] = False
    if outcome.rejected_at is not None:
        outcome.rejected_at[at] = [order.get(s.plugin, 0) for s in rejections]
