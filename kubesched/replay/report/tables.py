"""The replay's tables as plain rows (for the terminal, the HTML report and JSON) and as rich tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rich.console import Console
from rich.table import Table

from .summary import PAPER_FINAL, PolicyCurve

__all__ = ["DEFAULT_TABLE_LEVELS", "PAPER_TRACE", "FinalRow", "allocation_rows", "final_rows", "render_table"]

DEFAULT_TABLE_LEVELS = (0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3)
PAPER_TRACE = "openb_pod_list_default.csv"
"""The trace the paper's final numbers (``PAPER_FINAL``) are for, at 130% arrival."""
PAPER_NODES = 1213
"""The nodes of the paper's cluster (``openb_node_list_gpu_node.csv``): a sample of the trace is not the paper's run."""


@dataclass(frozen=True, slots=True)
class FinalRow:
    label: str
    seeds: int
    arrived: float  # the last level
    allocation: float
    allocation_std: float
    unallocated_gpus: float
    fragmentation_gpus: float
    fragmentation_ratio: float
    pods_failed: float
    seconds: float
    paper: float | None  # the paper's final allocation ratio, where it reported one for this run


def allocation_rows(curves: Sequence[PolicyCurve], levels: Sequence[float]) -> list[tuple[float, list[float | None]]]:
    """Per level (those some curve recorded), each curve's mean allocation ratio (None: not recorded)."""
    rows = []
    for level in levels:
        cells = [(curve.allocation[i] if (i := curve.at(level)) is not None else None) for curve in curves]
        if any(cell is not None for cell in cells):
            rows.append((level, cells))
    return rows


def final_rows(curves: Sequence[PolicyCurve]) -> list[FinalRow]:
    rows = []
    for curve in curves:
        if not curve.levels:
            continue
        paper = PAPER_FINAL.get(curve.policy) if (
            curve.trace == PAPER_TRACE and curve.nodes == PAPER_NODES and curve.mode == "fgd" and abs(curve.arrival - 1.3) < 1e-9
            and curve.tie_break == "name") else None
        end = curve.end
        if end is not None:  # the timeline mode: after the trace's final departures
            arrived = curve.levels[-1] if curve.levels else end.arrived  # every pod arrived: the last level
            rows.append(FinalRow(curve.label, len(curve.seeds), arrived, end.allocation, end.allocation_std,
                                 end.unallocated_gpus, end.fragmentation_gpus, end.fragmentation_ratio,
                                 end.pods_failed, curve.seconds, paper))
            continue
        rows.append(FinalRow(curve.label, len(curve.seeds), curve.levels[-1], curve.allocation[-1],
                             curve.allocation_std[-1], curve.unallocated_gpus[-1], curve.fragmentation_gpus[-1],
                             curve.fragmentation_ratio[-1], curve.pods_failed[-1], curve.seconds, paper))
    return rows


def render_table(console: Console, curves: Sequence[PolicyCurve], levels: Sequence[float] = DEFAULT_TABLE_LEVELS) -> None:
    """The GPU allocation ratio per policy at each arrival level, then the end of each replay."""
    if not curves:
        console.print("no results")
        return
    seeds = sorted({len(c.seeds) for c in curves})
    over = f"mean over {seeds[0]} seed(s)" if len(seeds) == 1 else "mean over each policy's seeds"
    table = Table(title=f"GPU allocation ratio (%) by arrived GPU requests (% of the cluster's GPUs), {over}",
                  title_justify="left")
    table.add_column("arrived", justify="right")
    for curve in curves:
        table.add_column(curve.label, justify="right")
    for level, cells in allocation_rows(curves, levels):
        table.add_row(f"{level * 100:g}%", *[f"{c * 100:.1f}" if c is not None else "-" for c in cells])
    console.print(table)

    rows = final_rows(curves)
    end = Table(title="At the end of each replay (mean over seeds)", title_justify="left")
    for name in ("policy", "arrived", "allocated", "± (std)", "unallocated GPUs", "fragmented GPUs",
                 "of unallocated", "failed pods", "s / replay"):
        end.add_column(name, justify="left" if name == "policy" else "right")
    with_paper = any(r.paper is not None for r in rows)
    if with_paper:
        end.add_column("paper", justify="right")
    for r in rows:
        texts = [r.label, f"{r.arrived * 100:g}%", f"{r.allocation * 100:.1f}%", f"{r.allocation_std * 100:.2f}",
                 f"{r.unallocated_gpus:.0f}", f"{r.fragmentation_gpus:.0f}", f"{r.fragmentation_ratio * 100:.0f}%",
                 f"{r.pods_failed:.0f}", f"{r.seconds:.1f}"]
        if with_paper:
            texts.append(f"{r.paper * 100:.1f}%" if r.paper is not None else "-")
        end.add_row(*texts)
    console.print(end)
