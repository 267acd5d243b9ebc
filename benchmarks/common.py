"""Shared helpers for kubesched's benchmarks: synthetic clusters, a timer, peak memory.

The objects mirror upstream scheduler_perf's templates
(``test/integration/scheduler_perf/templates/`` in kubernetes/kubernetes):

* ``NODE_DEFAULT``: ``node-default.yaml`` (capacity pods 110, cpu 4, memory 32Gi, Ready);
* ``POD_DEFAULT``: ``pod-default.yaml`` (one pause container, containerPort 80 without a
  host port, requests = limits = 100m cpu and 500Mi memory);
* ``POD_WITH_NODE_AFFINITY``: ``pod-with-node-affinity.yaml`` (``pod-default`` plus a
  required node affinity ``topology.kubernetes.io/zone In [zone1, zone2]``).

scheduler_perf's ``labelNodePrepareStrategy`` (one label key, values assigned
round-robin) is ``make_nodes(..., label_strategy=(key, values))``.

Everything is built as raw Kubernetes dicts first (so a benchmark can add any spec
fragment with ``deep_merge``), then compiled with kubesched's own parsers
(``parse_node`` / ``parse_pod``) into a ``ClusterSnapshot`` for ``Simulation``.

Typical use::

    nodes = make_nodes(5000, zones=3)
    bound = bind_round_robin(make_pods(1000, prefix="init-pod-"), nodes)
    pending = make_pods(10000, prefix="pod-", spec={"tolerations": [...]})
    snapshot = build_snapshot(nodes, bound, pending)
    with Timer() as t:
        result = new_simulation(snapshot).run()
"""

from __future__ import annotations

import argparse
import copy
import gc
import pstats
import resource
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import orjson

_ROOT = Path(__file__).resolve().parent.parent
try:  # installed, or another tree on PYTHONPATH (to compare versions)
    import kubesched  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(_ROOT))

from kubesched.cluster.simulated import Simulation, SimulationResult  # noqa: E402
from kubesched.cluster.snapshot import ClusterSnapshot  # noqa: E402
from kubesched.framework.config import SchedulerConfig, default_config, parse_config  # noqa: E402
from kubesched.objects.node import parse_node  # noqa: E402
from kubesched.objects.pod import parse_pod  # noqa: E402
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry  # noqa: E402

__all__ = [
    "NODE_DEFAULT",
    "POD_DEFAULT",
    "POD_WITH_NODE_AFFINITY",
    "ZONE_LABEL",
    "REGION_LABEL",
    "HOSTNAME_LABEL",
    "deep_merge",
    "make_node",
    "make_nodes",
    "make_pod",
    "make_pods",
    "bind_round_robin",
    "required_node_affinity",
    "build_snapshot",
    "new_simulation",
    "default_scheduler_config",
    "Timer",
    "peak_rss_mib",
    "current_rss_mib",
    "PythonHeapPeak",
    "WorkloadResult",
    "Progress",
    "RateDriver",
    "run_workload",
    "format_result",
]

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
HOSTNAME_LABEL = "kubernetes.io/hostname"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"

# templates/node-default.yaml
NODE_DEFAULT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"generateName": "scheduler-perf-"},
    "spec": {},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "conditions": [{"status": "True", "type": "Ready"}],
        "phase": "Running",
    },
}

# templates/pod-default.yaml
POD_DEFAULT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"generateName": "pod-"},
    "spec": {
        "containers": [
            {
                "image": PAUSE_IMAGE,
                "name": "pause",
                "ports": [{"containerPort": 80}],
                "resources": {
                    "limits": {"cpu": "100m", "memory": "500Mi"},
                    "requests": {"cpu": "100m", "memory": "500Mi"},
                },
            }
        ]
    },
}


def required_node_affinity(key: str, values: Sequence[str], operator: str = "In") -> dict[str, Any]:
    """A ``spec`` fragment: one required node selector term with one expression."""
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if operator in ("In", "NotIn", "Gt", "Lt"):
        expression["values"] = list(values)
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}
            }
        }
    }


