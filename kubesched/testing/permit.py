"""Check: Permit answers what the framework can act on.

The framework reads ``permit(state, pod, node_name)`` as ``(status, timeout_seconds)``:
success (None or ``SUCCESS``) lets the pod bind; ``WAIT`` holds it until every waiting
plugin allows it or the timeout rejects it (so a wait must have a positive, finite
timeout: a zero one is a rejection a moment later, an infinite one is capped at 15
minutes without saying so); ``UNSCHEDULABLE`` / ``UNSCHEDULABLE_AND_UNRESOLVABLE``
reject the pod, and the rejection's reason is what the pod's condition and the report
show, so it must say something. Any other code is an error in the framework, which on
an ordinary random cluster means a bug.
"""

from __future__ import annotations

import math
from typing import Sequence, TypeVar

from ..framework.interfaces import PermitPlugin, PreFilterPlugin, ReservePlugin
from ..framework.registry import PluginSpec
from ..framework.status import Code, Status
from ..objects.pod import PodInfo
from ._support import ContractError, ContractReport, build, call, clusters_or_default, decode, new_state
from .clusters import RandomCluster

__all__ = ["assert_permit_answers"]

A = TypeVar("A")
_ANSWERS = (Code.SUCCESS, Code.WAIT, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


def assert_permit_answers(
    spec: PluginSpec[A],
    args: object = None,
    clusters: Sequence[RandomCluster] | None = None,
) -> ContractReport:
    """On every pending pod of every cluster, after PreFilter and Reserve as the framework
    runs them (when the plugin has them), ``permit`` on a node of the cluster returns
    ``(Status | None, seconds)`` with one of the codes Permit may answer; a Wait has a
    positive, finite timeout; a rejection has a reason."""
    found = clusters_or_default(clusters)
    decoded = decode(spec, args)
    report = ContractReport(spec.name, ["permit answers"], clusters=len(found))
    for cluster in found:
        plugin = build(spec, decoded, cluster)
        if not isinstance(plugin, PermitPlugin):
            raise ContractError(f"plugin {spec.name} has no permit method")
        names = cluster.node_names()
        for i, pod in enumerate(cluster.pods):
            if not names:
                break
            report.pods += 1
            node_name = names[i % len(names)]
            _check_one(plugin, pod, node_name, cluster, report)
    if not report.permit_calls:
        raise ContractError(f"plugin {spec.name}: Permit was never called (clusters without nodes or pods?)")
    return report


def _check_one(plugin: PermitPlugin, pod: PodInfo, node_name: str, cluster: RandomCluster,
               report: ContractReport) -> None:
    state = new_state()
    if isinstance(plugin, PreFilterPlugin):
        _, status = call(plugin, "pre_filter", cluster, pod, lambda: plugin.pre_filter(state, pod, cluster.snapshot))
        if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
            return  # the pod would not get this far
    assumed = pod.copy_with(node_name=node_name)
    if isinstance(plugin, ReservePlugin):
        status = call(plugin, "reserve", cluster, pod, lambda: plugin.reserve(state, assumed, node_name))
        if status is not None and not status.is_success():
            return
    answer = call(plugin, "permit", cluster, pod, lambda: plugin.permit(state, assumed, node_name))
    where = f"pod {pod.key} on node {node_name} ({cluster.describe()})"
    if not isinstance(answer, tuple) or len(answer) != 2:
        raise ContractError(f"plugin {plugin.name}: permit returned {answer!r} for {where}; it returns "
                            f"(Status | None, timeout_seconds)")
    status, timeout = answer
    report.permit_calls += 1
    if status is not None and not isinstance(status, Status):
        raise ContractError(f"plugin {plugin.name}: permit's status for {where} is {status!r}, not a Status or None")
    code = Code.SUCCESS if status is None else status.code
    if code not in _ANSWERS:
        raise ContractError(f"plugin {plugin.name}: permit answered {code.label} for {where}; Permit answers "
                            f"Success, Wait, Unschedulable or UnschedulableAndUnresolvable (the framework "
                            f"treats anything else as an error)")
    if code == Code.WAIT:
        report.permit_waits += 1
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not math.isfinite(timeout) \
                or timeout <= 0:
            raise ContractError(f"plugin {plugin.name}: permit asked {where} to wait {timeout!r} seconds; a wait "
                                f"needs a positive, finite timeout (at most 900 s are honoured)")
    elif code != Code.SUCCESS:
        report.permit_rejections += 1
        if status is None or not status.message:
            raise ContractError(f"plugin {plugin.name}: permit rejected {where} without a reason; the reason is "
                                f"what the pod's condition and the report show")
