"""Check (iv): Unreserve is idempotent and never fails."""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

from ..framework.cycle_state import CycleState
from ..framework.interfaces import ReservePlugin
from ..framework.registry import PluginSpec
from ..framework.status import Status
from ..objects.pod import PodInfo
from ._support import ContractError, ContractReport, build, call, clusters_or_default, decode, new_state
from .clusters import RandomCluster

__all__ = ["assert_unreserve_idempotent"]

A = TypeVar("A")


def assert_unreserve_idempotent(
    spec: PluginSpec[A],
    args: object = None,
    clusters: Sequence[RandomCluster] | None = None,
) -> ContractReport:
    """Unreserve never fails and may be called more than once: after Reserve, twice in a
    row, and without Reserve at all (the framework unreserves every Reserve plugin when any
    of them fails, including the ones whose Reserve never ran)."""
    found = clusters_or_default(clusters)
    decoded = decode(spec, args)
    report = ContractReport(spec.name, ["unreserve idempotent"], clusters=len(found))
    for cluster in found:
        plugin = build(spec, decoded, cluster)
        if not isinstance(plugin, ReservePlugin):
            raise ContractError(f"plugin {spec.name} has no reserve and unreserve methods")
        names = cluster.node_names()
        if not names:
            continue
        for i, pod in enumerate(cluster.pods):
            report.pods += 1
            node_name = names[i % len(names)]
            assumed = pod.copy_with(node_name=node_name)
            fresh = new_state()
            for attempt in ("without reserve", "without reserve, again"):
                _unreserve(plugin, fresh, assumed, node_name, cluster, attempt)
                report.unreserve_calls += 1
            state = new_state()
            status = call(plugin, "reserve", cluster, pod, lambda: plugin.reserve(state, assumed, node_name))
            if status is not None and not isinstance(status, Status):
                raise ContractError(f"plugin {spec.name}: reserve returned {status!r}, not a Status or None")
            for attempt in ("after reserve", "a second time after reserve"):
                _unreserve(plugin, state, assumed, node_name, cluster, attempt)
                report.unreserve_calls += 1
    if not report.unreserve_calls:
        raise ContractError(f"plugin {spec.name}: Unreserve was never called (clusters without nodes?)")
    return report


def _unreserve(plugin: ReservePlugin, state: CycleState, pod: PodInfo, node_name: str, cluster: RandomCluster,
               attempt: str) -> None:
    unreserve: Callable[[CycleState, PodInfo, str], object] = plugin.unreserve
    try:
        result = unreserve(state, pod, node_name)
    except Exception as err:
        raise ContractError(f"plugin {plugin.name}: unreserve raised when called {attempt} for pod {pod.key} on "
                            f"node {node_name} ({cluster.describe()}): {type(err).__name__}: {err}; Unreserve must "
                            f"be idempotent and must not fail") from err
    if result is not None:
        raise ContractError(f"plugin {plugin.name}: unreserve returned {result!r}; it returns nothing")

