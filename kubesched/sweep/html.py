"""The sweep as one self-contained HTML file: the table, the failures and plots (embedded PNG).

Replays: the final GPU allocation per policy, mean ± std over seeds, for every pod list
and arrival level side by side, then for each pod list and level the curves
``kubesched replay`` draws (its ``allocation_figure`` and ``fragmentation_figure``).
Comparisons: scheduled pods, cpu requested and room left per configuration and snapshot.
This module needs matplotlib (the ``research`` extra); figures are drawn by the Agg
canvas, without pyplot.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Sequence

from matplotlib.figure import Figure

from kubesched.planning import CompareResult
from kubesched.replay import ReplayResult
from kubesched.replay.report import allocation_rows, summarize
from kubesched.replay.report.plots import allocation_figure, fragmentation_figure, png_bytes

from .files import Sweep
from .grid import Grid, ReplayGrid
from .summary import CompareRow, ReplayRow, Stat, compare_rows, replay_rows, seeds_text
from .tables import COMPARE_HEADERS, REPLAY_HEADERS, compare_cells, replay_cells

__all__ = ["sweep_html", "write_html"]

TABLE_LEVELS = (0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3)
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222; }
table { border-collapse: collapse; margin: 1em 0 2em; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }
th.l, td.l { text-align: left; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.4em; }
img { max-width: 100%; }
.failed { color: #b00; }
"""


def sweep_html(grid: Grid, outcome: Sweep) -> str:
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>kubesched sweep</title><style>{_STYLE}</style>"
             f"</head><body><h1>kubesched sweep: {grid.kind}</h1>", _context(grid, outcome), _failures(outcome)]
    replays = [r for r in outcome.finished if isinstance(r, ReplayResult)]
    comparisons = [r for r in outcome.finished if isinstance(r, CompareResult)]
    if isinstance(grid, ReplayGrid):
        rows = replay_rows(replays)
        parts.append(_table("At the end of each replay: mean ± std over seeds", REPLAY_HEADERS,
                            [replay_cells(r) for r in rows], left=3))
        if rows:
            parts.append(_image("Final GPU allocation", _replay_bars(rows)))
        parts += _replay_groups(replays)
    else:
        crows = compare_rows(comparisons)
        parts.append(_table("Per configuration (moved, lost, gained: pods against the baseline): mean ± std over seeds",
                            COMPARE_HEADERS, [compare_cells(r) for r in crows], left=2))
        if crows:
            parts.append(_image("Configurations side by side", _compare_bars(crows)))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_html(grid: Grid, outcome: Sweep, path: str | Path) -> Path:
    out = Path(path)
    out.write_text(sweep_html(grid, outcome), encoding="utf-8")
    return out


def _context(grid: Grid, outcome: Sweep) -> str:
    seeds = seeds_text(list(grid.seeds))
    if isinstance(grid, ReplayGrid):
        what = (f"{len(grid.variants)} pod list(s) × {len(grid.arrivals)} arrival level(s) × {len(grid.policies)} "
                f"policies × {len(grid.seeds)} seed(s) ({seeds}) on {html.escape(Path(grid.nodes).name)}, mode {grid.mode}")
    else:
        what = (f"{len(grid.snapshots)} snapshot(s) × {len(grid.seeds)} seed(s) ({seeds}), configurations "
                f"{html.escape(', '.join(grid.configs))}, ties broken {'by name' if grid.tie_break == 'name' else 'at random'}")
    state = " Interrupted: the tasks not finished were cancelled." if outcome.interrupted else ""
    if outcome.stranded:
        state += " The last worker left and none joined in time: the tasks left failed."
    return (f"<p>{what}: {len(outcome.specs)} task(s), {len(outcome.finished)} finished, {len(outcome.failures)} failed, "
            f"in {outcome.seconds:.1f}s.{state}</p>{_workers(outcome)}")


def _workers(outcome: Sweep) -> str:
    """Who ran the sweep: the cluster can change under it (workers join, die, get replaced),
    so the count at the start says little on its own."""
    return (f"<p class='workers'>Workers: {outcome.workers} at the start, {outcome.workers_used} used, "
            f"{outcome.workers_lost} lost; {outcome.recomputed} task(s) recomputed after their worker was lost.</p>")


def _failures(outcome: Sweep) -> str:
    if not outcome.failures:
        return ""
    items = "".join(f"<li><b>{html.escape(f.task)}</b>: {html.escape(f.error)}</li>" for f in outcome.failures)
    return f"<h2 class='failed'>Failed tasks ({len(outcome.failures)})</h2><ul class='failed'>{items}</ul>"


