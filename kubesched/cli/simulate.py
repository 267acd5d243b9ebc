"""`kubesched simulate`: where would these pods go, and why not?"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..cluster.simulated import Simulation
from ..cluster.snapshot import SnapshotError, load_snapshot
from ..framework.config import ConfigError
from ..scheduler.explain import attempt_record
from ..scheduler.scheduler import Attempt
from .common import fail, load_config, plugin_option, registry
from .report import render_report

PROGRESS_THRESHOLD = 200  # pending pods above which a progress bar is worth showing


@click.command()
@click.argument("snapshot", type=click.Path(exists=False))
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="A KubeSchedulerConfiguration (v1) file.")
@click.option("--explain", "explain_file", type=click.Path(dir_okay=False), help="Write every attempt's decision as JSON here.")
@click.option("--output", "output_file", type=click.Path(dir_okay=False), help="Write the placements (namespace/name -> node) here.")
@click.option("--tie-break", type=click.Choice(["random", "name"]), default="random", show_default=True,
              help="Among equally scored nodes: upstream's uniform random pick, or the smallest name.")
@click.option("--seed", type=int, default=None, help="Seed for the random tie-break.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary line and unschedulable pods.")
@plugin_option
def simulate(snapshot: str, config_file: str | None, explain_file: str | None, output_file: str | None,
             tie_break: str, seed: int | None, quiet: bool, plugins: tuple[str, ...]) -> None:
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
    records: list[dict[str, Any]] = []
    sim_ref: list[Simulation] = []

    def record(attempt: Attempt) -> None:
        records.append(attempt_record(attempt, sim_ref[0].scheduler.cache.table.order.tolist()))

    try:
        sim = Simulation(snap, config, reg, tie_break=tie_break, seed=seed,
                         on_attempt=record if explain_file else None)
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
    if explain_file:
        _write(explain_file, orjson.dumps({"attempts": records}, option=orjson.OPT_INDENT_2))
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    render_report(console, sim, result, snapshot, quiet)


def _write(path: str, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as err:
        fail([f"{path}: {err.strerror or err}"])