def _copy(value: Any) -> Any:
    """A deep copy of a JSON-like value (orjson round trip: several times faster than copy.deepcopy)."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:  # not JSON-like (a tuple key, an object): the slow way
        return copy.deepcopy(value)


def deep_merge(base: Mapping[str, Any], fragment: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of ``base`` with ``fragment`` merged in: maps merge key by key, anything else replaces."""
    out = _copy(dict(base))
    for key, value in (fragment or {}).items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = _copy(value)
    return out


# templates/pod-with-node-affinity.yaml
POD_WITH_NODE_AFFINITY: dict[str, Any] = deep_merge(
    POD_DEFAULT,
    {"metadata": {"generateName": "node-affinity-"}, "spec": required_node_affinity(ZONE_LABEL, ["zone1", "zone2"])},
)


# -- nodes ---------------------------------------------------------------------
def make_node(
    name: str,
    labels: Mapping[str, str] | None = None,
    capacity: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] | None = None,
    template: Mapping[str, Any] = NODE_DEFAULT,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One node from ``template``: a name, labels (plus ``kubernetes.io/hostname``), capacity
    overrides, taints, and any other fragment in ``extra`` (deep-merged last)."""
    node = deep_merge(template, extra)
    meta = node.setdefault("metadata", {})
    meta.pop("generateName", None)
    meta["name"] = name
    meta["uid"] = f"node-uid-{name}"
    meta["labels"] = {HOSTNAME_LABEL: name, **(meta.get("labels") or {}), **(labels or {})}
    if capacity:
        status = node.setdefault("status", {})
        status["capacity"] = {**(status.get("capacity") or {}), **capacity}
    if taints:
        node.setdefault("spec", {})["taints"] = [dict(t) for t in taints]
    return node


def make_nodes(
    count: int,
    prefix: str = "scheduler-perf-",
    zones: int | Sequence[str] | None = None,
    region: str | None = None,
    label_strategy: tuple[str, Sequence[str]] | None = None,
    labels: Mapping[str, str] | Callable[[int], Mapping[str, str]] | None = None,
    capacity: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] | Callable[[int], Sequence[Mapping[str, str]] | None] | None = None,
    template: Mapping[str, Any] = NODE_DEFAULT,
    extra: Mapping[str, Any] | Callable[[int], Mapping[str, Any] | None] | None = None,
) -> list[dict[str, Any]]:
    """``count`` nodes named ``{prefix}{i:05d}``.

    * ``zones``: a number (``zone-0``, ``zone-1``, ...) or a list of zone names, assigned
      round-robin under ``topology.kubernetes.io/zone``; ``region`` sets the region label.
    * ``label_strategy``: ``(key, values)``, scheduler_perf's ``labelNodePrepareStrategy``
      (values round-robin).
    * ``labels``, ``taints``, ``extra``: the same for every node, or a function of the index.
    """
    zone_names: list[str] = []
    if isinstance(zones, int):
        zone_names = [f"zone-{z}" for z in range(zones)]
    elif zones:
        zone_names = list(zones)
    template = deep_merge(template, None)  # one copy, not one per node
    out = []
    for i in range(count):
        node_labels: dict[str, str] = {}
        if zone_names:
            node_labels[ZONE_LABEL] = zone_names[i % len(zone_names)]
        if region:
            node_labels[REGION_LABEL] = region
        if label_strategy is not None:
            key, values = label_strategy
            node_labels[key] = values[i % len(values)]
        if labels is not None:
            node_labels.update(labels(i) if callable(labels) else labels)
        node_taints = taints(i) if callable(taints) else taints
        node_extra = extra(i) if callable(extra) else extra
        out.append(make_node(f"{prefix}{i:05d}", node_labels, capacity, node_taints, template, node_extra))
    return out


# -- pods ----------------------------------------------------------------------
def make_pod(
    name: str,
    namespace: str = "default",
    template: Mapping[str, Any] = POD_DEFAULT,
    spec: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    node_name: str | None = None,
    priority: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One pod from ``template`` with a ``spec`` fragment deep-merged in (node affinity,
    tolerations, topology spread constraints, ...), labels, an optional binding."""
    pod = deep_merge(template, {"spec": spec} if spec else None)
    if extra:
        pod = deep_merge(pod, extra)
    meta = pod.setdefault("metadata", {})
    meta.pop("generateName", None)
    meta["name"] = name
    meta["namespace"] = namespace
    meta["uid"] = f"pod-uid-{namespace}-{name}"
    if labels:
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    pod_spec = pod.setdefault("spec", {})
    if node_name:
        pod_spec["nodeName"] = node_name
    if priority is not None:
        pod_spec["priority"] = priority
    return pod


