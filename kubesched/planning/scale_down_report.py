"""The scale-down answer as ``simulate`` reports it: text lines after the summary and the
``scaleDown`` object of ``--format json`` (the HTML report draws the same object)."""

from __future__ import annotations

from typing import Any

from .scale_down import KeptNode, RemovableNode, ScaleDownResult
from .utilization import Utilization

__all__ = ["scale_down_lines", "scale_down_document"]

SHOWN = 20  # pods listed per removable node, kept nodes listed, in the text report
# cluster-autoscaler's UnremovableReason names, as the summary line counts them.
_REASONS = {"NotUnderutilized": "not underutilized", "BlockedByPod": "blocked by a pod",
            "NoPlaceToMovePods": "with a pod that fits nowhere else", "ScaleDownDisabledAnnotation": "annotated "
            "scale-down-disabled", "CurrentlyBeingDeleted": "being deleted"}


def _utilization_text(utilization: Utilization) -> str:
    return f"{utilization.resource} {utilization.value:.2f}"


def _removable_lines(node: RemovableNode) -> list[str]:
    parts = [f"{len(node.moves)} pod(s) move"]
    if node.daemonset_pods:
        parts.append(f"{len(node.daemonset_pods)} DaemonSet pod(s) go with it")
    if node.risky:
        parts.append("risky: its budgets do not allow all its pods at once (evictions wait for replacements)")
    lines = [f"  remove {node.node} ({_utilization_text(node.utilization)}): " + ", ".join(parts)]
    lines += [f"    {move.pod} -> {move.node}" for move in node.moves[:SHOWN]]
    if len(node.moves) > SHOWN:
        lines.append(f"    and {len(node.moves) - SHOWN} more")
    return lines


def scale_down_lines(result: ScaleDownResult) -> list[str]:
    options = result.options
    total = len(result.removable) + len(result.kept)
    lines = [f"Scale-down (cluster-autoscaler's rules, utilization threshold {options.utilization_threshold:g}): "
             f"{len(result.removable)} of {total} node(s) removable"]
    for node in result.removable:
        lines += _removable_lines(node)
    if result.kept:
        counts: dict[str, int] = {}
        for kept in result.kept:
            counts[kept.reason] = counts.get(kept.reason, 0) + 1
        lines.append(f"  {len(result.kept)} node(s) kept ("
                     + ", ".join(f"{count} {_REASONS.get(reason, reason)}" for reason, count in counts.items()) + "):")
        lines += [f"    {kept.node}: {kept.message}" for kept in result.kept[:SHOWN]]
        if len(result.kept) > SHOWN:
            lines.append(f"    and {len(result.kept) - SHOWN} more (-o json lists every one)")
    return lines


def _utilization_document(utilization: Utilization | None) -> dict[str, Any] | None:
    if utilization is None:
        return None
    return {"cpu": utilization.cpu, "memory": utilization.memory, "gpu": utilization.gpu,
            "resource": utilization.resource, "value": utilization.value}


def _kept_document(node: KeptNode) -> dict[str, Any]:
    return {"node": node.node, "reason": node.reason, "message": node.message,
            "utilization": _utilization_document(node.utilization), "pod": node.pod, "podReason": node.pod_reason}


def scale_down_document(result: ScaleDownResult) -> dict[str, Any]:
    options = result.options
    return {
        "utilizationThreshold": options.utilization_threshold,
        "gpuUtilizationThreshold": options.gpu_utilization_threshold,
        "ignoreDaemonSetsUtilization": options.ignore_daemonsets_utilization,
        "ignoreMirrorPodsUtilization": options.ignore_mirror_pods_utilization,
        "removable": [{"node": node.node, "utilization": _utilization_document(node.utilization),
                       "moves": [{"pod": move.pod, "node": move.node} for move in node.moves],
                       "daemonSetPods": node.daemonset_pods, "risky": node.risky} for node in result.removable],
        "kept": [_kept_document(node) for node in result.kept],
        "destinations": result.destinations,
    }
