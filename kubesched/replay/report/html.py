"""A self-contained HTML report: the tables and the plots (embedded PNG), one file."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Sequence

from ..spec import ReplayResult
from .plots import allocation_figure, fragmentation_figure, png_bytes
from .summary import PolicyCurve, summarize
from .tables import DEFAULT_TABLE_LEVELS, allocation_rows, final_rows

__all__ = ["html_report", "write_html"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
table { border-collapse: collapse; margin: 1em 0 2em; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.4em; }
img { max-width: 100%; }
.muted { color: #777; }
"""


def html_report(results: Sequence[ReplayResult], levels: Sequence[float] = DEFAULT_TABLE_LEVELS,
                title: str = "kubesched replay") -> str:
    curves = summarize(results)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>", _context(results)]
    parts.append(_allocation_table(curves, levels))
    parts.append(_final_table(curves))
    for caption, figure in (("GPU allocation", allocation_figure(curves)), ("GPU fragmentation", fragmentation_figure(curves))):
        data = base64.b64encode(png_bytes(figure)).decode("ascii")
        parts.append(f"<h2>{caption}</h2><img alt='{caption}' src='data:image/png;base64,{data}'>")
    parts.append("<p class='muted'>Fragmentation is the FGD paper's measure (Weng et al., USENIX ATC '23) against the "
                 "trace's typical pods; allocation counts milli-GPUs held by pods.</p></body></html>")
    return "\n".join(parts)


def write_html(results: Sequence[ReplayResult], path: str | Path, levels: Sequence[float] = DEFAULT_TABLE_LEVELS) -> Path:
    out = Path(path)
    out.write_text(html_report(results, levels), encoding="utf-8")
    return out


def _context(results: Sequence[ReplayResult]) -> str:
    if not results:
        return "<p>No results.</p>"
    traces = sorted({r.trace for r in results})
    modes = sorted({r.spec.mode for r in results})
    seeds = sorted({r.spec.seed for r in results})
    first = results[0]
    return (f"<p>Trace {html.escape(', '.join(traces))}: {first.nodes} nodes, {first.gpu_capacity:g} GPUs; "
            f"mode {html.escape(', '.join(modes))}; {len(results)} replay(s), seeds {html.escape(_span(seeds))}.</p>")


def _span(seeds: list[int]) -> str:
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}..{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


def _allocation_table(curves: Sequence[PolicyCurve], levels: Sequence[float]) -> str:
    head = "".join(f"<th>{html.escape(c.label)}</th>" for c in curves)
    rows = "".join(
        f"<tr><td>{level * 100:g}%</td>" + "".join(f"<td>{c * 100:.1f}</td>" if c is not None else "<td>-</td>" for c in cells)
        + "</tr>"
        for level, cells in allocation_rows(curves, levels)
    )
    return (f"<table><caption>GPU allocation ratio (%) by arrived GPU requests (% of the cluster's GPUs), mean over seeds"
            f"</caption><tr><th>arrived</th>{head}</tr>{rows}</table>")


def _final_table(curves: Sequence[PolicyCurve]) -> str:
    rows = final_rows(curves)
    with_paper = any(r.paper is not None for r in rows)
    head = ("<tr><th>policy</th><th>arrived</th><th>allocated</th><th>± (std)</th><th>unallocated GPUs</th>"
            "<th>fragmented GPUs</th><th>of unallocated</th><th>failed pods</th><th>s / replay</th>"
            + ("<th>paper</th>" if with_paper else "") + "</tr>")
    body = "".join(
        f"<tr><td>{html.escape(r.label)}</td><td>{r.arrived * 100:g}%</td><td>{r.allocation * 100:.1f}%</td>"
        f"<td>{r.allocation_std * 100:.2f}</td><td>{r.unallocated_gpus:.0f}</td><td>{r.fragmentation_gpus:.0f}</td>"
        f"<td>{r.fragmentation_ratio * 100:.0f}%</td><td>{r.pods_failed:.0f}</td><td>{r.seconds:.1f}</td>"
        + (f"<td>{r.paper * 100:.1f}%</td>" if r.paper is not None else ("<td>-</td>" if with_paper else "")) + "</tr>"
        for r in rows
    )
    return f"<table><caption>At the end of each replay (mean over seeds)</caption>{head}{body}</table>"
