"""``simulate``: ``kubesched simulate`` from Python, its answers as tables.

    from kubesched.research import Snapshot, simulate

    snap = Snapshot.load("examples/demo-cluster.yaml")
    snap.cordon("general-a-1")                         # optional what-if edits
    run = simulate(snap, config="default", seed=7)
    run.pods.to_pandas()                               # every pending pod: node or reason
    run.nodes.to_arrow()                               # requested against allocatable, per node

The simulation is the command's (``cluster.simulated.Simulation``: the same scheduler,
queue and virtual clock), so the same snapshot, configuration and seed give the same
placements as ``kubesched simulate --seed``. Inputs a user can get wrong (the snapshot,
the configuration, plugins) raise ``PlanningError``, whose ``lines`` name every problem.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cluster.simulated import Simulation, SimulationResult, fit_message
from ..cluster.snapshot import ClusterSnapshot, SnapshotError, snapshot_from_objects
from ..framework.config import ConfigError, SchedulerConfig
from ..framework.registry import Registry
from ..planning.inputs import DEFAULT_CONFIG, PlanningError, load_config_file, load_registry, read_snapshot
from ..scheduler.attempt import Attempt
from .snapshot import Snapshot
from .table import ColumnType, Table

__all__ = ["SimulationRun", "simulate", "PLACEMENT_COLUMNS", "POD_COLUMNS", "ATTEMPT_COLUMNS", "NODE_COLUMNS",
           "ZONE_LABELS"]

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
TIE_BREAKS = ("heap", "random", "name")

PLACEMENT_COLUMNS: tuple[tuple[str, ColumnType], ...] = (
    ("order", "int"), ("pod", "str"), ("namespace", "str"), ("name", "str"), ("node", "str"), ("time", "float"))
POD_COLUMNS: tuple[tuple[str, ColumnType], ...] = (
    ("pod", "str"), ("namespace", "str"), ("name", "str"), ("status", "str"), ("node", "str"), ("attempts", "int"),
    ("scheduled_at", "float"), ("reason", "str"), ("preempted_by", "str"))
ATTEMPT_COLUMNS: tuple[tuple[str, ColumnType], ...] = (
    ("pod", "str"), ("attempt", "int"), ("profile", "str"), ("node", "str"), ("evaluated_nodes", "int"),
    ("feasible_nodes", "int"), ("started", "float"), ("finished", "float"), ("reason", "str"),
    ("nominated_node", "str"), ("victims", "int"))
NODE_COLUMNS: tuple[tuple[str, ColumnType], ...] = (
    ("node", "str"), ("zone", "str"), ("cpu_requested", "int"), ("cpu_allocatable", "int"), ("cpu_share", "float"),
    ("memory_requested", "int"), ("memory_allocatable", "int"), ("memory_share", "float"), ("pods", "int"),
    ("pods_allocatable", "int"), ("new_pods", "int"))


@dataclass(slots=True)
class _AttemptRow:
    pod: str
    attempt: int
    profile: str
    node: str | None
    evaluated_nodes: int | None
    feasible_nodes: int | None
    started: float
    finished: float
    reason: str
    nominated_node: str | None
    victims: int


def _attempt_row(attempt: Attempt) -> _AttemptRow:
    result, preemption = attempt.result, attempt.post_filter
    return _AttemptRow(
        attempt.pod.key, attempt.attempt, attempt.profile,
        result.suggested_host if result is not None else None,
        result.evaluated_nodes if result is not None else None,
        result.feasible_nodes if result is not None else None,
        attempt.started, attempt.finished,
        "" if result is not None else fit_message(attempt.error),
        preemption.nominated_node if preemption is not None else None,
        len(preemption.victims) if preemption is not None else 0,
    )


@dataclass(slots=True)
class SimulationRun:
    """What a simulation found; each table converts with ``to_pandas()`` / ``to_arrow()``.

    ``placements``: one row per binding, in binding order, with the virtual time.
    ``pods``: one row per pending pod the profiles schedule: ``status`` is ``scheduled``,
    ``unschedulable``, ``gated`` (held by a PreEnqueue plugin) or ``preempted`` (placed,
    then evicted by a preemptor), with the node or the scheduler's reason.
    ``attempts``: one row per scheduling attempt (node chosen or reason, nodes evaluated
    and feasible, preemption's nominated node and victims).
    ``nodes``: per node, requested against allocatable cpu (millicores), memory (bytes)
    and pods after the run, and the pods this run placed there.
    """

    result: SimulationResult
    simulation: Simulation
    tie_break: str
    seed: int | None
    attempt_rows: list[_AttemptRow] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, Any]:
        r = self.result
        return {"pending": len(r.outcomes), "scheduled": len(r.scheduled), "unschedulable": len(r.unschedulable),
                "gated": len(r.gated), "other_schedulers": len(r.ignored_pods), "attempts": r.attempts,
                "preemptions": len(r.preemptions), "virtual_seconds": r.virtual_seconds, "livelocked": r.livelocked,
                "tie_break": self.tie_break, "seed": self.seed}

    @property
    def placements(self) -> Table:
        times = {key: o.scheduled_at for key, o in self.result.outcomes.items()}
        return Table.from_rows("placements", PLACEMENT_COLUMNS, (
            (i, pod, *_split(pod), node, times.get(pod)) for i, (pod, node) in enumerate(self.result.placements)))

    @property
    def pods(self) -> Table:
        rows = []
        for key, o in self.result.outcomes.items():
            status = ("scheduled" if o.node else "preempted" if o.preempted_by else "gated" if o.gated
                      else "unschedulable")
            rows.append((key, *_split(key), status, o.node, o.attempts, o.scheduled_at, "" if o.node else o.message,
                         o.preempted_by))
        return Table.from_rows("pods", POD_COLUMNS, rows)

    @property
    def attempts(self) -> Table:
        return Table.from_records("attempts", ATTEMPT_COLUMNS, self.attempt_rows)

    @property
    def nodes(self) -> Table:
        labels = {node.name: node.labels for node in self.simulation.snapshot.nodes}
        placed: dict[str, int] = {}
        for _, node in self.result.placements:
            placed[node] = placed.get(node, 0) + 1
        rows = []
        for usage in self.simulation.node_usage():
            name = str(usage["node"])
            node_labels = labels.get(name, {})
            zone = next((node_labels[k] for k in ZONE_LABELS if node_labels.get(k)), None)
            (cpu, cpu_alloc), (mem, mem_alloc), (pods, pods_alloc) = usage["cpu"], usage["memory"], usage["pods"]
            rows.append((name, zone, cpu, cpu_alloc, cpu / cpu_alloc if cpu_alloc else 0.0, mem, mem_alloc,
                         mem / mem_alloc if mem_alloc else 0.0, pods, pods_alloc, placed.get(name, 0)))
        return Table.from_rows("nodes", NODE_COLUMNS, rows)


def _split(key: str) -> tuple[str, str]:
    namespace, _, name = key.rpartition("/")
    return namespace, name


def simulate(snapshot: Snapshot | ClusterSnapshot | str | Path, config: str | Path | SchedulerConfig = DEFAULT_CONFIG, *,
             tie_break: str = "heap", seed: int | None = None, plugins: Sequence[str] = ()) -> SimulationRun:
    """Schedule the snapshot's pending pods until the queue settles, as ``kubesched simulate`` does.

    ``snapshot``: a ``Snapshot`` (edited or not), a compiled ``ClusterSnapshot``, or a
    path (a file or directory of YAML/JSON). ``config``: a KubeSchedulerConfiguration
    file, ``"default"``, or a ``SchedulerConfig``. ``tie_break``, among equally scored
    nodes, as the command's ``--tie-break``: ``heap`` (upstream's own order, the default),
    ``random`` (a uniform pick with ``seed``; a random seed when None, kept in
    ``SimulationRun.seed``) or ``name`` (the smallest name). ``plugins``: out-of-tree
    plugins as ``module:attribute``.
    """
    if tie_break not in TIE_BREAKS:
        raise PlanningError([f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}"])
    registry = load_registry(plugins)
    scheduler_config = config if isinstance(config, SchedulerConfig) else load_config_file(str(config), registry)
    compiled = _compiled(snapshot, registry, bool(scheduler_config.extenders))
    if tie_break == "random" and seed is None:
        seed = random.SystemRandom().randrange(2**31)
    rows: list[_AttemptRow] = []
    source = str(config) if not isinstance(config, SchedulerConfig) else ""
    try:
        sim = Simulation(compiled, scheduler_config, registry, tie_break=tie_break, seed=seed,
                         on_attempt=lambda attempt: rows.append(_attempt_row(attempt)))
    except ConfigError as err:  # plugin args the plugins reject when they are built
        err.source = err.source or source
        raise PlanningError(err.lines()) from None
    result = sim.run()
    return SimulationRun(result, sim, tie_break, seed if tie_break == "random" else None, rows)


def _compiled(snapshot: Snapshot | ClusterSnapshot | str | Path, registry: Registry, keep_raw_objects: bool) -> ClusterSnapshot:
    if isinstance(snapshot, ClusterSnapshot):
        return snapshot
    if isinstance(snapshot, Snapshot):
        kinds = frozenset(kind for _, kind in registry.object_kinds())
        try:
            return snapshot_from_objects(list(zip(snapshot.sources, snapshot.objects)), plugin_kinds=kinds,
                                         keep_raw_objects=keep_raw_objects)
        except SnapshotError as err:
            raise PlanningError([str(p) for p in err.problems]) from None
    return read_snapshot(str(snapshot), registry, keep_raw_objects)
