"""`kubesched compare`: what changes if the scheduler ran with this configuration instead?

Runs the snapshot's pending pods under each configuration (same snapshot, same seed)
and prints the outcomes side by side; ``--report`` writes them as an HTML page with
plots (needs the ``research`` extra: matplotlib), ``--json`` as one JSON document.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import orjson
from rich.console import Console
from rich.table import Table

from ..planning import CompareResult, CompareSpec, PlanningError, run_compare, to_document
from ..planning.summary import summary_rows
from ..planning.inputs import load_config_file, load_registry
from .common import check_writable, fail, plugin_option
from .progress import PhaseProgress
from .snapshot_source import SourceOptions, check_source, cluster_snapshot_file, edited_snapshot_file, source_options
from .what_if_report import edit_lines

__all__ = ["compare"]

REPORT_MODULE = "kubesched.planning.html_report"  # imported only for --report: it needs matplotlib
RESEARCH_EXTRA = "pip install 'kubesched[research]'"
REASONS_SHOWN = 3  # unschedulable reasons per configuration in the terminal


@click.command()
@click.argument("snapshot", type=click.Path(allow_dash=True), required=False)
@click.option("--config", "configs", multiple=True, required=True, metavar="FILE",
              help="A KubeSchedulerConfiguration (v1) file, or 'default'; give two or more. The first is the baseline.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), metavar="FILE.html",
              help="Write a self-contained HTML report with plots here (needs matplotlib).")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Write the whole comparison as JSON here (- for standard output).")
@click.option("--pods", "pods_shown", type=click.IntRange(min=0), default=20, show_default=True, metavar="N",
              help="List at most N pods placed differently (the reports list them all).")
@click.option("--tie-break", type=click.Choice(["random", "name"]), default="random", show_default=True,
              help="Among equally scored nodes: upstream's uniform random pick, or the smallest name.")
@click.option("--seed", type=int, default=None,
              help="Seed for the random tie-break, the same for every configuration (default: a random one, printed).")
@source_options
@plugin_option
def compare(snapshot: str | None, configs: tuple[str, ...], report_file: str | None, json_file: str | None,
            pods_shown: int, tie_break: str, seed: int | None, plugins: tuple[str, ...], **cluster: Any) -> None:
    """Schedule the pending pods of SNAPSHOT under each --config and compare: pods placed
    elsewhere or not at all, utilisation and fragmentation per configuration."""
    if len(configs) < 2:
        fail(["give two or more --config (a file, or 'default' for the default configuration)"])
    options = SourceOptions.pop(cluster)
    check_source(snapshot, options)
    writer = _report_writer() if report_file else None
    for path in (report_file, json_file):
        if path and path != "-":
            check_writable(path)
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)  # printed, so the run can be repeated
    progress = PhaseProgress(sys.stderr, Console(stderr=True).is_terminal)
    scratch = tempfile.TemporaryDirectory(prefix="kubesched-")
    if snapshot is None:  # --kubeconfig: every kind any of the configurations reads
        try:
            registry = load_registry(plugins)
            loaded = [load_config_file(path, registry) for path in configs]
        except PlanningError as err:
            fail(err.lines)
        snapshot = cluster_snapshot_file(options, loaded, registry, progress, scratch)
    shown = snapshot if not options.kubeconfig else f"cluster {options.context or options.kubeconfig}"
    snapshot, what_if = edited_snapshot_file(snapshot, options, scratch)
    try:
        result = run_compare(CompareSpec(snapshot, configs, seed, tie_break, plugins),
                             progress=lambda label: progress.start(f"scheduling under {label}"))
    except PlanningError as err:
        progress.finish()
        fail(err.lines)
    progress.finish()
    result.snapshot = shown if what_if is None else f"{shown} (edited: {'; '.join(what_if.edits)})"
    if what_if is not None:
        for line in edit_lines(what_if):
            click.echo(line, err=True)
    if writer is not None and report_file:
        _write(report_file, lambda path: writer(result, path))
    if json_file:
        data = orjson.dumps(to_document(result), option=orjson.OPT_INDENT_2) + b"\n"
        if json_file == "-":  # the JSON is the whole output
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
            return
        _write(json_file, lambda path: Path(path).write_bytes(data))
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    render_compare(console, result, pods_shown)
    for path in (json_file, report_file):
        if path:
            _print(console, f"wrote {path}")


ReportWriter = Callable[[CompareResult, str], None]


def _report_writer() -> ReportWriter:
    """The HTML writer, or one line naming the extra to install when matplotlib is missing
    (checked before the run, not after it)."""
    if importlib.util.find_spec("matplotlib") is None:
        fail([f"--report draws its plots with matplotlib, which is not installed: {RESEARCH_EXTRA}"])
    writer: ReportWriter = getattr(importlib.import_module(REPORT_MODULE), "write_compare_report")
    return writer



def _write(path: str, write: Callable[[str], object]) -> None:
    try:
        write(path)
    except OSError as err:
        fail([f"{path}: {err.strerror or err}"])


def _print(console: Console, text: str) -> None:
    console.print(text, highlight=False, markup=False)


def _summary_table(result: CompareResult) -> Table:
    table = Table(title="Side by side (the first configuration is the baseline)", title_justify="left")
    table.add_column("")
    for label in result.labels:
        table.add_column(label, justify="right")
    section = None
    for row in summary_rows(result):
        if row.section != section:
            section = row.section
            table.add_section()
            table.add_row(f"[bold]{section}[/bold]", *([""] * len(result.labels)))
        table.add_row(f"  {row.label}", *row.cells)
    return table


def _pods_table(result: CompareResult, shown: int) -> Table:
    title = f"Pods placed differently ({len(result.pods)})"
    if shown < len(result.pods):
        title += f"; the first {shown}, --pods N lists more"
    table = Table(title=title, title_justify="left")
    table.add_column("POD")
    for label in result.labels:
        table.add_column(label)
    for change in result.pods[:shown]:
        table.add_row(change.pod, *(node or "[red]not placed[/red]" for node in change.nodes))
    return table


def render_compare(console: Console, result: CompareResult, pods_shown: int = 20) -> None:
    tie = f"seed {result.seed}" if result.tie_break == "random" else "ties broken by name"
    _print(console, f"{result.snapshot}: {result.pending} pending pod(s) on {result.nodes} node(s) under "
                    f"{len(result.configs)} configurations ({tie})")
    console.print(_summary_table(result))
    if result.pods and pods_shown:
        console.print(_pods_table(result, pods_shown))
    elif not result.pods:
        _print(console, "Every pending pod is placed on the same node (or on none) under every configuration.")
    for run in result.configs:
        if run.unschedulable_reasons:
            _print(console, f"{run.label}: unschedulable pods by reason:")
            for reason in run.unschedulable_reasons[:REASONS_SHOWN]:
                _print(console, f"  {reason.pods} pod(s): {reason.message}")
            if len(run.unschedulable_reasons) > REASONS_SHOWN:
                _print(console, f"  and {len(run.unschedulable_reasons) - REASONS_SHOWN} more reason(s)")
