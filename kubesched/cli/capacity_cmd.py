"""`kubesched capacity`: how many more of these pods fit, and why not one more?

The report follows cluster-capacity's: each spec's requirements, "The cluster can
schedule N instance(s) of the pod X.", the termination reason (the scheduler's own
message for the replica that did not fit), which nodes rejected it for which reason,
and how the replicas spread over the nodes. A pod-group shape (a PodGroup and its pods)
reads alike, with whole groups for replicas (``gang_capacity_lines``): how many more
fit, why the next did not (its PodGroupScheduled condition, each placement it was tried
in and why that placement was infeasible), and the topology domains they landed in.
"""

from __future__ import annotations

import random
import sys
import tempfile
from typing import Any

import click
import orjson
from rich.console import Console
from rich.table import Table

from ..planning import CapacityResult, CapacitySpec, PlanningError, SpecCapacity, run_capacity, to_document
from ..planning.inputs import DEFAULT_CONFIG, load_config_file, load_registry
from .gang_capacity_report import gang_count_line, gang_requirement_lines, gang_termination_lines
from .common import fail, feature_gates_option, plugin_option
from .snapshot_source import SourceOptions, check_source, cluster_snapshot_file, edited_snapshot_file, source_options
from .what_if_report import edit_lines
from .progress import PhaseProgress
from .report import format_bytes, format_cpu

__all__ = ["capacity"]

NODES_SHOWN = 20  # rows of the distribution table without --all-nodes
NAMES_SHOWN = 8  # node names listed per reason


@click.command()
@click.argument("snapshot_and_pods", nargs=-1, required=True, metavar="[SNAPSHOT] POD.yaml [POD2.yaml ...]")
@click.option("--config", "config_file", default=DEFAULT_CONFIG, show_default=True, metavar="FILE",
              help="A KubeSchedulerConfiguration (v1) file, or 'default'.")
@click.option("--max-replicas", type=click.IntRange(min=0), default=None, metavar="N",
              help="Count at most N replicas of each spec.")
@click.option("--output", "-o", "output_format", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="The report as text and tables, or as one JSON document.")
@click.option("--tie-break", type=click.Choice(["random", "name"]), default="random", show_default=True,
              help="Among equally scored nodes: upstream's uniform random pick, or the smallest name.")
@click.option("--seed", type=int, default=None, help="Seed for the random tie-break (default: a random one, printed).")
@click.option("--all-nodes", is_flag=True, help="List every node in the distribution, and every node name per reason.")
@source_options
@plugin_option
@feature_gates_option
def capacity(snapshot_and_pods: tuple[str, ...], config_file: str, max_replicas: int | None, output_format: str,
             tie_break: str, seed: int | None, all_nodes: bool, plugins: tuple[str, ...], feature_gates: tuple[str, ...],
             **cluster: Any) -> None:
    """How many more replicas of each pod spec fit in SNAPSHOT, placed as the scheduler places them.

    Each POD.yaml holds a Pod, or a Deployment, StatefulSet, ReplicaSet,
    ReplicationController, Job or CronJob whose pod template is used. Replicas are
    created one at a time (round-robin over several specs) after the snapshot's own
    pending pods are scheduled, until one does not fit. A POD.yaml that holds a
    scheduling.k8s.io/v1alpha2 PodGroup with its pods (a Pod, or a workload) counts whole
    groups instead: all or nothing, with the group's topology constraint (needs
    --feature-gates GenericWorkload=true,GangScheduling=true[,TopologyAwareWorkloadScheduling=true]).
    With --kubeconfig, SNAPSHOT is taken from the cluster and not given.
    """
    options = SourceOptions.pop(cluster)
    snapshot, pod_files = (None, snapshot_and_pods) if options.kubeconfig else (snapshot_and_pods[0], snapshot_and_pods[1:])
    if not pod_files:
        fail(["give one or more POD.yaml after SNAPSHOT"])
    check_source(snapshot, options)
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)  # printed, so the run can be repeated
    err_console = Console(stderr=True)
    progress = PhaseProgress(sys.stderr, err_console.is_terminal)
    scratch = tempfile.TemporaryDirectory(prefix="kubesched-")
    if snapshot is None:
        try:
            registry = load_registry(plugins, feature_gates)
            configs = [load_config_file(config_file, registry)]
        except PlanningError as err:
            fail(err.lines)
        snapshot = cluster_snapshot_file(options, configs, registry, progress, scratch)
    shown = snapshot if not options.kubeconfig else f"cluster {options.context or options.kubeconfig}"
    snapshot, what_if = edited_snapshot_file(snapshot, options, scratch)
    spec = CapacitySpec(snapshot, pod_files, config_file, max_replicas, seed, tie_break, plugins, feature_gates)
    progress.start("placing replicas", unit="replicas or groups placed")
    try:
        result = run_capacity(spec, progress=progress.update)
    except PlanningError as err:
        progress.finish()
        fail(err.lines)
    progress.finish()
    result.snapshot = shown if what_if is None else f"{shown} (edited: {'; '.join(what_if.edits)})"
    if what_if is not None:
        for line in edit_lines(what_if):
            click.echo(line, err=True)
    if output_format == "json":
        document = {"kind": "CapacityReport", "replicas": result.replicas, "groups": result.groups,
                    **_object(to_document(result))}
        sys.stdout.buffer.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
        sys.stdout.flush()
        return
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    render_capacity(console, result, all_nodes)


