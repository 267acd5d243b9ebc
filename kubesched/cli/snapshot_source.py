"""Where a command's snapshot comes from: a file, or a cluster (``--kubeconfig``), with
what-if edits (``--drain``, ``--add``, ``--remove``) applied as it is read.

``source_options`` adds the options to a command; ``read_source`` turns them into a
``ClusterSnapshot``, every problem one line and exit 2. The live path (aiohttp and the
Kubernetes client) is imported only when ``--kubeconfig`` is given, so the file path
starts as fast as before.
"""

from __future__ import annotations

import importlib
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import click

from ..cluster.snapshot import STDIN, ClusterSnapshot, SnapshotError, load_snapshot
from ..cluster.list_writer import write_edited
from ..cluster.what_if import DrainFlags, WhatIf, WhatIfEdits, WhatIfError, WhatIfRecord, check_budgets, parse_removal
from ..framework.config import SchedulerConfig
from ..framework.registry import Registry
from .common import check_writable, fail
from .label_query import LabelQueryError, parse_label_query
from .progress import PhaseProgress

__all__ = ["SourceOptions", "SnapshotSource", "source_options", "cluster_options", "read_source", "check_source",
           "cluster_snapshot_file", "edited_snapshot_file"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(slots=True)
class SourceOptions:
    kubeconfig: str | None = None
    context: str | None = None
    save: str | None = None
    drain: tuple[str, ...] = ()
    drain_selector: str | None = None
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    drain_flags: DrainFlags = DrainFlags()

    @classmethod
    def pop(cls, kwargs: dict[str, Any]) -> "SourceOptions":
        """The options ``source_options`` (or ``cluster_options``) added, taken out of a command's
        keyword arguments."""
        return cls(kwargs.pop("kubeconfig"), kwargs.pop("context"), kwargs.pop("save_file"), kwargs.pop("drain", ()),
                   kwargs.pop("drain_selector", None), kwargs.pop("add_files", ()), kwargs.pop("remove", ()),
                   DrainFlags(kwargs.pop("force", False), kwargs.pop("ignore_daemonsets", False),
                              kwargs.pop("delete_emptydir_data", False)))


@dataclass(slots=True)
class SnapshotSource:
    snapshot: ClusterSnapshot
    name: str  # the file, or "cluster <context or server>"
    what_if: WhatIfRecord | None = None
    listed: dict[str, int] = field(default_factory=dict)  # from a cluster: plural -> objects
    seconds: float = 0.0  # reading (and listing) time


_CLUSTER_OPTIONS = 3  # the first three of ``source_options``


def cluster_options(command: F) -> F:
    """``--kubeconfig``, ``--context`` and ``--save`` (``capacity`` and ``compare``)."""
    for option in reversed(_options()[:_CLUSTER_OPTIONS]):
        command = option(command)
    return command


def source_options(command: F) -> F:
    """``--kubeconfig``, ``--context``, ``--save`` and the what-if edits."""
    for option in reversed(_options()):
        command = option(command)
    return command


def _options() -> list[Callable[[F], F]]:
    return [
        click.option("--kubeconfig", metavar="FILE", help="Take the snapshot from this cluster (read-only: get and "
                     "list; see deploy/snapshot-reader) instead of a file."),
        click.option("--context", metavar="NAME", help="The kubeconfig context (default: its current one)."),
        click.option("--save", "save_file", type=click.Path(dir_okay=False), metavar="FILE.json",
                     help="Keep the snapshot taken with --kubeconfig, as listed, for later runs."),
        click.option("--drain", multiple=True, metavar="NODE",
                     help="What if NODE were drained: cordoned, its pods (not DaemonSet or mirror pods) pending again; "
                          "repeatable."),
        click.option("--drain-selector", metavar="SELECTOR", help="Drain every node whose labels match (kubectl -l)."),
        click.option("--force", is_flag=True, help="As kubectl drain --force: delete the drained nodes' pods that "
                     "declare no controller (nothing recreates them) instead of refusing."),
        click.option("--ignore-daemonsets", is_flag=True, help="As kubectl drain --ignore-daemonsets: leave DaemonSet "
                     "pods in place without refusing (they stay either way)."),
        click.option("--delete-emptydir-data", is_flag=True, help="As kubectl drain --delete-emptydir-data: evict "
                     "pods with emptyDir volumes (their data is lost) instead of refusing."),
        click.option("--add", "add_files", multiple=True, metavar="FILE",
                     help="Add the objects of FILE (nodes, workloads) to the snapshot; repeatable."),
        click.option("--remove", multiple=True, metavar="KIND/NAME",
                     help="Remove an object (KIND/NAMESPACE/NAME when namespaced); a node's pods pending again; "
                          "repeatable."),
    ]


def check_source(snapshot: str | None, options: SourceOptions) -> None:
    """Before anything runs: a snapshot or --kubeconfig (not both), --save only with --kubeconfig."""
    if options.kubeconfig and snapshot:
        fail([f"give a SNAPSHOT file or --kubeconfig, not both ({snapshot} and --kubeconfig {options.kubeconfig})"])
    if not options.kubeconfig and not snapshot:
        fail(["give a SNAPSHOT file (or - for standard input), or --kubeconfig FILE to take one from a cluster"])
    if options.context and not options.kubeconfig:
        fail(["--context needs --kubeconfig"])
    if options.save:
        if not options.kubeconfig:
            fail(["--save keeps a snapshot taken with --kubeconfig: give --kubeconfig FILE too"])
        check_writable(options.save)


def _what_if(options: SourceOptions) -> WhatIf:
    what_if = WhatIf(drain=list(options.drain), add=list(options.add), flags=options.drain_flags)
    try:
        what_if.remove = [parse_removal(text) for text in options.remove]
    except WhatIfError as err:
        fail(err.lines)
    if options.drain_selector is not None:
        try:
            query = parse_label_query(options.drain_selector)
        except LabelQueryError as err:
            fail([f"--drain-selector: {err}"])
        what_if.drain_selector = query.matches
        what_if.drain_selector_text = options.drain_selector
    return what_if


def read_source(snapshot: str | None, options: SourceOptions, config: SchedulerConfig, registry: Registry,
                progress: PhaseProgress, keep_raw_objects: bool = False) -> SnapshotSource:
    """The snapshot, edited; a problem (a bad file, an unreachable cluster, an edit naming
    nothing) exits 2 with one line each."""
    what_if = _what_if(options)
    edits = WhatIfEdits(what_if) if what_if else None
    plugin_kinds = frozenset(kind for _, kind in registry.object_kinds())
    started = time.perf_counter()
    listed: dict[str, int] = {}
    try:
        if options.kubeconfig:
            name, snap, listed = _from_cluster(options, config, registry, plugin_kinds, keep_raw_objects, edits, progress)
        else:
            assert snapshot is not None
            name = "<stdin>" if snapshot == STDIN else snapshot
            progress.start(f"loading {name}")
            snap = load_snapshot(snapshot, plugin_kinds, keep_raw_objects=keep_raw_objects, edits=edits)
    except SnapshotError as err:
        progress.finish()
        fail([str(p) for p in err.problems])
    progress.finish()
    seconds = time.perf_counter() - started
    record: WhatIfRecord | None = None
    if edits is not None:
        if edits.problems:
            fail(edits.problems)
        check_budgets(edits, snap)
        record = edits.record
    return SnapshotSource(snap, name, record, listed, seconds)


def _from_cluster(options: SourceOptions, config: SchedulerConfig, registry: Registry, plugin_kinds: frozenset[str],
                  keep_raw_objects: bool, edits: WhatIfEdits | None,
                  progress: PhaseProgress) -> tuple[str, ClusterSnapshot, dict[str, int]]:
    live: Any = importlib.import_module("kubesched.cluster.live_snapshot")  # aiohttp only when asked for
    connection: Any = importlib.import_module("kubesched.cluster.kube.connection")
    assert options.kubeconfig is not None
    try:
        conn = connection.load_connection(options.kubeconfig, context=options.context, qps=200.0, burst=400)
    except connection.ConfigurationError as err:
        fail([str(err)])
    name = f"cluster {options.context or conn.server}"
    kinds = live.listed_kinds(config, registry)
    save: BinaryIO | None = None
    if options.save:
        try:
            save = open(options.save, "wb")  # noqa: SIM115 - closed below
        except OSError as err:
            fail([f"{options.save}: {err.strerror or err}"])
    listing = {"kind": ""}

    def report(plural: str, count: int) -> None:
        if plural != listing["kind"]:
            listing["kind"] = plural
            progress.start(f"listing {plural} from {conn.server}", unit=plural)
        progress.update(count)

    try:
        taken = live.take_snapshot(conn, kinds, name, plugin_kinds=plugin_kinds, keep_raw_objects=keep_raw_objects,
                                   edits=edits, save=save, progress=report)
    except SnapshotError:
        if save is not None and options.save:  # half a cluster is no snapshot to keep
            save.close()
            Path(options.save).unlink(missing_ok=True)
        raise
    finally:
        if save is not None:
            save.close()
    for note in taken.notes:
        click.echo(f"note: {note}", err=True)
    snap: ClusterSnapshot = taken.snapshot
    counts: dict[str, int] = dict(taken.counts)
    return name, snap, counts


def cluster_snapshot_file(options: SourceOptions, configs: list[SchedulerConfig], registry: Registry,
                          progress: PhaseProgress, scratch: tempfile.TemporaryDirectory[str]) -> str:
    """For ``capacity`` and ``compare``, which read a snapshot file (a run can be shipped to
    another process): the cluster's snapshot written to ``--save`` or into ``scratch``, with
    every kind any of ``configs`` reads. Problems exit 2, one line each."""
    live: Any = importlib.import_module("kubesched.cluster.live_snapshot")
    connection: Any = importlib.import_module("kubesched.cluster.kube.connection")
    try:
        conn = connection.load_connection(options.kubeconfig, context=options.context, qps=200.0, burst=400)
    except connection.ConfigurationError as err:
        fail([str(err)])
    kinds: list[Any] = []
    for config in configs:
        kinds += [k for k in live.listed_kinds(config, registry) if k not in kinds]
    kinds.sort(key=lambda k: k.kind == "Pod")  # pods last, as the live mode lists them
    path = options.save or str(Path(scratch.name) / "cluster.json")
    listing = {"kind": ""}

    def report(plural: str, count: int) -> None:
        if plural != listing["kind"]:
            listing["kind"] = plural
            progress.start(f"listing {plural} from {conn.server}", unit=plural)
        progress.update(count)

    try:
        with open(path, "wb") as save:
            live.take_snapshot(conn, kinds, f"cluster {options.context or conn.server}",
                               plugin_kinds=frozenset(kind for _, kind in registry.object_kinds()),
                               save=save, progress=report)
    except SnapshotError as err:
        progress.finish()
        Path(path).unlink(missing_ok=True)  # half a cluster is no snapshot to keep
        fail([str(p) for p in err.problems])
    except OSError as err:
        progress.finish()
        fail([f"{path}: {err.strerror or err}"])
    progress.finish()
    return path


def edited_snapshot_file(path: str, options: SourceOptions,
                         scratch: tempfile.TemporaryDirectory[str]) -> tuple[str, WhatIfRecord | None]:
    """For ``capacity`` and ``compare``: the snapshot at ``path`` with the what-if edits
    applied, written into ``scratch`` (``path`` itself when there are none), and what they
    did. Problems exit 2, one line each."""
    what_if = _what_if(options)
    if not what_if:
        return path, None
    edits = WhatIfEdits(what_if)
    edited = Path(scratch.name) / "edited.json"
    try:
        with open(edited, "wb") as sink:
            problems = write_edited(path, edits, sink)
    except OSError as err:
        fail([f"{edited}: {err.strerror or err}"])
    if problems:
        fail([str(p) for p in problems])
    if edits.problems:
        fail(edits.problems)
    return str(edited), edits.record

