"""Check: ``PreFilterExtensions`` keep PreFilter's state as a fresh PreFilter would have it.

Preemption asks "would the pod fit if these pods left this node (and those stayed)?"
without running PreFilter again: it copies the cycle state and tells each PreFilter
plugin with extensions ``remove_pod`` / ``add_pod`` for every pod it takes away or puts
back on a what-if copy of the node. So after ``remove_pod(state, pod, victim, node)`` the
plugin's Filter must answer, on every node, what it would answer had ``victim`` really
left and PreFilter run afresh; likewise for ``add_pod``. This check does exactly that on
random clusters: the what-if side (a cloned state, a copy of the node, the extension
call) against the real side (the pod removed from or added to the cache, which tells the
plugin's pod observers, then PreFilter and Filter anew), comparing Filter's verdicts.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, TypeVar, cast

from ..framework.cycle_state import CycleState
from ..framework.interfaces import FilterPlugin, PreFilterExtensions, PreFilterPlugin
from ..framework.preemption.nominated import clone_node_info
from ..framework.registry import PluginSpec
from ..framework.status import Code, Status
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from ._support import ContractError, ContractReport, build, call, clusters_or_default, decode, new_state, verdict
from .clusters import RandomCluster

__all__ = ["assert_pre_filter_extensions_agree"]

A = TypeVar("A")
Verdicts = dict[str, "tuple[str, tuple[str, ...]] | None"]


def assert_pre_filter_extensions_agree(
    spec: PluginSpec[A],
    args: object = None,
    clusters: Sequence[RandomCluster] | None = None,
    *,
    changes_per_pod: int = 3,
    require_changes: bool = True,
) -> ContractReport:
    """For each pending pod whose PreFilter runs (not Skip, not a rejection), for up to
    ``changes_per_pod`` placed pods and one more pod added to a node: Filter's verdicts on
    every node after ``remove_pod`` / ``add_pod`` equal those after the same change made
    for real and PreFilter run again. Fails having compared nothing, unless
    ``require_changes`` is False (then the report notes it)."""
    found = clusters_or_default(clusters)
    decoded = decode(spec, args)
    report = ContractReport(spec.name, ["PreFilterExtensions agree with PreFilter"], clusters=len(found))
    for cluster in found:
        plugin = build(spec, decoded, cluster)
        if not isinstance(plugin, PreFilterPlugin) or not isinstance(plugin, PreFilterExtensions):
            raise ContractError(f"plugin {spec.name} has no pre_filter with add_pod and remove_pod")
        if not isinstance(plugin, FilterPlugin):
            raise ContractError(f"plugin {spec.name}: has PreFilterExtensions but no per-node filter; preemption "
                                f"evaluates its what-if nodes with the per-node form")
        for pod in cluster.pods:
            if pod.node_name:
                continue
            report.pods += 1
            _check_pod(cast(_Checked, plugin), pod, cluster, report, changes_per_pod)
    if not report.extension_checks:
        if not require_changes:
            report.notes.append("PreFilterExtensions: PreFilter skipped every pod, nothing compared")
            return report
        raise ContractError(f"plugin {spec.name}: no add_pod/remove_pod was compared (PreFilter skipped or rejected "
                            f"every pod, or no cluster had placed pods): pass clusters your plugin acts on")
    return report


class _Checked(PreFilterPlugin, PreFilterExtensions, FilterPlugin, Protocol):
    """What the check calls (a plugin implementing all three)."""


def _prefilter(plugin: _Checked, pod: PodInfo, cluster: RandomCluster) -> tuple[CycleState, Status | None]:
    state = new_state()
    _, status = call(plugin, "pre_filter", cluster, pod, lambda: plugin.pre_filter(state, pod, cluster.snapshot))
    return state, status


def _verdicts(plugin: _Checked, state: CycleState, pod: PodInfo, nodes: dict[str, NodeInfo],
              cluster: RandomCluster) -> Verdicts:
    out: Verdicts = {}
    for name, info in sorted(nodes.items()):
        def run(info: NodeInfo = info) -> Status | None:
            return plugin.filter(state, pod, info)
        out[name] = verdict(call(plugin, "filter", cluster, pod, run))
    return out


def _fresh(plugin: _Checked, pod: PodInfo, cluster: RandomCluster) -> Verdicts:
    state, status = _prefilter(plugin, pod, cluster)
    nodes = {info.name: info for info in cluster.snapshot.list()}
    if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
        return {name: verdict(status) for name in sorted(nodes)}  # rejected before Filter: every node
    if status is not None and status.code == Code.SKIP:
        return {name: None for name in sorted(nodes)}
    return _verdicts(plugin, state, pod, nodes, cluster)


def _check_pod(plugin: _Checked, pod: PodInfo, cluster: RandomCluster, report: ContractReport, limit: int) -> None:
    base, status = _prefilter(plugin, pod, cluster)
    if status is not None and status.code != Code.SUCCESS:
        return  # Skip: no Filter to keep right; a rejection: no preemption dry run with this state
    placed = [(info, other) for info in cluster.snapshot.list() for other in info.pods.values()]
    rng = cluster.rng(f"extensions/{pod.uid}")
    for info, other in rng.sample(placed, min(limit, len(placed))):
        _compare(plugin, pod, cluster, base, info, other, adding=False)
        report.extension_checks += 1
    others = [p for p in cluster.pods if p.uid != pod.uid and not p.node_name]
    nodes = cluster.snapshot.list()
    if others and nodes:
        info = rng.choice(nodes)
        _compare(plugin, pod, cluster, base, info, rng.choice(others).copy_with(node_name=info.name), adding=True)
        report.extension_checks += 1


def _compare(plugin: _Checked, pod: PodInfo, cluster: RandomCluster, base: CycleState, info: NodeInfo,
             other: PodInfo, adding: bool) -> None:
    # The what-if side, as preemption's dry run does it.
    state, copy = base.clone(), clone_node_info(info)
    change: Callable[[CycleState, PodInfo, PodInfo, NodeInfo], Status | None]
    if adding:
        copy.add_pod(other)
        change = plugin.add_pod
    else:
        copy.remove_pod(other)
        change = plugin.remove_pod
    verb = "add_pod" if adding else "remove_pod"
    status = call(plugin, verb, cluster, pod, lambda: change(state, pod, other, copy))
    if status is not None and not status.is_success():
        raise ContractError(f"plugin {plugin.name}: {verb} answered {status.code.label} ({status.message}) for pod "
                            f"{pod.key}, {other.key} on node {info.name} ({cluster.describe()}); preemption treats "
                            f"that as an error")
    nodes = {n.name: n for n in cluster.snapshot.list()}
    nodes[info.name] = copy
    what_if = _verdicts(plugin, state, pod, nodes, cluster)
    # The real side: the change made in the cache (the plugin's pod observers hear of it), PreFilter anew.
    if adding:
        cluster.cache.add_pod(other)
    else:
        cluster.cache.remove_pod(other)
    try:
        fresh = _fresh(plugin, pod, cluster)
    finally:
        if adding:
            cluster.cache.remove_pod(other)
        else:
            cluster.cache.add_pod(other)
    differ = [name for name in sorted(fresh) if fresh[name] != what_if.get(name)]
    if differ:
        name = differ[0]
        change_text = f"{verb}({other.key}) on node {info.name}"
        raise ContractError(f"plugin {plugin.name}: after {change_text}, filter says {what_if.get(name)} for pod "
                            f"{pod.key} on node {name}, but a fresh PreFilter with that change made says "
                            f"{fresh[name]} ({cluster.describe()}); add_pod/remove_pod must leave the state a fresh "
                            f"PreFilter would build")
