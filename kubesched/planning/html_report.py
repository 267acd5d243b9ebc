"""The comparison as one self-contained HTML file: the summary table, plots, the pods that moved.

Plots are drawn with matplotlib's Agg backend (no display needed) and embedded as
base64 PNG data, so the file can be mailed or attached to a ticket as it is. This
module needs the ``research`` extra (matplotlib); ``kubesched.planning`` itself does not.
"""

from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.axes import Axes  # noqa: E402 - after choosing the backend
from matplotlib.figure import Figure  # noqa: E402

from . import usage as usage_module  # noqa: E402
from .compare import CompareResult  # noqa: E402
from .summary import percent, shape_text, summary_rows  # noqa: E402

__all__ = ["compare_report_html", "write_compare_report"]

PODS_LISTED = 1000  # rows of the moved-pods table
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.section td { background: #f0f0f0; font-weight: bold; text-align: left; }
td.none { color: #b00; }
img { max-width: 100%; }
.scroll { max-height: 28em; overflow: auto; border: 1px solid #ddd; display: inline-block; }
.scroll table { margin: 0; }
.scroll th { position: sticky; top: 0; background: #fff; }
.definitions { max-width: 52em; line-height: 1.5; }
.formula { font-family: ui-monospace, monospace; background: #f7f7f7; padding: 0.5em 1em; }
"""
# The moved-pods table filters itself as one types (no network, no library).
_FILTER_SCRIPT = """
document.getElementById("pods-filter").addEventListener("input", (e) => {
  const words = e.target.value.toLowerCase().split(/\\s+/).filter(Boolean);
  let shown = 0;
  for (const row of document.querySelectorAll("#pods-table tr[data-pod]")) {
    const text = row.textContent.toLowerCase();
    row.hidden = !words.every((w) => text.includes(w));
    if (!row.hidden) shown++;
  }
  document.getElementById("pods-shown").textContent = shown;
});
"""


def _png(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return f'<img alt="" src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


def _grid(count: int) -> tuple[Figure, int, int]:
    """A figure for ``count`` panels, three to a row."""
    columns = min(count, 3)
    rows = (count + 2) // 3
    return Figure(figsize=(5 * columns, 3.6 * rows + 0.4), layout="constrained"), rows, columns


def _legend_below(figure: Figure) -> None:
    """One legend for every panel, under them: it never hides a curve or a bar."""
    handles, labels = figure.axes[0].get_legend_handles_labels() if figure.axes else ([], [])
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4), fontsize="small",
                      frameon=False)


def _sorted_utilisation(result: CompareResult) -> Figure:
    """Per resource, each configuration's node utilisation sorted high to low: packing
    shows as a steep curve that drops to zero, spreading as a flat one."""
    names = [u.resource for u in result.configs[0].usage]
    figure, rows, columns = _grid(len(names))
    for i, name in enumerate(names):
        axes = figure.add_subplot(rows, columns, i + 1)
        for run in result.configs:
            usage = run.resource(name)
            if usage is not None:
                shares = sorted(usage.node_shares, reverse=True)
                axes.plot(range(1, len(shares) + 1), [100 * s for s in shares], label=run.label, drawstyle="steps-post")
        axes.set_title(f"{name}: node utilisation, sorted")
        axes.set_xlabel("nodes, most used first")
        axes.set_ylabel("requested / allocatable (%)")
        axes.set_ylim(0, 105)
    _legend_below(figure)
    return figure


def _distribution(result: CompareResult) -> Figure:
    names = [u.resource for u in result.configs[0].usage]
    figure, rows, columns = _grid(len(names))
    for i, name in enumerate(names):
        axes = figure.add_subplot(rows, columns, i + 1)
        data = []
        for run in result.configs:
            usage = run.resource(name)
            data.append([100 * s for s in usage.node_shares] if usage is not None and usage.node_shares else [0.0])
        axes.boxplot(data)
        axes.set_xticks(range(1, len(data) + 1), result.labels)
        axes.tick_params(axis="x", labelrotation=20)
        axes.set_title(f"{name}: per-node utilisation (%)")
        axes.set_ylim(0, 105)  # a share: the full scale, even when every node is equally used
    return figure


def _outcomes(result: CompareResult) -> Figure:
    """Grouped bars: pods placed and not, nodes used, and the stranded share of free capacity."""
    figure = Figure(figsize=(11, 4.2), layout="constrained")
    counts = figure.add_subplot(1, 2, 1)
    metrics: list[tuple[str, list[float]]] = [
        ("scheduled", [r.scheduled for r in result.configs]),
        ("unschedulable", [r.unschedulable for r in result.configs]),
        ("nodes\nwith pods", [r.nodes_used for r in result.configs]),
        ("nodes given\nnew pods", [r.nodes_with_new_pods for r in result.configs])]
    _bars(counts, [m for m, _ in metrics], [[values[i] for _, values in metrics] for i in range(len(result.configs))],
          result.labels)
    counts.set_title("pods and nodes")
    stranded = figure.add_subplot(1, 2, 2)
    resources = list(result.configs[0].fragmentation.stranded)
    shares = [[100 * r.fragmentation.stranded.get(n, 0.0) for n in resources] for r in result.configs]
    _bars(stranded, resources, shares, result.labels)
    shape = result.configs[0].fragmentation
    stranded.set_title(f"free capacity stranded (%), shape: {shape_text(shape.shape)}" if shape.shape_pods
                       else "fragmentation: no pending pods")
    stranded.set_ylim(0, min(105.0, max([5.0, *(1.2 * s for row in shares for s in row)])))
    _legend_below(figure)
    return figure


def _bars(axes: Axes, groups: list[str], values: list[list[float]], labels: list[str]) -> None:
    """One bar per configuration in each group."""
    width = 0.8 / max(len(labels), 1)
    for i, (label, row) in enumerate(zip(labels, values)):
        axes.bar([g + i * width for g in range(len(groups))], row, width, label=label)
    axes.set_xticks([g + width * (len(labels) - 1) / 2 for g in range(len(groups))], groups)


def _cell(text: str) -> str:
    return f"<td>{html.escape(text)}</td>"


def _summary_table(result: CompareResult) -> str:
    head = "".join(f"<th>{html.escape(label)}</th>" for label in result.labels)
    rows = [f"<table><tr><th></th>{head}</tr>"]
    section = None
    for row in summary_rows(result):
        if row.section != section:
            section = row.section
            rows.append(f'<tr class="section"><td colspan="{len(result.labels) + 1}">{html.escape(section)}</td></tr>')
        rows.append(f"<tr>{_cell(row.label)}{''.join(_cell(c) for c in row.cells)}</tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _pods_table(result: CompareResult) -> str:
    if not result.pods:
        return "<p>Every pending pod is placed on the same node (or on none) under every configuration.</p>"
    head = "".join(f"<th>{html.escape(label)}</th>" for label in result.labels)
    listed = result.pods[:PODS_LISTED]
    unplaced = sum(1 for change in result.pods if not all(change.nodes))
    rows = [f"<p>{len(result.pods) - unplaced} pod(s) placed on another node, {unplaced} placed under some "
            "configurations and not others.</p>",
            f'<p><input id="pods-filter" type="search" placeholder="filter by pod or node" size="40"> '
            f'<span id="pods-shown">{len(listed)}</span> of {len(listed)} listed</p>',
            f'<div class="scroll"><table id="pods-table"><tr><th>pod</th>{head}</tr>']
    for change in listed:
        cells = "".join(_cell(node) if node else '<td class="none">not placed</td>' for node in change.nodes)
        rows.append(f'<tr data-pod="">{_cell(change.pod)}{cells}</tr>')
    rows.append("</table></div>")
    if len(result.pods) > PODS_LISTED:
        rows.append(f"<p>{PODS_LISTED} of {len(result.pods)} pods listed; the JSON output (--json) has them all.</p>")
    return "\n".join(rows)


def _prose(text: str) -> str:
    """A docstring as HTML prose: paragraphs, an indented block as a formula, ``code`` and
    *emphasis* marked up (not shown as literal asterisks in monospace)."""
    parts = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.splitlines()
        formula = all(line.startswith("    ") for line in lines)
        escaped = html.escape(" ".join(line.strip() for line in lines))
        escaped = re.sub(r"``(.+?)``", r"<code>\1</code>", escaped)
        escaped = re.sub(r"\*(\S[^*]*?)\*", r"<em>\1</em>", escaped)
        parts.append(f'<p class="formula">{escaped}</p>' if formula else f"<p>{escaped}</p>")
    return "\n".join(parts)


def _reasons(result: CompareResult) -> str:
    parts = []
    for run in result.configs:
        if not run.unschedulable_reasons:
            continue
        items = "".join(f"<li>{reason.pods} pod(s): {html.escape(reason.message)}</li>"
                        for reason in run.unschedulable_reasons)
        parts.append(f"<h3>{html.escape(run.label)}</h3><ul>{items}</ul>")
    return "\n".join(parts) or "<p>Every pod was placed under every configuration.</p>"


def compare_report_html(result: CompareResult) -> str:
    configs = "".join(f"<li>{html.escape(run.label)}{' (baseline)' if i == 0 else ''}</li>"
                      for i, run in enumerate(result.configs))
    tie = f"seed {result.seed}" if result.tie_break == "random" else "ties broken by name"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kubesched compare: {html.escape(result.snapshot)}</title>
<style>{_STYLE}</style></head><body>
<h1>kubesched compare</h1>
<p>{html.escape(result.snapshot)}: {result.pending} pending pod(s) on {result.nodes} node(s), {tie}.
Configurations, each scheduling the same pods from the same snapshot:</p>
<ul>{configs}</ul>
<h2>Side by side</h2>
{_summary_table(result)}
<h2>Node utilisation</h2>
{_png(_sorted_utilisation(result))}
{_png(_distribution(result))}
<h2>Outcomes and fragmentation</h2>
{_png(_outcomes(result))}
<h2>Pods placed differently ({len(result.pods)})</h2>
{_pods_table(result)}
<h2>Why pods did not fit</h2>
{_reasons(result)}
<h2>Definitions</h2>
<div class="definitions">
<p>Utilisation of a resource on a node: requested / allocatable; {percent(1.0)} is full.</p>
{_prose(usage_module.__doc__ or "")}
</div>
<script>{_FILTER_SCRIPT if result.pods else ""}</script>
</body></html>
"""


def write_compare_report(result: CompareResult, path: str | Path) -> None:
    Path(path).write_text(compare_report_html(result), encoding="utf-8")
