"""The sweep's table in the terminal (rich): one row per policy or configuration and level."""

from __future__ import annotations

from typing import Sequence

from rich.console import Console
from rich.table import Table

from .summary import CompareRow, ReplayRow, Stat, seeds_text

__all__ = ["COMPARE_HEADERS", "REPLAY_HEADERS", "compare_cells", "render_compare_rows", "render_replay_rows", "replay_cells"]

REPLAY_HEADERS = ("pod list", "arrival", "policy", "seeds", "GPU allocated (%)", "unallocated GPUs",
                  "fragmented GPUs", "of unallocated (%)", "failed pods", "s / replay")
COMPARE_HEADERS = ("snapshot", "config", "seeds", "scheduled", "unschedulable", "moved", "lost", "gained",
                   "cpu (%)", "memory (%)", "nodes used", "room", "s / run")


def replay_cells(row: ReplayRow) -> list[str]:
    arrival = f"{row.arrival * 100:g}%" if row.mode == "fgd" else "timeline"
    return [row.trace, arrival, row.policy, seeds_text(row.seeds), row.allocation.text(100), row.unallocated_gpus.text(),
            row.fragmentation_gpus.text(), row.fragmentation_ratio.text(100), row.pods_failed.text(), row.seconds.text()]


def compare_cells(row: CompareRow) -> list[str]:
    return [row.snapshot, row.config + (" (baseline)" if row.baseline else ""), seeds_text(row.seeds),
            row.scheduled.text(), row.unschedulable.text(), _change(row.moved), _change(row.became_unschedulable),
            _change(row.became_schedulable), row.cpu.text(100), row.memory.text(100), row.nodes_used.text(),
            row.room.text(), row.seconds.text(digits=2)]


def _change(value: Stat | None) -> str:
    return "-" if value is None else value.text()


def render_replay_rows(console: Console, rows: Sequence[ReplayRow]) -> None:
    _render(console, "At the end of each replay: mean ± std over seeds", REPLAY_HEADERS,
            [replay_cells(r) for r in rows], left=3)


def render_compare_rows(console: Console, rows: Sequence[CompareRow]) -> None:
    _render(console, "Per configuration (moved, lost, gained: pods against the baseline): mean ± std over seeds",
            COMPARE_HEADERS, [compare_cells(r) for r in rows], left=2)


def _render(console: Console, title: str, headers: Sequence[str], rows: list[list[str]], left: int) -> None:
    table = Table(title=title, title_justify="left")
    for i, name in enumerate(headers):
        table.add_column(name, justify="left" if i < left else "right")
    previous = None
    for cells in rows:
        group = cells[:left - 1]
        if previous is not None and group != previous:
            table.add_section()
        previous = group
        table.add_row(*cells)
    console.print(table)
