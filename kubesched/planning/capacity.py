"""``run_capacity``: how many more replicas of each pod spec fit, placed as the scheduler places them.

The model is cluster-capacity (kubernetes-sigs/cluster-capacity): replicas are created
one at a time and scheduled by the real scheduler (the given configuration's plugins),
the next created once the previous is bound, until one does not fit; the report says
how many fit, why the next did not (the scheduler's ``0/N nodes are available: ...``,
and which nodes failed for which reason) and how the replicas spread over the nodes.

Differences, on purpose: the snapshot's own pending pods are scheduled first (they are
ahead in the queue; the count is what fits once they are placed); a replica that
preempts lower-priority pods is retried once they are evicted and counts when it is
placed, as the scheduler would place it; and with several specs the replicas are
interleaved round-robin as cluster-capacity does, but a spec whose replica does not fit
drops out while the others go on, so each spec gets its own count and its own reason.

A spec file holding a PodGroup is a pod-group shape (``gang_shapes.py``): whole copies of
the group are counted instead of replicas, each all or nothing as the scheduler's
pod-group cycle places it (``gang_capacity.py``), in the same round-robin.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..cluster.simulated import PodOutcome
from ..cluster.snapshot import ClusterSnapshot, SELECTOR_KINDS
from ..framework.config import needs_raw_objects
from ..objects.pod import PodInfo
from ..scheduler.fit_error import FitError
from ..scheduler.scheduler import Attempt
from .capacity_types import (
    FAILED,
    LIMIT_REACHED,
    SCHEDULING_GATED,
    UNSCHEDULABLE,
    PodRequirements,
    Termination,
    requirements_of,
)
from .inputs import DEFAULT_CONFIG, TIE_BREAKS, PlanningError, load_config_file, load_registry, new_simulation, read_snapshot
from .replicas import NodeReason, ReplicaSimulation, node_reasons
from .gang_capacity import GangCapacity, GangCounter
from .gang_shapes import GangShape, gang_shape, is_gang_file
from .templates import PodTemplate, read_objects, read_templates

__all__ = ["CapacitySpec", "CapacityResult", "SpecCapacity", "PodRequirements", "Termination", "run_capacity",
           "UNSCHEDULABLE", "LIMIT_REACHED", "SCHEDULING_GATED", "FAILED"]

@dataclass(frozen=True, slots=True)
class CapacitySpec:
    """What to count: plain paths and values, so that a run can be shipped to another process."""

    snapshot: str
    pod_files: tuple[str, ...]
    config: str = DEFAULT_CONFIG  # a KubeSchedulerConfiguration file, or "default"
    max_replicas: int | None = None  # per spec
    seed: int = 0
    tie_break: str = "random"
    plugins: tuple[str, ...] = ()  # out-of-tree plugins, module:attribute
    feature_gates: tuple[str, ...] = ()  # --feature-gates values (Key=bool,...): pod groups need the workload gates


@dataclass(slots=True)
class SpecCapacity:
    name: str
    kind: str
    namespace: str
    source: str
    requirements: PodRequirements
    replicas: int  # how many fit
    per_node: dict[str, int]  # node -> replicas placed there, most first
    termination: Termination
    node_reasons: list[NodeReason] = field(default_factory=list)  # the replica that did not fit, by node

    @property
    def title(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(slots=True)
class CapacityResult:
    snapshot: str
    config: str
    seed: int
    tie_break: str
    nodes: int
    pending_pods: int  # the snapshot's pending pods (of the config's profiles), scheduled before counting ...
    pending_placed: int  # ... of which these were placed
    specs: list[SpecCapacity]
    preempted: list[str]  # pods the replicas preempted (evicted to make room), in order
    attempts: int  # scheduling attempts in all, the snapshot's pending pods' included
    seconds: float  # wall-clock time of the simulation (loading excluded)
    gangs: list[GangCapacity] = field(default_factory=list)  # pod-group shapes: how many whole groups fit

    @property
    def replicas(self) -> int:
        return sum(s.replicas for s in self.specs)

    @property
    def groups(self) -> int:
        return sum(g.groups for g in self.gangs)


def run_capacity(spec: CapacitySpec, progress: Callable[[int], None] | None = None) -> CapacityResult:
    """Count replicas for ``spec``; ``progress(placed)`` is called after each replica.

    Raises ``PlanningError`` for input a user can get wrong (files, config, specs).
    """
    if spec.max_replicas is not None and spec.max_replicas < 0:
        raise PlanningError([f"max replicas must be 0 or more, got {spec.max_replicas}"])
    if spec.tie_break not in TIE_BREAKS:
        raise PlanningError([f"tie break must be one of {', '.join(TIE_BREAKS)}, got {spec.tie_break!r}"])
    if not spec.pod_files:
        raise PlanningError(["give at least one pod spec file"])
    registry = load_registry(spec.plugins, spec.feature_gates)
    config = load_config_file(spec.config, registry)
    inputs = _read_inputs(spec.pod_files)
    features = registry.features
    if inputs.gangs and not features.enable_generic_workload:
        raise PlanningError([f"{shape.source}: {shape.title}: counting pod groups needs the workload gates, off by "
                             "default as upstream: --feature-gates GenericWorkload=true,GangScheduling=true "
                             "(and TopologyAwareWorkloadScheduling=true for a topology constraint)"
                             for shape in inputs.gangs])
    templates = inputs.templates + [m.template for shape in inputs.gangs for m in shape.members]
    snapshot = read_snapshot(spec.snapshot, registry, keep_raw_objects=needs_raw_objects(config, registry))
    _check_namespaces(templates, snapshot)
    recorder = _FailureRecorder([node.name for node in snapshot.nodes])
    sim = new_simulation(ReplicaSimulation, _with_controllers(snapshot, templates), config, registry, spec.config,
                         spec.tie_break, spec.seed, on_attempt=recorder)
    _check_profiles(templates, sim, spec.config)
    started = time.perf_counter()
    sim.run()  # the snapshot's own pending pods first
    pending_pods = len(sim.outcomes)
    pending_placed = sum(1 for o in sim.outcomes.values() if o.node)
    preempted_before = len(sim.cluster.preemptions)
    taken = _taken_names(snapshot)
    taken_groups = {g.key for g in snapshot.pod_groups}
    labels = {node.name: node.labels for node in snapshot.nodes}
    counters: list[_Counter | GangCounter] = []
    for item in inputs.order:  # the files' order: replicas and groups interleaved round-robin
        if isinstance(item, GangShape):
            counters.append(GangCounter(item, len(counters), taken, taken_groups, labels, features.enable_gang_scheduling,
                                        features.enable_topology_aware_workload_scheduling))
        else:
            counters.append(_Counter(item, len(counters), taken))
    _count(sim, counters, recorder, spec.max_replicas, progress)
    preempted = [victim.key for victim, _, _ in sim.cluster.preemptions[preempted_before:]]
    return CapacityResult(
        snapshot=spec.snapshot, config=spec.config, seed=spec.seed, tie_break=spec.tie_break, nodes=len(snapshot.nodes),
        pending_pods=pending_pods, pending_placed=pending_placed,
        specs=[c.result() for c in counters if isinstance(c, _Counter)], preempted=preempted, attempts=sim.attempts,
        seconds=time.perf_counter() - started, gangs=[c.result() for c in counters if isinstance(c, GangCounter)],
    )


@dataclass(slots=True)
class _Inputs:
    templates: list[PodTemplate]  # pods (and workloads' pod templates) to count replicas of
    gangs: list[GangShape]  # pod groups to count whole copies of
    order: list[PodTemplate | GangShape]  # both, in the files' order


def _read_inputs(paths: tuple[str, ...]) -> _Inputs:
    """Each file is a pod-group shape (it holds a PodGroup) or pod specs; every problem of
    every file is reported at once."""
    inputs = _Inputs([], [], [])
    problems: list[str] = []
    for path in paths:
        objects = read_objects(path, problems)
        try:
            if is_gang_file(objects):
                shape = gang_shape(objects, path)
                inputs.gangs.append(shape)
                inputs.order.append(shape)
            else:
                found = read_templates([path])
                inputs.templates.extend(found)
                inputs.order.extend(found)
        except PlanningError as err:
            problems.extend(line for line in err.lines if line not in problems)
    if problems:
        raise PlanningError(problems)
    return inputs


def _count(sim: ReplicaSimulation, counters: list[_Counter | GangCounter], recorder: _FailureRecorder,
           max_replicas: int | None, progress: Callable[[int], None] | None) -> None:
    """Place replicas (and whole pod groups) round-robin over the specs still counting; a
    spec stops at its first replica or group that does not fit (withdrawn, so no later
    binding wakes it) or at the bound."""
    active = list(counters)
    placed = 0
    while active:
        for counter in list(active):
            if max_replicas is not None and counter.count >= max_replicas:
                counter.stop_at_limit(max_replicas)
                active.remove(counter)
                continue
            fits = counter.place_next(sim) if isinstance(counter, GangCounter) else counter.place_next(sim, recorder)
            if fits:
                placed += 1
                if progress is not None:
                    progress(placed)
            else:
                active.remove(counter)


class _FailureRecorder:
    """Keeps, for the replica being placed, the per-node reasons of its failed attempt
    (read from the attempt as it happens: the diagnosis is not kept after it)."""

    def __init__(self, all_nodes: list[str]) -> None:
        self._all_nodes = all_nodes
        self._uid = ""
        self.reasons: list[NodeReason] = []

    def watch(self, uid: str) -> None:
        self._uid = uid
        self.reasons = []

    def __call__(self, attempt: Attempt) -> None:
        if attempt.pod.uid == self._uid and isinstance(attempt.error, FitError):
            self.reasons = node_reasons(attempt.error, attempt.node_names, self._all_nodes)


class _Counter:
    """One spec's replicas: their names (``<name>-<n>``, skipping names the snapshot's pods
    have, as a StatefulSet's next ordinal does) and where they went."""

    def __init__(self, template: PodTemplate, index: int, taken: set[str]) -> None:
        self.template = template
        self._index = index
        self._taken = taken
        self._next = 0
        self.replicas = 0
        self.per_node: dict[str, int] = {}
        self.termination = Termination(LIMIT_REACHED, "")
        self.reasons: list[NodeReason] = []

    @property
    def count(self) -> int:
        return self.replicas

    def stop_at_limit(self, limit: int) -> None:
        self.termination = Termination(LIMIT_REACHED, f"the limit of {limit} replica(s) was reached")

    def place_next(self, sim: ReplicaSimulation, recorder: _FailureRecorder) -> bool:
        """Create the next replica and schedule it: True when it is bound; else it is
        withdrawn and the termination says why."""
        pod = self.next_replica()
        recorder.watch(pod.uid)
        outcome = sim.place(pod)
        if outcome.node:
            self.placed(outcome.node)
            return True
        sim.withdraw(pod)
        self.termination = _termination(outcome)
        self.reasons = recorder.reasons
        return False

    def next_replica(self) -> PodInfo:
        t = self.template
        while f"{t.namespace}/{t.name}-{self._next}" in self._taken:
            self._next += 1
        ordinal = self._next
        self._next += 1
        name = f"{t.name}-{ordinal}"
        uid = f"capacity-{self._index}-{ordinal}"
        labels = t.labels_for(name, ordinal)
        meta = {**t.pod["metadata"], "name": name, "uid": uid, "labels": labels}
        return t.parsed.copy_with(name=name, uid=uid, labels=labels, raw={**t.pod, "metadata": meta})

    def placed(self, node: str) -> None:
        self.replicas += 1
        self.per_node[node] = self.per_node.get(node, 0) + 1

    def result(self) -> SpecCapacity:
        t = self.template
        per_node = dict(sorted(self.per_node.items(), key=lambda kv: (-kv[1], kv[0])))
        return SpecCapacity(t.name, t.kind, t.namespace, t.source, requirements_of(t.parsed), self.replicas, per_node,
                            self.termination, self.reasons)


