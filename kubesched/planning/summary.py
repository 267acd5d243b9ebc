"""The side-by-side rows of a comparison, as text: the terminal table and the HTML report print the same rows."""

from __future__ import annotations

from dataclasses import dataclass

from .compare import CompareResult, ConfigRun
from .usage import ResourceUsage

__all__ = ["SummaryRow", "summary_rows", "format_amount", "percent", "shape_text"]


@dataclass(slots=True)
class SummaryRow:
    label: str
    cells: list[str]  # one per configuration
    section: str = ""  # rows are grouped under sections


def percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def format_amount(resource: str, amount: int) -> str:
    """cpu in cores (millicores below one), memory in binary units, the rest as counts."""
    if resource == "cpu":
        if amount % 1000 == 0:
            return f"{amount // 1000}"
        return f"{amount / 1000:.1f}" if amount >= 10_000 else f"{amount}m"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount >= size:
                return f"{amount / size:.1f}{unit}"
    return str(amount)


def shape_text(shape: dict[str, int]) -> str:
    return ", ".join(f"{name} {format_amount(name, amount)}" for name, amount in shape.items()) or "no requests"


def _shares(usages: list[ResourceUsage | None], *picks: str) -> list[str]:
    return [" / ".join(percent(float(getattr(u, pick))) for pick in picks) if u is not None else "-" for u in usages]


def _usage_rows(result: CompareResult) -> list[SummaryRow]:
    rows: list[SummaryRow] = []
    for name in (u.resource for u in result.configs[0].usage):
        usages = [run.resource(name) for run in result.configs]
        section = f"{name} utilisation"
        rows += [
            SummaryRow("requested / allocatable", [
                f"{format_amount(name, u.requested)} / {format_amount(name, u.allocatable)} ({percent(u.share)})"
                if u is not None else "-" for u in usages], section),
            SummaryRow("per node: mean", _shares(usages, "mean"), section),
            SummaryRow("per node: p10 / median / p90", _shares(usages, "p10", "median", "p90"), section),
            SummaryRow("per node: max", _shares(usages, "max"), section),
        ]
    return rows


def _fragmentation_rows(result: CompareResult) -> list[SummaryRow]:
    first = result.configs[0].fragmentation
    if not first.shape_pods:
        return [SummaryRow("common pending pod shape", ["none: no pending pods"] * len(result.configs),
                           "fragmentation")]
    section = "fragmentation"
    rows = [
        SummaryRow("common pending pod shape", [f"{shape_text(first.shape)} ({first.shape_pods} pods)"]
                   + [""] * (len(result.configs) - 1), section),
        SummaryRow("nodes with room for one more", [str(r.fragmentation.nodes_fitting) for r in result.configs], section),
        SummaryRow("room for more of the shape", [str(r.fragmentation.room) for r in result.configs], section),
    ]
    for name in first.stranded:
        rows.append(SummaryRow(f"free {name} stranded (not fitting the shape)", [percent(r.fragmentation.stranded.get(name, 0.0))
                                                         for r in result.configs], section))
    return rows


def _change_cells(result: CompareResult, pick: str) -> list[str]:
    return ["(baseline)"] + [str(getattr(c, pick)) for c in result.changes]


def summary_rows(result: CompareResult) -> list[SummaryRow]:
    runs: list[ConfigRun] = result.configs
    pods = "pods"
    rows = [
        SummaryRow("scheduled", [str(r.scheduled) for r in runs], pods),
        SummaryRow("unschedulable", [str(r.unschedulable) for r in runs], pods),
        SummaryRow("gated", [str(r.gated) for r in runs], pods),
        SummaryRow("preempted", [str(r.preempted) for r in runs], pods),
        SummaryRow("left to other schedulers", [str(r.other_schedulers) for r in runs], pods),
        SummaryRow("on another node than the baseline", _change_cells(result, "moved"), pods),
        SummaryRow("unschedulable, placed by the baseline", _change_cells(result, "became_unschedulable"), pods),
        SummaryRow("placed, unschedulable in the baseline", _change_cells(result, "became_schedulable"), pods),
        SummaryRow("nodes with pods", [str(r.nodes_used) for r in runs], "nodes"),
        SummaryRow("nodes given new pods", [str(r.nodes_with_new_pods) for r in runs], "nodes"),
    ]
    rows += _usage_rows(result)
    rows += _fragmentation_rows(result)
    rows.append(SummaryRow("attempts", [str(r.attempts) for r in runs], "run"))
    rows.append(SummaryRow("seconds", [f"{r.seconds:.2f}" for r in runs], "run"))
    if any(r.livelocked for r in runs):
        rows.append(SummaryRow("stopped as livelocked", ["yes" if r.livelocked else "no" for r in runs], "run"))
    return rows
