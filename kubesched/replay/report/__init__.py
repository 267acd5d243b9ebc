"""Replay results for people: a table (rich), PNG plots and a self-contained HTML report.

Every function takes a list of ``ReplayResult`` (or the ``PolicyCurve`` list that
``summarize`` makes of them: averaged over seeds, one curve per policy, as the FGD
paper draws them). The plots and the HTML report need matplotlib, the ``research``
extra (``pip install 'kubesched[research]'``); they are loaded on first use, so the
tables and JSON work without it and ``kubesched`` starts without importing it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .jsonfile import json_document, write_json
from .summary import PAPER_FINAL, PolicyCurve, summarize
from .tables import DEFAULT_TABLE_LEVELS, PAPER_TRACE, FinalRow, allocation_rows, final_rows, render_table

if TYPE_CHECKING:
    from .html import html_report, write_html
    from .plots import ALLOCATION_PNG, FRAGMENTATION_PNG, allocation_figure, fragmentation_figure, png_bytes, write_plots

__all__ = [
    "ALLOCATION_PNG",
    "DEFAULT_TABLE_LEVELS",
    "FRAGMENTATION_PNG",
    "FinalRow",
    "PAPER_FINAL",
    "PAPER_TRACE",
    "PolicyCurve",
    "allocation_figure",
    "allocation_rows",
    "final_rows",
    "fragmentation_figure",
    "html_report",
    "json_document",
    "png_bytes",
    "render_table",
    "summarize",
    "write_html",
    "write_json",
    "write_plots",
]

_NEEDS_MATPLOTLIB = {
    "html_report": ".html",
    "write_html": ".html",
    "ALLOCATION_PNG": ".plots",
    "FRAGMENTATION_PNG": ".plots",
    "allocation_figure": ".plots",
    "fragmentation_figure": ".plots",
    "png_bytes": ".plots",
    "write_plots": ".plots",
}


def __getattr__(name: str) -> object:
    """The plotting half, imported when first asked for (PEP 562)."""
    module = _NEEDS_MATPLOTLIB.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