def make_pods(
    count: int,
    prefix: str = "pod-",
    namespace: str = "default",
    template: Mapping[str, Any] = POD_DEFAULT,
    spec: Mapping[str, Any] | Callable[[int], Mapping[str, Any] | None] | None = None,
    labels: Mapping[str, str] | Callable[[int], Mapping[str, str] | None] | None = None,
    start: int = 0,
    priority: int | None = None,
    extra: Mapping[str, Any] | Callable[[int], Mapping[str, Any] | None] | None = None,
) -> list[dict[str, Any]]:
    """``count`` pods named ``{prefix}{i:06d}`` (``i`` from ``start``); ``spec``, ``labels``
    and ``extra`` are fixed or a function of the index (e.g. a per-pod deployment label)."""
    base = template
    out = []
    for i in range(start, start + count):
        pod_spec = spec(i) if callable(spec) else spec
        pod_labels = labels(i) if callable(labels) else labels
        pod_extra = extra(i) if callable(extra) else extra
        out.append(make_pod(f"{prefix}{i:06d}", namespace, base, pod_spec, pod_labels, None, priority, pod_extra))
    return out


def bind_round_robin(pods: Iterable[dict[str, Any]], nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Set ``spec.nodeName`` of pod ``i`` to node ``i mod len(nodes)`` (pods already running).

    With fewer pods than nodes this is where LeastAllocated spreading puts them too:
    one pod per node.
    """
    names = [n["metadata"]["name"] for n in nodes]
    out = []
    for i, pod in enumerate(pods):
        pod.setdefault("spec", {})["nodeName"] = names[i % len(names)]
        out.append(pod)
    return out


def build_snapshot(
    nodes: Iterable[Mapping[str, Any]],
    bound_pods: Iterable[Mapping[str, Any]] = (),
    pending_pods: Iterable[Mapping[str, Any]] = (),
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
) -> ClusterSnapshot:
    """Compile raw objects with kubesched's parsers. Pending pods keep their given order
    (the queue order: they all share one creation time, as in a burst of creations)."""
    snap = ClusterSnapshot()
    snap.nodes = [parse_node(n) for n in nodes]
    snap.bound_pods = [parse_pod(p, keep_raw=False) for p in bound_pods]
    snap.pending_pods = [parse_pod(p) for p in pending_pods]
    for pod in snap.bound_pods + snap.pending_pods:
        snap.namespaces.setdefault(pod.namespace, {"kubernetes.io/metadata.name": pod.namespace})
    for name, labels in (namespaces or {}).items():
        snap.namespaces[name] = {"kubernetes.io/metadata.name": name, **labels}
    return snap


# -- running -------------------------------------------------------------------
def default_scheduler_config(overrides: Mapping[str, Any] | None = None) -> SchedulerConfig:
    """The default profile with the in-tree registry, or a ``KubeSchedulerConfiguration`` dict."""
    registry = in_tree_registry()
    if overrides is None:
        return default_config(registry, UPSTREAM_ONLY)
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **overrides}
    return parse_config(raw, registry, UPSTREAM_ONLY)


def new_simulation(
    snapshot: ClusterSnapshot,
    config: SchedulerConfig | None = None,
    tie_break: str = "heap",
    seed: int | None = 0,
    registry: Any = None,
) -> Simulation:
    """A ``Simulation`` with the default config (upstream's heap tie-break)."""
    registry = registry or in_tree_registry()
    config = config or default_config(registry, UPSTREAM_ONLY)
    return Simulation(snapshot, config, registry, tie_break=tie_break, seed=seed)


class Timer:
    """``with Timer() as t: ...``; ``t.seconds`` is the wall time (perf_counter) and
    ``t.cpu_seconds`` this process's CPU time (steadier on a busy machine)."""

    def __init__(self) -> None:
        self.start = self.cpu_start = 0.0
        self.seconds = self.cpu_seconds = 0.0

    def __enter__(self) -> "Timer":
        self.cpu_start = time.process_time()
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self.start
        self.cpu_seconds = time.process_time() - self.cpu_start


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (``ru_maxrss``), in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def current_rss_mib() -> float | None:
    """This process's resident set size now, in MiB (Linux; None elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * resource.getpagesize() / 2**20


class PythonHeapPeak:
    """Peak Python heap (``tracemalloc``) inside the block, in MiB. Tracing slows Python
    down several times, so never time a block measured this way."""

    def __init__(self) -> None:
        self.peak_mib = 0.0
        self.current_mib = 0.0  # still allocated at the end of the block

    def __enter__(self) -> "PythonHeapPeak":
        gc.collect()
        tracemalloc.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        self.current_mib = current / 2**20
        self.peak_mib = peak / 2**20


@dataclass
class WorkloadResult:
    name: str
    nodes: int
    init_pods: int
    measured_pods: int
    scheduled: int
    unschedulable: int
    attempts: int
    build_seconds: float  # making and parsing objects
    load_seconds: float  # Simulation(): cache and queue filled
    run_seconds: float  # the measured scheduling, wall clock
    run_cpu_seconds: float  # the same, CPU time of this process
    peak_rss_mib: float
    heap_peak_mib: float | None = None
    heap_end_mib: float | None = None  # Python heap still held at the end (the loaded cluster, the results)
    rss_loaded_mib: float | None = None  # RSS once loaded, before the run (includes what building left behind)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.run_seconds if self.run_seconds > 0 else float("inf")

    @property
    def pods_per_cpu_second(self) -> float:
        return self.scheduled / self.run_cpu_seconds if self.run_cpu_seconds > 0 else float("inf")


Progress = Callable[[int, int], None]
"""``Simulation.run``'s progress callback, called after every attempt: ``(scheduled, total)``."""


class RateDriver:
    """A progress callback that does ``act(i)`` for i = 0, 1, ... at ``rate`` per second of
    wall time from the first attempt on (scheduler_perf's churn and deletePods ops, which
    run beside the scheduler at a fixed rate), up to ``limit`` times."""

    def __init__(self, rate: float, act: Callable[[int], None], limit: int = 1 << 62) -> None:
        self.rate, self.act, self.limit = rate, act, limit
        self.done = 0
        self.start = 0.0

    def __call__(self, scheduled: int, total: int) -> None:
        now = time.perf_counter()
        if not self.start:
            self.start = now
        due = min(self.limit, int((now - self.start) * self.rate))
        while self.done < due:
            self.act(self.done)
            self.done += 1


def run_workload(
    name: str,
    build: Callable[[], ClusterSnapshot],
    config: SchedulerConfig | None = None,
    tie_break: str = "heap",
    seed: int | None = 0,
    trace_memory: bool = False,
    on_simulation: Callable[[Simulation, SimulationResult], None] | None = None,
    profiler: Any = None,
    driver: Callable[[Simulation], Progress] | None = None,
    measured: Callable[[str], bool] | None = None,
    prepare: Callable[[Simulation], None] | None = None,
    batching: bool = True,
    registry: Any = None,
) -> WorkloadResult:
    """The one measured run every benchmark script uses: build a snapshot, load it, and time
    ``Simulation.run`` alone (scheduler_perf measures the scheduling of the measured pods,
    not the cluster's setup).

    ``driver(sim)`` makes a progress callback, once the simulation is loaded, that acts on
    the cluster while it schedules (creating, deleting or updating objects through the
    scheduler's event handlers, as informers would); its work is inside the timed run, as
    upstream's churn is. ``measured(pod key)`` says which pending pods are measured (all of
    them if None); the figure counts those only.
    ``trace_memory`` measures the Python heap peak of load + run with tracemalloc
    instead (the timing of such a run is meaningless and is reported as such).
    ``profiler`` (e.g. a ``cProfile.Profile``) is enabled around the measured run only.
    ``registry``: the plugin registry (e.g. ``in_tree_registry(features)`` for other feature
    gates; ``config`` should then come from it too); the in-tree one by default.
    """
    gc.collect()
    with Timer() as build_timer:
        snapshot = build()
    nodes, init_pods = len(snapshot.nodes), len(snapshot.bound_pods)
    keys = [p.key for p in snapshot.pending_pods]
    measured_keys = set(keys) if measured is None else {k for k in keys if measured(k)}
    heap = PythonHeapPeak() if trace_memory else None
    if heap is not None:
        heap.__enter__()
    gc.collect()
    with Timer() as load_timer:
        sim = new_simulation(snapshot, config, tie_break, seed, registry)
    sim.scheduler.algorithm.batching = sim.scheduler.algorithm.batching and batching
    del snapshot
    if prepare is not None:
        prepare(sim)
    attempts_before = sim.attempts
    progress = driver(sim) if driver is not None else None
    gc.collect()
    rss_loaded = current_rss_mib()
    if profiler is not None:
        profiler.enable()
    with Timer() as run_timer:
        result = sim.run(progress=progress)
    if profiler is not None:
        profiler.disable()
    if heap is not None:
        heap.__exit__(None, None, None)
    if on_simulation is not None:
        on_simulation(sim, result)
    scheduled = sum(1 for key in measured_keys if (o := result.outcomes.get(key)) is not None and o.node)
    return WorkloadResult(
        name=name,
        nodes=nodes,
        init_pods=init_pods,
        measured_pods=len(measured_keys),
        scheduled=scheduled,
        unschedulable=len(measured_keys) - scheduled,
        attempts=result.attempts - attempts_before,
        build_seconds=build_timer.seconds,
        load_seconds=load_timer.seconds,
        run_seconds=run_timer.seconds,
        run_cpu_seconds=run_timer.cpu_seconds,
        peak_rss_mib=peak_rss_mib(),
        heap_peak_mib=heap.peak_mib if heap is not None else None,
        heap_end_mib=heap.current_mib if heap is not None else None,
        rss_loaded_mib=rss_loaded,
    )


def format_result(r: WorkloadResult) -> str:
    lines = [
        f"{r.name}: {r.nodes} nodes, {r.init_pods} pods already bound, {r.measured_pods} measured pods",
        f"  scheduled {r.scheduled}/{r.measured_pods} in {r.attempts} attempts"
        + (f" ({r.unschedulable} unschedulable)" if r.unschedulable else ""),
    ]
    if r.heap_peak_mib is not None:
        lines.append(f"  throughput: not measured (tracemalloc on; run {r.run_seconds:.2f} s)")
        lines.append(
            f"  Python heap (tracemalloc, load + run): peak {r.heap_peak_mib:.1f} MiB, "
            f"held at the end {r.heap_end_mib:.1f} MiB"
        )
    else:
        lines.append(
            f"  throughput: {r.pods_per_second:,.0f} pods/s (measured pods only; run {r.run_seconds:.2f} s wall, "
            f"{r.run_cpu_seconds:.2f} s CPU = {r.pods_per_cpu_second:,.0f} pods per CPU second)"
        )
    lines.append(f"  setup: build {r.build_seconds:.2f} s, load {r.load_seconds:.2f} s (not measured)")
    loaded = f", {r.rss_loaded_mib:.0f} MiB once loaded" if r.rss_loaded_mib is not None else ""
    lines.append(f"  peak RSS: {r.peak_rss_mib:.0f} MiB (building the objects included){loaded}")
    for key, value in r.extra.items():
        lines.append(f"  {key}: {value}")
    return "\n".join(lines)


def dump_profile(profiler: Any, path: str, sort: str = "tottime") -> None:
    """Write a cProfile of a measured run to ``path`` and print its top functions."""
    profiler.dump_stats(path)
    pstats.Stats(path).sort_stats(sort).print_stats(25)


UPSTREAM_FLOOR = "a floor upstream's CI enforces with an API server and etcd in the loop; context, not a comparison"


def annotate_target(result: WorkloadResult, upstream: str | None, target: int) -> None:
    """Note upstream's recorded threshold (a floor measured with an API server and etcd in
    the loop: printed as such, never as a ratio) and whether kubesched's target was met."""
    if upstream is not None:
        result.extra["upstream threshold"] = f"{upstream} ({UPSTREAM_FLOOR})"
    met = result.pods_per_second >= target
    result.extra["kubesched target"] = f">= {target} pods/s: {'met' if met else 'NOT MET'}"


def write_results_json(path: str, results: Sequence[WorkloadResult]) -> None:
    """The results as JSON; throughput is null for runs traced for memory (tracing slows them)."""
    def rounded(value: float | None, digits: int = 1) -> float | None:
        return None if value is None else round(value, digits)

    rows = []
    for r in results:
        traced = r.heap_peak_mib is not None
        rows.append({
            "workload": r.name,
            "nodes": r.nodes,
            "init_pods": r.init_pods,
            "measured_pods": r.measured_pods,
            "scheduled": r.scheduled,
            "pods_per_second": None if traced else round(r.pods_per_second, 1),
            "pods_per_cpu_second": None if traced else round(r.pods_per_cpu_second, 1),
            "run_seconds": round(r.run_seconds, 3),
            "run_cpu_seconds": round(r.run_cpu_seconds, 3),
            "load_seconds": round(r.load_seconds, 3),
            "peak_rss_mib": round(r.peak_rss_mib, 1),
            "rss_loaded_mib": rounded(r.rss_loaded_mib),
            "heap_peak_mib": rounded(r.heap_peak_mib),
        })
    Path(path).write_text(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())


def benchmark_parser(doc: str | None, workloads: Sequence[str]) -> argparse.ArgumentParser:
    """The options every benchmark script takes."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default="all", choices=[*workloads, "all"], help="one workload, or all (default)")
    parser.add_argument("--nodes", type=int, help="nodes (default: the workload's)")
    parser.add_argument("--init-pods", type=int, help="pods already bound (default: the workload's)")
    parser.add_argument("--pods", type=int, help="measured pods (default: the workload's)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random tie-break (default 0)")
    parser.add_argument("--tie-break", choices=["heap", "random", "name"], default="heap",
                        help="upstream's heap order (default), a seeded random pick, or the smallest name")
    parser.add_argument("--batching", choices=["on", "off"], default="on",
                        help="OpportunisticBatching (the feature gate; on by default, as upstream)")
    parser.add_argument("--repeat", type=int, default=1, help="run each workload N times and report each run")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the measured run into FILE (slows it down)")
    parser.add_argument(
        "--trace-memory", action="store_true", help="report the peak Python heap with tracemalloc (no throughput)"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    return parser


def report_run(result: WorkloadResult, args: argparse.Namespace, profiler: Any, profile_name: str,
               at_workload_size: bool, upstream: str | None, target: int, sort: str = "tottime") -> None:
    """After one measured run: dump its profile, note the targets (for upstream's sizes), print it."""
    if profiler is not None:
        dump_profile(profiler, profile_name, sort)
    elif at_workload_size and not args.trace_memory:
        annotate_target(result, upstream, target)
    print(format_result(result), flush=True)
