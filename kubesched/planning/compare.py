"""``run_compare``: the same pending pods under several scheduler configurations.

The snapshot is loaded once; each configuration gets a fresh simulation of it with the
same seed, so any difference comes from the configuration. The first configuration is
the baseline the others are compared with: pods that land on another node, pods that no
longer fit anywhere, pods that now fit. Per configuration: the run's counts, utilisation
of cpu, memory, pod slots and extended resources (cluster share and per-node
distribution), nodes used, and fragmentation (see ``usage``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..cluster.simulated import Simulation, SimulationResult
from ..cluster.snapshot import ClusterSnapshot
from ..framework.config import SchedulerConfig, needs_raw_objects
from ..framework.registry import Registry
from .inputs import DEFAULT_CONFIG, TIE_BREAKS, PlanningError, load_config_file, load_registry, new_simulation, read_snapshot
from .usage import Fragmentation, ResourceUsage, Shape, common_shape, fragmentation, resource_usage, usage_resources

__all__ = ["CompareSpec", "CompareResult", "ConfigRun", "PodChange", "ChangeCounts", "ReasonCount", "run_compare",
           "config_labels"]


@dataclass(frozen=True, slots=True)
class CompareSpec:
    """What to compare: plain paths and values, so that a run can be shipped to another process."""

    snapshot: str
    configs: tuple[str, ...]  # KubeSchedulerConfiguration files, or "default"; the first is the baseline
    seed: int = 0
    tie_break: str = "random"
    plugins: tuple[str, ...] = ()  # out-of-tree plugins, module:attribute


@dataclass(slots=True)
class ReasonCount:
    message: str
    pods: int


@dataclass(slots=True)
class ConfigRun:
    """One configuration's run."""

    label: str
    config: str
    scheduled: int
    unschedulable: int
    gated: int
    preempted: int  # pods evicted by preemption (bound ones included)
    other_schedulers: int  # pending pods whose schedulerName names no profile of this configuration
    attempts: int
    livelocked: bool
    seconds: float  # wall-clock time of the simulation
    nodes_used: int  # nodes with at least one pod after the run
    nodes_with_new_pods: int  # nodes the run placed pods on
    usage: list[ResourceUsage]
    fragmentation: Fragmentation
    unschedulable_reasons: list[ReasonCount]
    placements: dict[str, str | None] = field(default_factory=dict)  # pending pod -> node, None when not placed

    def resource(self, name: str) -> ResourceUsage | None:
        return next((u for u in self.usage if u.resource == name), None)


@dataclass(slots=True)
class ChangeCounts:
    """One configuration against the baseline, over the pending pods."""

    label: str
    same: int  # on the same node, or unplaced, in both
    moved: int  # placed in both, on different nodes
    became_unschedulable: int  # placed in the baseline, not here
    became_schedulable: int  # not placed in the baseline, placed here


@dataclass(slots=True)
class PodChange:
    """A pending pod whose node is not the same under every configuration."""

    pod: str
    nodes: list[str | None]  # per configuration, in order; None: not placed


@dataclass(slots=True)
class CompareResult:
    snapshot: str
    seed: int
    tie_break: str
    nodes: int
    pending: int  # pending pods in the snapshot
    configs: list[ConfigRun]
    changes: list[ChangeCounts]  # per configuration after the first, against the first
    pods: list[PodChange]  # every pod placed differently by some configuration, in queue order

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.configs]


def config_labels(configs: tuple[str, ...] | list[str]) -> list[str]:
    """Each configuration's name in reports: ``default``, or the file's name, or its path
    when two files share a name; numbered when the same one is given twice."""
    names = [Path(c).name if c != DEFAULT_CONFIG else c for c in configs]
    seen: dict[str, int] = {}
    labels = []
    for config, name in zip(configs, names):
        label = name if sum(1 for c, n in zip(configs, names) if n == name and c != config) == 0 else config
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return labels