def _table(caption: str, headers: Sequence[str], rows: Sequence[Sequence[str]], left: int) -> str:
    head = "".join(f"<th class='{'l' if i < left else ''}'>{html.escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td class='{'l' if i < left else ''}'>{html.escape(c)}</td>" for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    return f"<table><caption>{html.escape(caption)}</caption><tr>{head}</tr>{body}</table>"


def _image(caption: str, figure: Figure) -> str:
    data = base64.b64encode(png_bytes(figure)).decode("ascii")
    return f"<h2>{html.escape(caption)}</h2><img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'>"


def _bars(axes_title: str, groups: list[str], series: dict[str, list[Stat | None]], ylabel: str, scale: float,
          figure: Figure, position: int, columns: int) -> None:
    """Grouped bars (one group per x label, one bar per series) with the std as error bars."""
    axes = figure.add_subplot(1, columns, position)
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series.items()):
        xs = [g + (k - (len(series) - 1) / 2) * width for g in range(len(groups))]
        heights = [v.mean * scale if v is not None else 0.0 for v in values]
        errors = [v.std * scale if v is not None else 0.0 for v in values]
        axes.bar(xs, heights, width, yerr=errors, capsize=3, label=name)
    axes.set_xticks(range(len(groups)), groups, rotation=20 if len(groups) > 3 else 0, ha="right" if len(groups) > 3 else "center",
                    fontsize="small")
    axes.set_ylabel(ylabel)
    axes.set_title(axes_title)
    axes.grid(axis="y", alpha=0.3)
    if position == 1:  # one legend for the figure, above the panels: it never covers a bar
        handles, labels = axes.get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 6), fontsize="small",
                      frameon=False)


def _replay_bars(rows: Sequence[ReplayRow]) -> Figure:
    groups = list(dict.fromkeys(_group_label(r) for r in rows))
    series: dict[str, list[Stat | None]] = {}
    for row in rows:
        series.setdefault(row.policy, [None] * len(groups))[groups.index(_group_label(row))] = row.allocation
    figure = Figure(figsize=(max(7.0, 1.2 * len(groups) * max(1, len(series)) / 3), 4.5), layout="constrained")
    _bars("GPU allocation ratio at the end (mean ± std over seeds)", groups, series, "GPUs allocated (%)", 100, figure, 1, 1)
    return figure


def _group_label(row: ReplayRow) -> str:
    return f"{row.trace} @ {row.arrival * 100:g}%" if row.mode == "fgd" else f"{row.trace} (timeline)"


def _replay_groups(results: Sequence[ReplayResult]) -> list[str]:
    """For each pod list and arrival level: the allocation table by level and the curves, as ``kubesched replay``
    reports one run."""
    groups: dict[tuple[str, str, float], list[ReplayResult]] = {}
    for result in results:
        groups.setdefault((result.spec.pods, result.spec.mode, result.spec.arrival), []).append(result)
    parts = []
    for (pods, mode, arrival), members in groups.items():
        curves = summarize(members)
        title = f"{Path(pods).name}, " + (f"arrival {arrival * 100:g}%" if mode == "fgd" else "timeline")
        levels = [lv for lv in TABLE_LEVELS if lv < arrival] + [arrival]
        rows = [[f"{level * 100:g}%", *(f"{c * 100:.1f}" if c is not None else "-" for c in cells)]
                for level, cells in allocation_rows(curves, levels)]
        parts.append(f"<h2>{html.escape(title)}</h2>")
        parts.append(_table("GPU allocation ratio (%) by arrived GPU requests (% of the cluster's GPUs), mean over seeds",
                            ["arrived", *(c.label for c in curves)], rows, left=1))
        for caption, figure in (("GPU allocation", allocation_figure(curves)), ("GPU fragmentation", fragmentation_figure(curves))):
            data = base64.b64encode(png_bytes(figure)).decode("ascii")
            parts.append(f"<img alt='{html.escape(caption)}, {html.escape(title)}' src='data:image/png;base64,{data}'>")
    return parts


def _compare_bars(rows: Sequence[CompareRow]) -> Figure:
    snapshots = list(dict.fromkeys(r.snapshot for r in rows))
    figure = Figure(figsize=(15.0, 4.5), layout="constrained")
    for position, (title, pick, ylabel, scale) in enumerate((
            ("Pending pods scheduled", "scheduled", "pods", 1.0),
            ("cpu requested after the run", "cpu", "share of allocatable cpu (%)", 100.0),
            ("Room for more of the common pod shape", "room", "pods", 1.0)), start=1):
        series: dict[str, list[Stat | None]] = {}
        for row in rows:
            value = getattr(row, pick)
            series.setdefault(row.config, [None] * len(snapshots))[snapshots.index(row.snapshot)] = (
                value if isinstance(value, Stat) else None)
        _bars(title, snapshots, series, ylabel, scale, figure, position, 3)
    return figure

