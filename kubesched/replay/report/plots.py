"""Plots of replay curves, as the FGD paper draws them: one line per policy against the
arrived GPU requests. matplotlib without pyplot (no global state, no display): each
figure is drawn by the Agg canvas into PNG bytes."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .summary import PolicyCurve

__all__ = ["ALLOCATION_PNG", "FRAGMENTATION_PNG", "allocation_figure", "fragmentation_figure", "png_bytes", "write_plots"]

ALLOCATION_PNG = "allocation.png"
FRAGMENTATION_PNG = "fragmentation.png"
_ARRIVED = "Arrived GPU requests (% of the cluster's GPUs)"


def allocation_figure(curves: Sequence[PolicyCurve]) -> Figure:
    """GPU allocation ratio against arrived workload; the dotted line is "everything fits"."""
    figure = Figure(figsize=(7.0, 4.5), layout="constrained")
    ax = figure.add_subplot()
    top = max((max(c.levels) for c in curves if c.levels), default=1.0) * 100
    ax.plot([0, min(top, 100), top], [0, min(top, 100), min(top, 100)], ":", color="grey", linewidth=1, label="all allocated")
    for curve in curves:
        ax.plot([x * 100 for x in curve.levels], [y * 100 for y in curve.allocation], label=curve.label, linewidth=1.6)
    ax.set_xlabel(_ARRIVED)
    ax.set_ylabel("GPU allocation ratio (%)")
    ax.set_title("GPUs allocated as the workload arrives")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return figure


def fragmentation_figure(curves: Sequence[PolicyCurve]) -> Figure:
    """Fragmented GPUs (the FGD paper's measure), and their share of the unallocated GPUs."""
    figure = Figure(figsize=(11.0, 4.5), layout="constrained")
    amount, ratio = figure.subplots(1, 2)
    for curve in curves:
        xs = [x * 100 for x in curve.levels]
        amount.plot(xs, curve.fragmentation_gpus, label=curve.label, linewidth=1.6)
        ratio.plot(xs, [y * 100 for y in curve.fragmentation_ratio], label=curve.label, linewidth=1.6)
    amount.set_ylabel("Fragmented GPUs")
    amount.set_title("GPU fragmentation")
    ratio.set_ylabel("Fragmented share of unallocated GPUs (%)")
    ratio.set_title("Fragmentation ratio")
    for ax in (amount, ratio):
        ax.set_xlabel(_ARRIVED)
        ax.grid(alpha=0.3)
    amount.legend(loc="upper left", fontsize="small")
    return figure


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
