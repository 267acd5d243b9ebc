"""`kubesched sweep`: a grid of replays or comparisons, in parallel on a Dask cluster.

The grid comes from flags (replays: ``--nodes``, ``--variant``, ``--policy``,
``--arrival``; comparisons: ``--snapshot``, ``--config``; both: ``--seeds``) or from a
YAML file (``--grid``). Tasks run on a local cluster of worker processes (``--workers``,
default one per CPU) or on an existing Dask cluster (``--scheduler-address``). Dask is
imported only once the grid is known to be good, so the command starts (and fails on bad
input) without it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Literal, Sequence, TypeVar, cast

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .. import sweep
from ..planning import CompareResult, CompareSpec, run_compare
from ..plugins.gpushare import POLICIES
from ..replay import DEFAULT_ARRIVAL, DEFAULT_SEED, ReplayResult, ReplaySpec, run_replay
from ..sweep import CompareGrid, Done, Grid, GridError, ReplayGrid, SweepOutcome
from .common import fail, output_directory

if TYPE_CHECKING:  # imported when the sweep runs (sweep.connect): Dask is the research extra
    from dask.distributed import Client

__all__ = ["sweep_command", "EXTRA_MISSING", "EXIT_FAILED", "EXIT_INTERRUPTED"]

EXTRA_MISSING = "kubesched sweep runs on Dask: pip install 'kubesched[research]'"
PLOTS_MISSING = "kubesched sweep --output draws its plots with matplotlib: pip install 'kubesched[research]'"
EXIT_FAILED = 1  # some tasks failed; the others' results are reported
EXIT_INTERRUPTED = 130  # Ctrl-C
S = TypeVar("S")
R = TypeVar("R")


@click.command("sweep")
@click.option("--grid", "grid_file", metavar="FILE", help="Read the grid from this YAML file (see docs/sweep.md).")
@click.option("--nodes", metavar="FILE", help="Replays: the node list (the Alibaba trace's CSV, or Kubernetes YAML/JSON).")
@click.option("--variant", "variants", multiple=True, metavar="PODS",
              help="Replays: a pod list, or a quoted glob of them ('data/openb_pod_list_*.csv'); repeatable.")
@click.option("--policy", "policies", multiple=True, metavar="NAME",
              help=f"Replays: a policy ({', '.join(POLICIES)}); repeatable. Default: all six.")
@click.option("--arrival", "arrivals", multiple=True, type=float, metavar="RATIO",
              help="Replays: an arrival level (GPU requests as a share of the cluster's GPUs); repeatable. Default 1.3.")
@click.option("--mode", type=click.Choice(["fgd", "timeline"]), default=None,
              help="Replays: fgd (the paper's protocol, the default) or timeline (the trace's own times).")
@click.option("--snapshot", "snapshots", multiple=True, metavar="FILE",
              help="Comparisons: a cluster snapshot, or a quoted glob of them; repeatable.")
@click.option("--config", "configs", multiple=True, metavar="FILE",
              help="Comparisons: a KubeSchedulerConfiguration file, or 'default'; two or more, the first is the baseline.")
@click.option("--seeds", type=int, default=None, metavar="N",
              help="Run every cell with N seeds: --first-seed, --first-seed + 1, ... (default 1).")
@click.option("--first-seed", type=int, default=None, metavar="S", help=f"The first seed (default {DEFAULT_SEED}).")
@click.option("--tie-break", type=click.Choice(["name", "random"]), default=None,
              help="Among equally scored nodes (default: name for replays, as the paper's simulator; random for comparisons).")
@click.option("--workers", type=int, default=None, metavar="N",
              help="Worker processes of the local cluster (default: one per CPU).")
@click.option("--scheduler-address", metavar="ADDRESS",
              help="Run on this existing Dask cluster (tcp://host:8786) instead of a local one; "
                   "its workers must read the data paths.")
@click.option("--output", "output_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Write sweep.json, results.csv, summary.csv (points.csv for replays) and report.html here.")
@click.option("--worker-timeout", type=click.FloatRange(min=0, min_open=True), default=sweep.NO_WORKER_TIMEOUT,
              show_default=True, metavar="SECONDS",
              help="When no Dask worker is left, wait this long for one to join (with a warning), then fail the "
                   "tasks left.")
@click.option("--quiet", "-q", is_flag=True, help="No progress, only the table.")
def sweep_command(grid_file: str | None, nodes: str | None, variants: tuple[str, ...], policies: tuple[str, ...],
                  arrivals: tuple[float, ...], mode: str | None, snapshots: tuple[str, ...], configs: tuple[str, ...],
                  seeds: int | None, first_seed: int | None, tie_break: str | None, workers: int | None,
                  scheduler_address: str | None, output_dir: str | None, worker_timeout: float, quiet: bool) -> None:
    """Run a grid of replays (policies x seeds x arrival levels x pod lists) or of comparisons
    (configurations x seeds x snapshots) in parallel, on local processes or a Dask cluster,
    and report them in one table (mean ± std over seeds); see docs/sweep.md."""
    if importlib.util.find_spec("dask") is None or importlib.util.find_spec("distributed") is None:
        fail([EXTRA_MISSING])
    if output_dir and importlib.util.find_spec("matplotlib") is None:
        fail([PLOTS_MISSING])
    if workers is not None and scheduler_address:
        fail(["give --workers (a local cluster) or --scheduler-address (an existing one), not both"])
    if workers is not None and workers < 1:
        fail([f"--workers must be at least 1, got {workers}"])
    replay_flags = bool(nodes or variants or policies or arrivals or mode)
    compare_flags = bool(snapshots or configs)
    try:
        if grid_file:
            if replay_flags or compare_flags or seeds is not None or first_seed is not None or tie_break:
                raise GridError("give the grid as --grid FILE or as flags, not both")
            grid = sweep.load_grid(grid_file)
        elif replay_flags and compare_flags:
            raise GridError("a sweep runs replays (--nodes, --variant, --policy, --arrival) or comparisons "
                            "(--snapshot, --config), not both")
        elif replay_flags:
            if not nodes:
                raise GridError("replays need the node list: --nodes FILE")
            grid = ReplayGrid(
                nodes, sweep.expand_paths(variants, "--variant"), policies or tuple(POLICIES),
                sweep.seed_range(1 if seeds is None else seeds, DEFAULT_SEED if first_seed is None else first_seed),
                arrivals or (DEFAULT_ARRIVAL,),
                cast(Literal["fgd", "timeline"], mode or "fgd"), cast(Literal["name", "random"], tie_break or "name"))
        elif compare_flags:
            grid = CompareGrid(
                sweep.expand_paths(snapshots, "--snapshot"), configs,
                sweep.seed_range(1 if seeds is None else seeds, DEFAULT_SEED if first_seed is None else first_seed),
                cast(Literal["name", "random"], tie_break or "random"))
        else:
            raise GridError("nothing to sweep: give --grid FILE, or replays (--nodes, --variant) or comparisons "
                            "(--snapshot, --config)")
    except GridError as err:
        fail([str(err)])
    if not scheduler_address:  # a remote cluster's workers read the files: they need not exist here
        missing = sweep.missing_files(grid)
        if missing:
            fail(missing)
    out = output_directory(output_dir) if output_dir else None
    err_console = Console(stderr=True, soft_wrap=True)
    try:
        outcome = _execute(grid, scheduler_address, workers, err_console, quiet, worker_timeout)
    except OSError as err:
        fail([str(err)])
    except KeyboardInterrupt:
        click.echo("interrupted before the sweep started", err=True)
        sys.exit(EXIT_INTERRUPTED)
    _report(grid, outcome, out, err_console)


def _execute(grid: Grid, address: str | None, workers: int | None, console: Console, quiet: bool,
             worker_timeout: float = sweep.NO_WORKER_TIMEOUT,
             ) -> SweepOutcome[ReplaySpec, ReplayResult] | SweepOutcome[CompareSpec, CompareResult]:
    """Open the cluster, run the grid on it, close it (however the run ends)."""
    where = address or f"a local cluster of {workers or sweep.default_workers()} worker process(es)"
    if not quiet:
        console.print(f"sweep: {grid.size} {grid.kind} task(s) on {where}", highlight=False)
    with sweep.connect(address, workers) as client:
        if address and not quiet and sweep.worker_count(client) == 0:
            console.print(f"{address} has no workers yet: the tasks wait for one", highlight=False)
        if isinstance(grid, ReplayGrid):
            return _run(client, run_replay, grid.specs(), console, quiet, _replay_line, worker_timeout)
        return _run(client, run_compare, grid.specs(), console, quiet, _compare_line, worker_timeout)


def _run(client: Client, function: Callable[[S], R], specs: Sequence[S], console: Console, quiet: bool,
         line: Callable[[R], str], worker_timeout: float = sweep.NO_WORKER_TIMEOUT) -> SweepOutcome[S, R]:
    """The grid's tasks with a progress bar on a terminal (a line per task otherwise)."""
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console, transient=True, disable=quiet or not console.is_terminal)
    lines = not quiet and not console.is_terminal

    def done(task: Done[S, R]) -> None:
        bar.advance(overall)
        if lines or (task.failure is not None and not quiet):  # their errors come after the table
            what = line(task.result) if task.result is not None else "failed"
            bar.console.print(f"{task.completed}/{task.total} {sweep.describe(task.spec)}: {what}", highlight=False,
                              markup=False)

    with bar:
        overall = bar.add_task(f"{len(specs)} task(s)", total=len(specs))
        def warn(message: str) -> None:  # shown even with -q: a sweep that stops making progress says why
            bar.console.print(f"warning: {message}", highlight=False, markup=False)

        return sweep.run_sweep(client, function, specs, done, worker_timeout, warn)


