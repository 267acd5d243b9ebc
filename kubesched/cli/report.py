"""The simulation report: a summary line, what loading skipped or kept, nodes by group,
the most utilised nodes, preemptions, and pods grouped by why they did not run.

``render_report`` writes text sized for any cluster; ``summary_document`` is the same
content as JSON-ready data for ``--format json`` (with every pod name, not examples).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from .pod_group_report import pod_groups_document, render_pod_groups
from .summary import NodeGroup, NodeUsage, PodGroup, RunSummary

__all__ = ["render_report", "summary_line", "summary_document", "format_cpu", "format_bytes"]

EXAMPLES = 3  # pod names shown per group
MISSING_NODES_SHOWN = 5


def format_cpu(millicores: int) -> str:
    return f"{millicores / 1000:g}" if millicores % 1000 == 0 else f"{millicores}m"


def format_bytes(amount: int) -> str:
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if amount >= size:
            return f"{amount / size:.1f}{unit}"
    return str(amount)


def _percent(used: int, total: int) -> str:
    return f"{100 * used / total:3.0f}%" if total else "  - "


def _examples(pods: list[str]) -> str:
    shown = ", ".join(pods[:EXAMPLES])
    return f"{shown} and {len(pods) - EXAMPLES} more" if len(pods) > EXAMPLES else shown


def summary_line(summary: RunSummary) -> str:
    result = summary.result
    pending = len(result.outcomes)
    preempted = sum(1 for o in result.outcomes.values() if o.preempted_by)
    tie = f"seed {summary.seed}" if summary.seed is not None else (
        "ties broken by name" if summary.tie_break == "name" else "upstream's tie-break")
    parts = [f"{len(result.scheduled)} scheduled", f"{len(result.unschedulable)} unschedulable",
             f"{len(result.gated)} gated"]
    if preempted:
        parts.append(f"{preempted} preempted")
    return (f"{summary.source}: {pending} pending pod(s) on {len(summary.nodes)} node(s): {', '.join(parts)} "
            f"({result.attempts} attempt(s), {result.virtual_seconds:g}s virtual time, {tie})")


def _print(console: Console, text: str) -> None:
    console.print(text, highlight=False, markup=False)


def _snapshot_notes(console: Console, summary: RunSummary) -> None:
    snap = summary.snapshot
    if snap.ignored:
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(snap.ignored.items()))
        _print(console, f"skipped {sum(snap.ignored.values())} object(s) of kinds the scheduler does not read: {kinds}")
    if snap.finished_pods:
        _print(console, f"ignored {snap.finished_pods} finished pod(s) (phase Succeeded or Failed), as the scheduler does")
    if snap.pods_on_missing_nodes:
        missing = sorted(snap.pods_on_missing_nodes.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{node} ({count})" for node, count in missing[:MISSING_NODES_SHOWN])
        more = f" and {len(missing) - MISSING_NODES_SHOWN} more" if len(missing) > MISSING_NODES_SHOWN else ""
        _print(console, f"{sum(snap.pods_on_missing_nodes.values())} bound pod(s) are on {len(missing)} node(s) absent "
                        f"from the snapshot (kept, taking room on no node here): {shown}{more}")
    for warning in snap.warnings:
        _print(console, f"warning: {warning}")
    for feature, pods in sorted(snap.unmodelled.items()):
        _print(console, f"{len(pods)} pending pod(s) need {feature}, which kubesched does not model yet; "
                        f"not scheduled: {_examples(pods)}")
    retries = summary.result.group_backoff_retries
    if retries:
        _print(console, f"{len(retries)} failed pod group(s) were retried from backoffQ while activeQ was empty "
                        f"({sum(retries.values())} cycle(s); SchedulerPopFromBackoffQ): upstream retries such a group "
                        "back to back for as long as nothing else is ready; simulate retried each only after the "
                        f"cluster changed: {_examples(sorted(retries))}")
    if summary.result.livelocked:
        _print(console, "warning: stopped early: pods kept being retried and failing with nothing binding "
                        "(plugins waking each other's pods, e.g. gangs that time out in turn); "
                        "a live scheduler would go on retrying them")


def _usage_columns(table: Table) -> None:
    for title in ("CPU", "MEMORY", "PODS", "NEW"):
        table.add_column(title, justify="right")


def _usage_cells(cpu: tuple[int, int] | list[int], memory: tuple[int, int] | list[int],
                 pods: tuple[int, int] | list[int], new: int) -> list[str]:
    return [f"{format_cpu(cpu[0])}/{format_cpu(cpu[1])} {_percent(cpu[0], cpu[1])}",
            f"{format_bytes(memory[0])}/{format_bytes(memory[1])} {_percent(memory[0], memory[1])}",
            f"{pods[0]}/{pods[1]}", str(new or "")]


def _group_table(groups: list[NodeGroup]) -> Table:
    table = Table(title="Nodes by pool and zone (requested / allocatable)", title_justify="left")
    table.add_column("POOL")
    table.add_column("ZONE")
    table.add_column("NODES", justify="right")
    _usage_columns(table)
    for g in groups:
        table.add_row(g.pool, g.zone, str(g.nodes), *_usage_cells(g.cpu, g.memory, g.pods, g.new))
    return table


def _node_table(nodes: list[NodeUsage], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("NODE")
    table.add_column("POOL")
    table.add_column("ZONE")
    _usage_columns(table)
    for n in nodes:
        table.add_row(n.name, n.pool, n.zone, *_usage_cells(n.cpu, n.memory, n.pods, n.new))
    return table


def _pod_groups(console: Console, title: str, groups: list[PodGroup]) -> None:
    if not groups:
        return
    _print(console, title.format(count=sum(len(g.pods) for g in groups)) + ":")
    for group in groups:
        if len(group.pods) == 1:
            _print(console, f"  {group.pods[0]}: {group.reason}")
        else:
            _print(console, f"  {len(group.pods)} pods: {group.reason}")
            _print(console, f"    {_examples(group.pods)}")


def render_report(console: Console, summary: RunSummary, quiet: bool = False, all_nodes: bool = False) -> None:
    _print(console, summary_line(summary))
    if quiet:
        return
    _snapshot_notes(console, summary)
    if len(summary.groups) > 1:
        console.print(_group_table(summary.groups))
    if all_nodes or len(summary.nodes) <= len(summary.top_nodes):
        console.print(_node_table(summary.nodes, "Nodes (requested / allocatable)"))
    else:
        console.print(_node_table(summary.top_nodes, f"Most utilised nodes ({len(summary.top_nodes)} of "
                                                     f"{len(summary.nodes)}; --all-nodes lists every node)"))
    result = summary.result
    if result.preemptions:
        _print(console, f"{len(result.preemptions)} pod(s) preempted:")
        for victim, preemptor, node in result.preemptions:
            _print(console, f"  {victim} on {node}, for {preemptor}")
    render_pod_groups(console, summary.pod_groups, summary.ignored_pod_groups)
    _pod_groups(console, "Pods that waited at Permit ({count}), by outcome", summary.permit)
    _pod_groups(console, "Unschedulable pods ({count}), by reason", summary.unschedulable)
    _pod_groups(console, "Pods waiting for scheduling gates ({count})", summary.gated)
    _pod_groups(console, "Pending pods left to other schedulers ({count}), by scheduler", summary.other_schedulers)


def _usage(cpu: tuple[int, int] | list[int], memory: tuple[int, int] | list[int],
           pods: tuple[int, int] | list[int]) -> dict[str, dict[str, int]]:
    return {"cpuMillicores": {"requested": cpu[0], "allocatable": cpu[1]},
            "memoryBytes": {"requested": memory[0], "allocatable": memory[1]},
            "pods": {"requested": pods[0], "allocatable": pods[1]}}


def _node_document(n: NodeUsage) -> dict[str, Any]:
    return {"name": n.name, "pool": n.pool, "zone": n.zone, **_usage(n.cpu, n.memory, n.pods), "newPods": n.new}


def _groups_document(groups: list[PodGroup], key: str) -> list[dict[str, Any]]:
    return [{key: g.reason, "count": len(g.pods), "pods": g.pods} for g in groups]


def summary_document(summary: RunSummary, all_nodes: bool = False) -> dict[str, Any]:
    """The report as JSON-ready data; ``nodes.all`` only with ``all_nodes``."""
    result, snap = summary.result, summary.snapshot
    nodes: dict[str, Any] = {
        "count": len(summary.nodes),
        "groups": [{"pool": g.pool, "zone": g.zone, "nodes": g.nodes, **_usage(g.cpu, g.memory, g.pods), "newPods": g.new}
                   for g in summary.groups],
        "top": [_node_document(n) for n in summary.top_nodes],
    }
    if all_nodes:
        nodes["all"] = [_node_document(n) for n in summary.nodes]
    return {
        "source": summary.source,
        "tieBreak": summary.tie_break,
        "seed": summary.seed,
        "pods": {
            "pending": len(result.outcomes), "scheduled": len(result.scheduled),
            "unschedulable": len(result.unschedulable), "gated": len(result.gated),
            "preempted": sum(1 for o in result.outcomes.values() if o.preempted_by),
            "otherSchedulers": len(result.ignored_pods),
        },
        "attempts": result.attempts,
        "virtualSeconds": result.virtual_seconds,
        "livelocked": result.livelocked,
        "podGroupBackoffRetries": dict(sorted(result.group_backoff_retries.items())),
        "podGroups": pod_groups_document(summary.pod_groups),  # GenericWorkload: every group, its members and condition
        "podGroupsIgnored": summary.ignored_pod_groups,  # the snapshot's PodGroups, unread with GenericWorkload off
        "nodes": nodes,
        "unschedulable": _groups_document(summary.unschedulable, "message"),
        "permit": _groups_document(summary.permit, "outcome"),
        "gated": _groups_document(summary.gated, "message"),
        "otherSchedulers": _groups_document(summary.other_schedulers, "schedulerName"),
        "preemptions": [{"victim": v, "preemptor": p, "node": n} for v, p, n in result.preemptions],
        "snapshot": {
            "skippedKinds": dict(sorted(snap.ignored.items())),
            "finishedPods": snap.finished_pods,
            "podsOnMissingNodes": dict(sorted(snap.pods_on_missing_nodes.items())),
            "warnings": [str(w) for w in snap.warnings],
            "unmodelled": {feature: pods for feature, pods in sorted(snap.unmodelled.items())},
        },
    }
