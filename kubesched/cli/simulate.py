"""`kubesched simulate`: where would these pods go, and why not?"""

from __future__ import annotations

import gc
import random
import sys
from pathlib import Path
from typing import Any, BinaryIO

import click
import orjson
from rich.console import Console

from ..cluster.simulated import Simulation, SimulationResult
from ..framework.config import ConfigError, needs_raw_objects
from ..planning.scale_down_report import scale_down_document, scale_down_lines
from ..planning.scale_up import plan_scale_up
from .common import feature_gates_option, check_writable, fail, load_config, plugin_option, registry
from .decisions import DecisionLog, fan_out
from .explain_stream import ExplainFilter, ExplainStream
from .explain_text import explanation_lines
from .html_report import html_report
from .label_query import LabelQueryError, parse_label_query
from .progress import PhaseProgress
from .report import render_report, summary_document
from .scale_down_flags import ScaleDownFlags, run_scale_down, scale_down_options
from .scale_up_report import ScaleUpFlags, check_pools, render_scale_up, scale_up_document, scale_up_options, scale_up_spec
from .snapshot_source import SourceOptions, check_source, read_source, source_options
from .summary import summarize
from .what_if_report import what_if_document, what_if_lines


@click.command()
@click.argument("snapshot", type=click.Path(exists=False, allow_dash=True), required=False)
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="A KubeSchedulerConfiguration (v1) file.")
@click.option("--explain", "explain_file", type=click.Path(dir_okay=False),
              help="Write each attempt's decision here as it happens, one JSON object a line.")
@click.option("--explain-selector", "explain_selector", metavar="SELECTOR",
              help="Explain only pods whose labels match this selector (kubectl -l syntax); without --explain, "
                   "say on the terminal why each is pending and whether preemption would help.")
@click.option("--explain-pods", "explain_pods", metavar="PATTERN",
              help="Explain only pods whose name (or namespace/name, when PATTERN has a /) matches this glob; "
                   "without --explain, say on the terminal why each is pending and whether preemption would help.")
@click.option("--explain-failed", is_flag=True, help="Explain only the attempts that found no node.")
@click.option("--output", "output_file", type=click.Path(dir_okay=False), help="Write the placements (namespace/name -> node) here.")
@click.option("--format", "-o", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="The summary as text, or as one JSON document.")
@click.option("--all-nodes", is_flag=True, help="List every node, not only the most utilised ones.")
@click.option("--tie-break", type=click.Choice(["heap", "random", "name"]), default="heap", show_default=True,
              help="Among equally scored nodes: upstream's pick (Go's heap over the nodes in walk order; "
                   "deterministic, random only with extenders), a uniform random pick, or the smallest name.")
@click.option("--seed", type=int, default=None, help="Seed for the random tie-break (default: a random one, printed).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary line.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), metavar="FILE.html",
              help="Write a self-contained HTML page of every decision: where each pod went or why not.")
