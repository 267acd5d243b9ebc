"""Replay results for people: a table (rich), PNG plots and a self-contained HTML report.

Every function takes a list of ``ReplayResult`` (or the ``PolicyCurve`` list that
``summarize`` makes of them: averaged over seeds, one curve per policy, as the FGD
paper draws them). Plots need matplotlib, the ``research`` extra
(``pip install 'kubesched[research]'``).
"""

from .html import html_report, write_html
from .jsonfile import json_document, write_json
from .plots import ALLOCATION_PNG, FRAGMENTATION_PNG, allocation_figure, fragmentation_figure, png_bytes, write_plots
from .summary import PAPER_FINAL, PolicyCurve, summarize
from .tables import DEFAULT_TABLE_LEVELS, PAPER_TRACE, FinalRow, allocation_rows, final_rows, render_table

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
