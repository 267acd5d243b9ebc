"""The human-readable simulation report: summary, node utilisation, unschedulable pods."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..cluster.simulated import Simulation, SimulationResult

__all__ = ["render_report", "format_cpu", "format_bytes"]


def format_cpu(millicores: int) -> str:
    return f"{millicores / 1000:g}" if millicores % 1000 == 0 else f"{millicores}m"


def format_bytes(amount: int) -> str:
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if amount >= size:
            return f"{amount / size:.1f}{unit}"
    return str(amount)


def _percent(used: int, total: int) -> str:
    return f"{100 * used / total:3.0f}%" if total else "  - "


def render_report(console: Console, sim: Simulation, result: SimulationResult, source: str, quiet: bool = False) -> None:
    scheduled, unschedulable = result.scheduled, result.unschedulable
    nodes = sim.scheduler.cache.table.num_nodes
    console.print(
        f"{source}: {len(result.outcomes)} pending pod(s) on {nodes} node(s): "
        f"{len(scheduled)} scheduled, {len(unschedulable)} unschedulable, {len(result.gated)} gated "
        f"({result.attempts} attempt(s), {result.virtual_seconds:g}s virtual time)",
        highlight=False,
    )
    if result.livelocked:
        console.print(
            "warning: stopped early: pods kept being retried and failing with nothing binding "
            "(plugins waking each other's pods, e.g. gangs that time out in turn); "
            "a live scheduler would go on retrying them",
            highlight=False,
        )
    if result.gated:
        console.print(f"{len(result.gated)} pending pod(s) wait for scheduling gates:", highlight=False)
        for outcome in result.gated:
            console.print(f"  {outcome.pod}: {outcome.message}", highlight=False, markup=False)
    if result.ignored_pods:
        console.print(f"{len(result.ignored_pods)} pending pod(s) name another scheduler and were left alone.", highlight=False)
    if not quiet:
        table = Table(title="Node utilisation (requested / allocatable)", title_justify="left")
        table.add_column("NODE")
        table.add_column("CPU", justify="right")
        table.add_column("MEMORY", justify="right")
        table.add_column("PODS", justify="right")
        table.add_column("NEW", justify="right")
        placed: dict[str, int] = {}
        for _, node in result.placements:
            placed[node] = placed.get(node, 0) + 1
        for usage in sim.node_usage():
            (cpu, cpu_total), (mem, mem_total), (pods, pods_total) = usage["cpu"], usage["memory"], usage["pods"]
            table.add_row(
                usage["node"],
                f"{format_cpu(cpu)}/{format_cpu(cpu_total)} {_percent(cpu, cpu_total)}",
                f"{format_bytes(mem)}/{format_bytes(mem_total)} {_percent(mem, mem_total)}",
                f"{pods}/{pods_total}",
                str(placed.get(usage["node"], 0) or ""),
            )
        console.print(table)
    if result.preemptions:
        console.print(f"{len(result.preemptions)} pod(s) preempted:", highlight=False)
        for victim, preemptor, node in result.preemptions:
            console.print(f"  {victim} on {node}, for {preemptor}", highlight=False, markup=False)
    if unschedulable:
        console.print("Unschedulable pods:", highlight=False)
        for outcome in unschedulable:
            console.print(f"  {outcome.pod}: {outcome.message}", highlight=False, markup=False)
