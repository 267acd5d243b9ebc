"""`kubesched simulate`: where would these pods go, and why not?"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..cluster.simulated import Simulation
from ..cluster.snapshot import SnapshotError, load_snapshot
from ..framework.config import ConfigError
from .common import fail, load_config, plugin_option, registry
from .explain_stream import ExplainFilter, ExplainStream
from .label_query import LabelQueryError, parse_label_query
from .report import render_report

PROGRESS_THRESHOLD = 200  # pending pods above which a progress bar is worth showing


@click.command()
@click.argument("snapshot", type=click.Path(exists=False))
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="A KubeSchedulerConfiguration (v1) file.")
@click.option("--explain", "explain_file", type=click.Path(dir_okay=False),
              help="Write each attempt's decision here as it happens, one JSON object a line.")
@click.option("--explain-selector", "explain_selector", metavar="SELECTOR",
              help="Explain only pods whose labels match this selector (kubectl -l syntax).")
@click.option("--explain-pods", "explain_pods", metavar="PATTERN",
              help="Explain only pods whose name (or namespace/name, when PATTERN has a /) matches this glob.")
@click.option("--explain-failed", is_flag=True, help="Explain only the attempts that found no node.")
@click.option("--output", "output_file", type=click.Path(dir_okay=False), help="Write the placements (namespace/name -> node) here.")
@click.option("--tie-break", type=click.Choice(["random", "name"]), default="random", show_default=True,
              help="Among equally scored nodes: upstream's uniform random pick, or the smallest name.")
@click.option("--seed", type=int, default=None, help="Seed for the random tie-break.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary line and unschedulable pods.")
@plugin_option
def simulate(snapshot: str, config_file: str | None, explain_file: str | None, explain_selector: str | None,
             explain_pods: str | None, explain_failed: bool, output_file: str | None, tie_break: str, seed: int | None, quiet: bool, plugins: tuple[str, ...]) -> None:
    """Schedule the pending pods of SNAPSHOT (a file or directory of YAML/JSON, as
    `kubectl get nodes,pods,priorityclasses -A -o yaml` writes it) on a virtual clock.

    Bound pods occupy their nodes; pending pods whose spec.schedulerName matches a
    profile are scheduled in queue order until the queue settles.
    """
    reg = registry(plugins)
    config = load_config(config_file, reg)
    try:
        snap = load_snapshot(snapshot, frozenset(kind for _, kind in reg.object_kinds()),
                             keep_node_raw=bool(config.extenders))  # extenders are sent whole nodes
    except SnapshotError as err:
        fail([str(p) for p in err.problems])
    which = _explain_filter(explain_selector, explain_pods, explain_failed)
    sim_ref: list[Simulation] = []
    explain_sink = _open(explain_file) if explain_file else None
    stream = ExplainStream(explain_sink, lambda: sim_ref[0].scheduler.cache.table.order.tolist(), which) \
        if explain_sink is not None else None
    try:
        sim = Simulation(snap, config, reg, tie_break=tie_break, seed=seed, on_attempt=stream)
    except ConfigError as err:
        err.source = err.source or (config_file or "")
        fail(err.lines())
    sim_ref.append(sim)
    pending = len(sim.outcomes)
    err_console = Console(stderr=True)
    if pending >= PROGRESS_THRESHOLD and err_console.is_terminal and not quiet:
        with Progress(TextColumn("scheduling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console, transient=True) as bar:
            task = bar.add_task("pods", total=pending)
            result = sim.run(progress=lambda done, total: bar.update(task, completed=done))
    else:
        result = sim.run()
    if output_file:
        lines = "".join(f"{pod} -> {node}\n" for pod, node in result.placements)
        _write(output_file, lines.encode())
    if explain_sink is not None:
        explain_sink.close()
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    render_report(console, sim, result, snapshot, quiet)


def _explain_filter(selector: str | None, pattern: str | None, failed_only: bool) -> ExplainFilter:
    try:
        query = parse_label_query(selector) if selector is not None else None
    except LabelQueryError as err:
        fail([f"--explain-selector: {err}"])
    return ExplainFilter(query, pattern, failed_only)


def _open(path: str) -> BinaryIO:
    try:
        return open(path, "wb")  # noqa: SIM115 - closed after the run
    except OSError as err:
        fail([f"{path}: {err.strerror or err}"])


def _write(path: str, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as err:
        fail([f"{path}: {err.strerror or err}"])