def _replay_line(result: ReplayResult) -> str:
    return f"{result.final.allocation_ratio * 100:.1f}% of GPUs allocated ({result.seconds:.1f}s)"


def _compare_line(result: CompareResult) -> str:
    return ", ".join(f"{run.label} {run.scheduled}/{result.pending} scheduled" for run in result.configs)



def _report(grid: Grid, outcome: SweepOutcome[ReplaySpec, ReplayResult] | SweepOutcome[CompareSpec, CompareResult],
            out: Path | None, err_console: Console) -> None:
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200)
    finished = outcome.finished
    replays = [r for r in finished if isinstance(r, ReplayResult)]
    comparisons = [r for r in finished if isinstance(r, CompareResult)]
    if isinstance(grid, ReplayGrid):
        sweep.render_replay_rows(console, sweep.replay_rows(replays))
        work = sum(r.seconds for r in replays)
    else:
        sweep.render_compare_rows(console, sweep.compare_rows(comparisons))
        work = sum(run.seconds for r in comparisons for run in r.configs)
    console.print(f"{len(finished)} of {len(outcome.specs)} task(s) finished on {outcome.workers_used} worker(s) in "
                  f"{outcome.seconds:.1f}s (the finished tasks' own times add up to {work:.1f}s)", highlight=False)
    console.print(f"workers: {outcome.workers_used} used, {outcome.workers_lost} lost; {outcome.recomputed} task(s) "
                  "recomputed after their worker was lost", highlight=False)
    for failure in outcome.failures:
        err_console.print(f"failed: {failure.task}: {failure.error}", highlight=False, markup=False)
    if out is not None:
        written = [*sweep.write_files(grid, outcome, out), sweep.write_html(grid, outcome, out / "report.html")]
        console.print("wrote " + ", ".join(str(p) for p in written), highlight=False)
    if outcome.interrupted:
        err_console.print(f"interrupted: {outcome.cancelled} task(s) cancelled", highlight=False)
        sys.exit(EXIT_INTERRUPTED)
    if outcome.failures:
        err_console.print(f"{len(outcome.failures)} of {len(outcome.specs)} task(s) failed", highlight=False)
        sys.exit(EXIT_FAILED)