def run_compare(spec: CompareSpec, progress: Callable[[str], None] | None = None) -> CompareResult:
    """Schedule the snapshot's pending pods under each configuration of ``spec``;
    ``progress(label)`` is called as each configuration's run starts.

    Raises ``PlanningError`` for input a user can get wrong (files, configs).
    """
    if len(spec.configs) < 2:
        raise PlanningError([f"compare needs two or more configurations, got {len(spec.configs)}"])
    if spec.tie_break not in TIE_BREAKS:
        raise PlanningError([f"tie break must be one of {', '.join(TIE_BREAKS)}, got {spec.tie_break!r}"])
    registry = load_registry(spec.plugins)
    configs: list[SchedulerConfig] = []
    problems: list[str] = []
    for path in spec.configs:
        try:
            configs.append(load_config_file(path, registry))
        except PlanningError as err:
            problems.extend(err.lines)
    if problems:
        raise PlanningError(problems)
    snapshot = read_snapshot(spec.snapshot, registry, keep_raw_objects=any(needs_raw_objects(c, registry) for c in configs))
    shape, shape_pods = common_shape(snapshot.pending_pods)
    runs = []
    for path, label, config in zip(spec.configs, config_labels(spec.configs), configs):
        if progress is not None:
            progress(label)
        runs.append(_run_one(snapshot, config, registry, path, label, spec, shape, shape_pods))
    pods = [p.key for p in snapshot.pending_pods]
    return CompareResult(spec.snapshot, spec.seed, spec.tie_break, len(snapshot.nodes), len(pods), runs,
                         [_changes(runs[0], run) for run in runs[1:]], _pod_changes(pods, runs))


def _run_one(snapshot: ClusterSnapshot, config: SchedulerConfig, registry: Registry, path: str, label: str,
             spec: CompareSpec, shape: Shape, shape_pods: int) -> ConfigRun:
    sim = new_simulation(Simulation, snapshot, config, registry, path, spec.tie_break, spec.seed)
    started = time.perf_counter()
    result = sim.run()
    seconds = time.perf_counter() - started
    infos = sim.scheduler.cache.snapshot().list()
    placements: dict[str, str | None] = {p.key: None for p in snapshot.pending_pods}
    for key, outcome in result.outcomes.items():
        placements[key] = outcome.node
    return ConfigRun(
        label=label, config=path, scheduled=len(result.scheduled), unschedulable=len(result.unschedulable),
        gated=len(result.gated), preempted=len(result.preemptions),
        other_schedulers=len(result.ignored_pods), attempts=result.attempts,
        livelocked=result.livelocked, seconds=seconds,
        nodes_used=sum(1 for info in infos if info.pods),
        nodes_with_new_pods=len({o.node for o in result.outcomes.values() if o.node}),
        usage=resource_usage(infos, usage_resources(infos)),
        fragmentation=fragmentation(infos, shape, shape_pods),
        unschedulable_reasons=_reasons(result), placements=placements,
    )


def _reasons(result: SimulationResult) -> list[ReasonCount]:
    counts: dict[str, int] = {}
    for outcome in result.unschedulable:
        counts[outcome.message] = counts.get(outcome.message, 0) + 1
    return [ReasonCount(m, n) for m, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _changes(base: ConfigRun, other: ConfigRun) -> ChangeCounts:
    counts = ChangeCounts(other.label, 0, 0, 0, 0)
    for pod, before in base.placements.items():
        after = other.placements.get(pod)
        if before == after:
            counts.same += 1
        elif before and after:
            counts.moved += 1
        elif before:
            counts.became_unschedulable += 1
        else:
            counts.became_schedulable += 1
    return counts


def _pod_changes(pods: list[str], runs: list[ConfigRun]) -> list[PodChange]:
    changes = []
    for pod in pods:
        nodes = [run.placements.get(pod) for run in runs]
        if any(node != nodes[0] for node in nodes[1:]):
            changes.append(PodChange(pod, nodes))
    return changes
