"""`kubesched replay`: a trace on a virtual clock, and the FGD paper's GPU-fragmentation experiment."""

from __future__ import annotations

import importlib.util
import sys
import time
from typing import Sequence

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ..plugins.gpushare import POLICIES
from ..replay import report
from ..replay import (
    DEFAULT_ARRIVAL,
    DEFAULT_SEED,
    ReplayError,
    ReplayResult,
    ReplaySpec,
    TraceError,
    default_levels,
    policy_name,
    run_replay,
)
from ..research.replay_tables import write_replay_tables
from .common import fail, output_directory

__all__ = ["replay"]

EXTRA_MISSING = ("kubesched replay --output needs the research extra (matplotlib for its plots, pyarrow for "
                 "its Parquet tables): pip install 'kubesched[research]'")
TABLE_LEVELS = (0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3)


@click.command()
@click.argument("nodes", metavar="NODES")
@click.argument("pods", metavar="PODS")
@click.option("--policy", "policies", multiple=True, metavar="NAME",
              help=f"A policy to replay ({', '.join(POLICIES)}); repeatable. Default: all six.")
@click.option("--seeds", type=click.IntRange(min=1), metavar="N",
              help=f"Replay each policy with N seeds: {DEFAULT_SEED}, {DEFAULT_SEED + 1}, ... (the paper's experiment: 10).")
@click.option("--seed", type=int, help=f"Replay each policy with this one seed (default {DEFAULT_SEED}).")
@click.option("--arrival", type=float, default=DEFAULT_ARRIVAL, show_default=True,
              help="fgd mode: pods arrive until their GPU requests reach this share of the cluster's GPUs.")
@click.option("--mode", type=click.Choice(["fgd", "timeline"]), default="fgd", show_default=True,
              help="fgd: the paper's protocol (random order, pods never leave); "
                   "timeline: pods arrive at creation_time and leave at deletion_time.")
@click.option("--level", "levels", multiple=True, type=float, metavar="RATIO",
              help="An arrival level (share of the cluster's GPUs) for the table; repeatable.")
@click.option("--tie-break", type=click.Choice(["name", "random"]), default="name", show_default=True,
              help="Among equally scored nodes: the first in a seeded random node order (the paper's simulator), "
                   "or upstream's uniform random pick.")
@click.option("--output", "output_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Write replay.json, allocation.png, fragmentation.png, report.html, and every pod's events "
                   "and the cluster against virtual time (events.csv/.parquet, series.csv/.parquet) here "
                   "(needs the research extra).")
@click.option("--quiet", "-q", is_flag=True, help="No progress, only the tables.")
def replay(nodes: str, pods: str, policies: tuple[str, ...], seeds: int | None, seed: int | None, arrival: float,
           mode: str, levels: tuple[float, ...], tie_break: str, output_dir: str | None, quiet: bool) -> None:
    """Replay the pods of PODS on the nodes of NODES and report GPU allocation and fragmentation.

    NODES and PODS are the Alibaba GPU trace's CSV files (openb_node_list_gpu_node.csv,
    openb_pod_list_default.csv, ...) or Kubernetes YAML/JSON; see docs/replay.md.
    """
    if output_dir and any(importlib.util.find_spec(name) is None for name in ("matplotlib", "pyarrow")):
        fail([EXTRA_MISSING])
    if seeds is not None and seed is not None:
        fail(["give --seeds N or --seed S, not both"])
    if not arrival > 0:
        fail([f"--arrival must be above 0, got {arrival}"])
    try:
        names = [policy_name(p) for p in policies] if policies else list(POLICIES)
    except ReplayError as err:
        fail([str(err)])
    seed_list = [seed] if seed is not None else list(range(DEFAULT_SEED, DEFAULT_SEED + (seeds or 1)))
    table_levels = sorted(set(levels) if levels else {lv for lv in TABLE_LEVELS if lv < arrival} | {arrival})
    recorded = tuple(sorted(set(default_levels(arrival)) | set(table_levels))) if mode == "fgd" else tuple(sorted(set(levels)))
    out = output_directory(output_dir) if output_dir else None
    try:
        specs = [ReplaySpec(nodes, pods, name, s, "fgd" if mode == "fgd" else "timeline", arrival, recorded,
                            "name" if tie_break == "name" else "random")
                 for name in dict.fromkeys(names) for s in seed_list]
    except ReplayError as err:
        fail([str(err)])
    err_console = Console(stderr=True)
    started = time.perf_counter()
    results = _run(specs, err_console, quiet, record=out is not None)  # --output writes every pod's events
    elapsed = time.perf_counter() - started
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    first = results[0]
    if mode == "timeline" and not levels:
        table_levels = [p.level for p in first.points]
    report.render_table(console, report.summarize(results), table_levels)
    console.print(f"{len(results)} replay(s) of {first.trace} on {first.nodes} nodes ({first.gpu_capacity:g} GPUs) "
                  f"in {elapsed:.1f}s: {elapsed / len(results):.1f}s per replay")
    if out is not None:
        written = [report.write_json(results, out / "replay.json"), *report.write_plots(report.summarize(results), out),
                   report.write_html(results, out / "report.html", table_levels),
                   *write_replay_tables(results, out)]
        console.print("wrote " + ", ".join(str(p) for p in written))



def _run(specs: Sequence[ReplaySpec], console: Console, quiet: bool, record: bool = False) -> list[ReplayResult]:
    """Every replay in turn, with a progress bar on a terminal (a line per replay otherwise)."""
    results: list[ReplayResult] = []
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console, transient=True, disable=quiet or not console.is_terminal)
    with bar:
        overall = bar.add_task("replays", total=len(specs))
        for spec in specs:
            label = f"{policy_name(spec.policy)} seed {spec.seed}"
            task = bar.add_task(label, total=None)
            try:
                result = run_replay(spec, progress=_Update(bar, task), record=record)
            except TraceError as err:
                bar.stop()
                fail([str(p) for p in err.problems])
            bar.remove_task(task)
            bar.advance(overall)
            results.append(result)
            if not quiet and not console.is_terminal:
                console.print(f"{label}: {result.final.allocation_ratio * 100:.1f}% of GPUs allocated "
                              f"({result.seconds:.1f}s)", highlight=False)
    return results


class _Update:
    """``run_replay``'s progress callback, moving one task of the bar."""

    def __init__(self, bar: Progress, task: TaskID) -> None:
        self.bar, self.task = bar, task

    def __call__(self, done: int, total: int) -> None:
        self.bar.update(self.task, completed=done, total=total)
