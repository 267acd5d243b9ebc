"""Sweeps: a grid of replays or comparisons run in parallel on a Dask cluster.

``ReplayGrid``/``CompareGrid`` (or ``load_grid(path)``, a YAML file) expand to the
picklable specs of ``kubesched.replay`` and ``kubesched.planning``; ``connect()`` opens a
client of a local cluster of processes (or of an existing cluster by address) and
``run_sweep(client, run_replay, grid.specs())`` submits one task per spec and gathers a
``SweepOutcome``: every result, and every failure with its spec. ``replay_rows`` and
``compare_rows`` average results over seeds; ``write_files`` and ``write_html`` write
them. The Dask half (``connect``, ``run_sweep``) and the HTML report need the
``research`` extra (``pip install 'kubesched[research]'``); they are loaded on first use,
so the grids and tables work without it and ``kubesched`` starts without importing Dask.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .describe import describe
from .files import CompareSweep, ReplaySweep, Sweep, sweep_document, write_files
from .grid import CompareGrid, Grid, GridError, Kind, ReplayGrid, expand_paths, missing_files, seed_range
from .gridfile import load_grid
from .outcome import NO_WORKER_TIMEOUT, Done, SweepOutcome, TaskFailure
from .summary import CompareRow, ReplayRow, Stat, compare_rows, replay_rows, stat
from .tables import render_compare_rows, render_replay_rows

if TYPE_CHECKING:
    from .html import sweep_html, write_html
    from .runner import connect, default_workers, run_sweep, worker_count

__all__ = [
    "CompareGrid",
    "CompareRow",
    "CompareSweep",
    "Done",
    "Grid",
    "GridError",
    "Kind",
    "NO_WORKER_TIMEOUT",
    "ReplayGrid",
    "ReplayRow",
    "ReplaySweep",
    "Stat",
    "Sweep",
    "SweepOutcome",
    "TaskFailure",
    "compare_rows",
    "connect",
    "default_workers",
    "describe",
    "expand_paths",
    "load_grid",
    "missing_files",
    "render_compare_rows",
    "render_replay_rows",
    "replay_rows",
    "run_sweep",
    "seed_range",
    "stat",
    "sweep_document",
    "sweep_html",
    "worker_count",
    "write_files",
    "write_html",
]

_LAZY = {
    "connect": ".runner",
    "default_workers": ".runner",
    "run_sweep": ".runner",
    "worker_count": ".runner",
    "sweep_html": ".html",
    "write_html": ".html",
}


def __getattr__(name: str) -> object:
    """The Dask and matplotlib halves, imported when first asked for (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