def _object(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _print(console: Console, text: str) -> None:
    console.print(text, highlight=False, markup=False)


def _lines(console: Console, lines: list[str]) -> None:
    for line in lines:
        _print(console, line)


def _requirements(console: Console, spec: SpecCapacity) -> None:
    req = spec.requirements
    _print(console, f"{spec.name} pod requirements ({spec.title}, {spec.source}):")
    _print(console, f"    - CPU: {format_cpu(req.cpu_millis)}")
    _print(console, f"    - Memory: {format_bytes(req.memory_bytes)}")
    if req.ephemeral_storage_bytes:
        _print(console, f"    - EphemeralStorage: {format_bytes(req.ephemeral_storage_bytes)}")
    for name, amount in req.extended.items():
        _print(console, f"    - {name}: {amount}")
    if req.node_selector:
        _print(console, f"    - NodeSelector: {','.join(f'{k}={v}' for k, v in req.node_selector.items())}")
    if req.priority:
        _print(console, f"    - Priority: {req.priority}")
    _print(console, "")


def _names(nodes: list[str], all_nodes: bool) -> str:
    if all_nodes or len(nodes) <= NAMES_SHOWN:
        return ", ".join(nodes)
    return f"{', '.join(nodes[:NAMES_SHOWN])} and {len(nodes) - NAMES_SHOWN} more"


def _distribution(result: CapacityResult, all_nodes: bool) -> Table:
    # A column per spec, then per pod-group shape (its groups' pods).
    columns = [(spec.name, spec.per_node) for spec in result.specs] + [(g.name, g.per_node) for g in result.gangs]
    totals: dict[str, int] = {}
    for _, per_node in columns:
        for node, count in per_node.items():
            totals[node] = totals.get(node, 0) + count
    rows = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    if all_nodes:
        shown = rows
    else:  # every spec's busiest nodes, so that a small spec is not crowded out by a big one
        each = max(NODES_SHOWN // len(columns), 3)
        picked = {node for _, per_node in columns for node in list(per_node)[:each]}
        shown = [row for row in rows if row[0] in picked]
    title = "Pod distribution among nodes"
    if len(shown) < len(rows):
        title += f" ({len(shown)} of {len(rows)} nodes; --all-nodes lists every node)"
    table = Table(title=title, title_justify="left")
    table.add_column("NODE")
    for name, _ in columns:
        table.add_column(name, justify="right")
    if len(columns) > 1:
        table.add_column("TOTAL", justify="right")
    for node, total in shown:
        cells = [str(per_node.get(node, "")) for _, per_node in columns]
        table.add_row(node, *cells, *([str(total)] if len(columns) > 1 else []))
    return table


def render_capacity(console: Console, result: CapacityResult, all_nodes: bool = False) -> None:
    tie = f"seed {result.seed}" if result.tie_break == "random" else "ties broken by name"
    _print(console, f"{result.snapshot}: {result.nodes} node(s); config {result.config}; {tie}; "
                    f"{result.pending_placed} of the snapshot's {result.pending_pods} pending pod(s) placed first")
    if result.preempted:
        _print(console, f"{len(result.preempted)} pod(s) of the snapshot preempted by the replicas: "
                        f"{_names(result.preempted, all_nodes)}")
    _print(console, "")
    for spec in result.specs:
        _requirements(console, spec)
    for gang in result.gangs:
        _lines(console, gang_requirement_lines(gang))
    for spec in result.specs:
        _print(console, f"The cluster can schedule {spec.replicas} instance(s) of the pod {spec.name}.")
    for gang in result.gangs:
        _print(console, gang_count_line(gang))
    several = len(result.specs) + len(result.gangs) > 1
    for spec in result.specs:
        _print(console, "")
        prefix = f"{spec.name}: " if several else ""
        _print(console, f"{prefix}Termination reason: {spec.termination}")
        if spec.node_reasons:
            _print(console, f"{prefix}Nodes that rejected the next replica, by reason:")
            for group in spec.node_reasons:
                _print(console, f"    - {group.reason} ({len(group.nodes)}): {_names(group.nodes, all_nodes)}")
    for gang in result.gangs:
        _print(console, "")
        _lines(console, gang_termination_lines(gang, f"{gang.name}: " if several else ""))
    if result.replicas or result.groups:
        _print(console, "")
        console.print(_distribution(result, all_nodes))