@source_options
@scale_up_options
@scale_down_options
@plugin_option
@feature_gates_option
def simulate(snapshot: str | None, config_file: str | None, explain_file: str | None, explain_selector: str | None,
             explain_pods: str | None, explain_failed: bool, output_file: str | None, output_format: str,
             all_nodes: bool, tie_break: str, seed: int | None, quiet: bool, report_file: str | None,
             plugins: tuple[str, ...], feature_gates: tuple[str, ...], **source_kwargs: Any) -> None:
    """Schedule the pending pods of SNAPSHOT (a file or directory of YAML/JSON as
    `kubectl get nodes,pods,... -A -o json` writes it, or - for standard input) on a virtual clock.

    Bound pods occupy their nodes; pending pods whose spec.schedulerName matches a
    profile are scheduled in queue order until the queue settles. With --kubeconfig the
    snapshot is taken from the cluster (read-only); --drain, --add and --remove edit it
    first (see docs/simulate.md).
    """
    source_options_given = SourceOptions.pop(source_kwargs)
    scale_up_flags = ScaleUpFlags.pop(source_kwargs)
    scale_down_flags = ScaleDownFlags.pop(source_kwargs)
    check_source(snapshot, source_options_given)
    if not explain_file and explain_failed and explain_selector is None and explain_pods is None:
        fail(["--explain-failed narrows --explain FILE, --explain-pods or --explain-selector: give one of them too"])
    # Without --explain FILE, --explain-pods / --explain-selector answer on the terminal.
    explain_here = not explain_file and (explain_selector is not None or explain_pods is not None)
    for path in (output_file, explain_file, report_file):
        if path:
            check_writable(path)
    which = _explain_filter(explain_selector, explain_pods, explain_failed)
    scale_up = scale_up_spec(scale_up_flags, seed)
    reg = registry(plugins, feature_gates)
    config = load_config(config_file, reg)
    err_console = Console(stderr=True)
    progress = PhaseProgress(sys.stderr, err_console.is_terminal, enabled=not quiet)
    read = read_source(snapshot, source_options_given, config, reg, progress,
                       # extenders and needs_raw plugins read whole objects; scale-down reads pods' volumes
                       keep_raw_objects=needs_raw_objects(config, reg) or scale_down_flags.scale_down)
    snap, source = read.snapshot, read.name
    if scale_up is not None:
        check_pools(snap, scale_up, scale_up_flags.pools)
    if tie_break == "random" and seed is None:
        seed = random.SystemRandom().randrange(2**31)  # printed, so the run can be repeated
    sim_ref: list[Simulation] = []
    explain_sink = _open(explain_file) if explain_file else None
    stream = ExplainStream(explain_sink, lambda: sim_ref[0].scheduler.cache.table.order.tolist(), which) \
        if explain_sink is not None else None
    decisions = DecisionLog(which.wants if explain_here else None) if report_file or explain_here else None
    observers = [o for o in (stream, decisions) if o is not None]
    try:
        sim = Simulation(snap, config, reg, tie_break=tie_break, seed=seed,
                         on_attempt=observers[0] if len(observers) == 1 else fan_out(observers) if observers else None)
    except ConfigError as err:
        err.source = err.source or (config_file or "")
        fail(err.lines())
    sim_ref.append(sim)
    gc.freeze()  # the loaded cluster lives as long as the run: collections need not walk it again
    progress.start("scheduling", total=len(sim.outcomes), unit="pods placed")
    result = sim.run(progress=lambda done, total: progress.update(done))
    progress.finish()
    if stream is not None:
        stream.close()  # attempts still held at Permit
    if explain_sink is not None:
        explain_sink.close()
    if output_file:
        lines = "".join(f"{pod} -> {node}\n" for pod, node in result.placements)
        _write(output_file, lines.encode())
    summary = summarize(sim, result, source, tie_break, seed)
    scale_up_plan = None
    if scale_up is not None:
        progress.start("scale-up: estimating each pool, then simulating the chosen one")
        scale_up_plan = plan_scale_up(sim, result, config, reg, scale_up, tie_break, seed)
        progress.finish()
    scale_down_plan = None
    if scale_down_flags.scale_down:
        progress.start("scale-down: simulating each candidate node's removal")
        scale_down_plan = run_scale_down(snap, result, scale_down_flags, config, reg, tie_break, seed)
        progress.finish()
    if report_file and decisions is not None:
        progress.start(f"writing {report_file}")
        _write(report_file, html_report(summary, decisions.decisions, read.what_if, read.listed,
                                        scale_up=scale_up_document(scale_up_plan) if scale_up_plan else None,
                                        scale_down=scale_down_document(scale_down_plan) if scale_down_plan else None))
        progress.finish()
    if output_format == "json":
        document = summary_document(summary, all_nodes)
        if read.what_if is not None:
            document["whatIf"] = what_if_document(read.what_if, result)
        if scale_up_plan is not None:
            document["scaleUp"] = scale_up_document(scale_up_plan)
        if scale_down_plan is not None:
            document["scaleDown"] = scale_down_document(scale_down_plan)
        sys.stdout.buffer.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
        sys.stdout.flush()
        return
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    render_report(console, summary, quiet, all_nodes)
    if read.what_if is not None and not quiet:
        _print_lines(console, what_if_lines(read.what_if, result))
    if scale_up_plan is not None and not quiet:
        render_scale_up(console, scale_up_plan)
    if scale_down_plan is not None and not quiet:
        _print_lines(console, scale_down_lines(scale_down_plan))
    if explain_here and decisions is not None:
        final = {key: outcome.node for key, outcome in result.outcomes.items()}
        never_tried = {pod.key: _not_tried(result, pod.key, pod.scheduler_name) for pod in snap.pending_pods
                       if pod.key not in decisions.decisions and which.wants_pod(pod)}
        _print_lines(console, explanation_lines(list(decisions.decisions.values()), final, never_tried))



def _not_tried(result: SimulationResult, key: str, scheduler_name: str) -> str:
    """Why a matching pending pod has no attempt: gated, or another scheduler's."""
    outcome = result.outcomes.get(key)
    if outcome is not None and outcome.gated:
        return f"waiting for scheduling gates: {outcome.message}"
    return f"left to another scheduler ({scheduler_name}): no profile of this configuration is named so"


def _print_lines(console: Console, lines: list[str]) -> None:
    for line in lines:
        console.print(line, highlight=False, markup=False)


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