def _termination(outcome: PodOutcome) -> Termination:
    if outcome.gated:
        return Termination(SCHEDULING_GATED, outcome.message)
    if outcome.message.startswith("0/") or outcome.message.startswith("no nodes available"):
        return Termination(UNSCHEDULABLE, outcome.message)
    return Termination(FAILED, outcome.message or "the replica was not placed")


def _taken_names(snapshot: ClusterSnapshot) -> set[str]:
    return {p.key for p in snapshot.bound_pods} | {p.key for p in snapshot.pending_pods}


def _check_namespaces(templates: list[PodTemplate], snapshot: ClusterSnapshot) -> None:
    """A replica's namespace must exist when the snapshot lists namespaces (as the API server requires)."""
    if not snapshot.namespaces:
        return
    missing = [f"{t.source}: {t.title}: namespace {t.namespace!r} is not in the snapshot"
               for t in templates if t.namespace not in snapshot.namespaces]
    if missing:
        raise PlanningError(missing)


def _check_profiles(templates: list[PodTemplate], sim: ReplicaSimulation, config: str) -> None:
    missing = [f"{t.source}: {t.title}: spec.schedulerName {t.parsed.scheduler_name!r} is no profile of {config}"
               for t in templates if not sim.scheduler.responsible_for(t.parsed)]
    if missing:
        raise PlanningError(missing)


def _with_controllers(snapshot: ClusterSnapshot, templates: list[PodTemplate]) -> ClusterSnapshot:
    """The snapshot plus the controllers of the specs' replicas that default spreading reads
    (the ReplicaSet of a Deployment, a StatefulSet...), unless the snapshot has them already."""
    present = {_identity(obj) for obj in snapshot.workloads}
    extra = []
    for t in templates:
        if t.controller is not None and t.controller.get("kind") in SELECTOR_KINDS and _identity(t.controller) not in present:
            present.add(_identity(t.controller))
            extra.append(t.controller)
    return replace(snapshot, workloads=[*snapshot.workloads, *extra]) if extra else snapshot


def _identity(obj: dict[str, object]) -> tuple[str, str, str]:
    meta = obj.get("metadata")
    name = namespace = ""
    if isinstance(meta, dict):
        name, namespace = str(meta.get("name", "")), str(meta.get("namespace") or "default")
    return str(obj.get("kind", "")), namespace, name
