"""Plots of replay curves, as the FGD paper draws them: one line per policy against the
arrived GPU requests. matplotlib without pyplot (no global state, no display): each
figure is drawn by the Agg canvas into PNG bytes."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .summary import PolicyCurve
from .time_axis import time_axis

__all__ = ["ALLOCATION_PNG", "FRAGMENTATION_PNG", "allocation_figure", "fragmentation_figure", "png_bytes", "write_plots"]

ALLOCATION_PNG = "allocation.png"
FRAGMENTATION_PNG = "fragmentation.png"
_ARRIVED = "Arrived GPU requests (% of the cluster's GPUs)"


def allocation_figure(curves: Sequence[PolicyCurve]) -> Figure:
    """GPU allocation ratio against arrived workload; the dotted line is "everything fits"."""
    figure = Figure(figsize=(7.0, 4.5), layout="constrained")
    ax = figure.add_subplot()
    timeline = time_axis(curves)
    if timeline is None:
        top = max((max(c.levels) for c in curves if c.levels), default=1.0) * 100
        ax.plot([0, min(top, 100), top], [0, min(top, 100), min(top, 100)], ":", color="grey", linewidth=1,
                label="all allocated")
    for curve in curves:
        if timeline is not None and curve.series_times:  # recorded: every event, not only the levels
            ax.step([t / timeline.scale for t in curve.series_times], [y * 100 for y in curve.series_allocation],
                    where="post", label=curve.label, linewidth=1.2)
            continue
        allocation = [y * 100 for y in curve.allocation]
        xs, ys = timeline.points(curve, allocation, curve.end.allocation * 100 if curve.end else None) if timeline \
            else ([x * 100 for x in curve.levels], allocation)
        ax.plot(xs, ys, label=curve.label, linewidth=1.6)
    ax.set_xlabel(timeline.label if timeline else _ARRIVED)
    ax.set_ylabel("GPU allocation ratio (%)")
    ax.set_title("GPUs allocated over the trace's time" if timeline else "GPUs allocated as the workload arrives")
    ax.grid(alpha=0.3)
    _legend_below(figure, ax)
    return figure


def fragmentation_figure(curves: Sequence[PolicyCurve]) -> Figure:
    """Fragmented GPUs (the FGD paper's measure), and their share of the unallocated GPUs."""
    figure = Figure(figsize=(11.0, 4.5), layout="constrained")
    amount, ratio = figure.subplots(1, 2)
    timeline = time_axis(curves)
    for curve in curves:
        end = curve.end
        ratios = [y * 100 for y in curve.fragmentation_ratio]
        if timeline is not None:
            amount.plot(*timeline.points(curve, curve.fragmentation_gpus, end.fragmentation_gpus if end else None),
                        label=curve.label, linewidth=1.6)
            ratio.plot(*timeline.points(curve, ratios, end.fragmentation_ratio * 100 if end else None),
                       label=curve.label, linewidth=1.6)
            continue
        xs = [x * 100 for x in curve.levels]
        amount.plot(xs, curve.fragmentation_gpus, label=curve.label, linewidth=1.6)
        ratio.plot(xs, ratios, label=curve.label, linewidth=1.6)
    amount.set_ylabel("Fragmented GPUs")
    amount.set_title("GPU fragmentation")
    ratio.set_ylabel("Fragmented share of unallocated GPUs (%)")
    ratio.set_title("Fragmentation ratio")
    for ax in (amount, ratio):
        ax.set_xlabel(timeline.label if timeline else _ARRIVED)
        ax.grid(alpha=0.3)
    _legend_below(figure, amount)  # one legend for both panels, under them: it never hides a curve
    return figure


def _legend_below(figure: Figure, ax: Axes) -> None:
    """The figure's legend outside the axes, below them (constrained layout makes room)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4), fontsize="small",
                      frameon=False)


def png_bytes(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    FigureCanvasAgg(figure)  # attaches itself to the figure: savefig draws with Agg
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def write_plots(curves: Sequence[PolicyCurve], directory: str | Path) -> list[Path]:
    """``allocation.png`` and ``fragmentation.png`` in ``directory``; their paths."""
    out = Path(directory)
    paths = [out / ALLOCATION_PNG, out / FRAGMENTATION_PNG]
    paths[0].write_bytes(png_bytes(allocation_figure(curves)))
    paths[1].write_bytes(png_bytes(fragmentation_figure(curves)))
    return paths
