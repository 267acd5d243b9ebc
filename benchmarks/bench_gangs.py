"""Workload-aware scheduling throughput (issue 29): a gang workload in scheduler_perf's style,
and SchedulingBasic with the workload gates on and no groups against the gates off.

    python benchmarks/bench_gangs.py [--workload SchedulingGangs|SchedulingBasic_WorkloadGates|all]
                                     [--repeat N] [--before DIR] [--profile FILE]

v1.36's ``scheduler_perf`` has no gang workload, so this one is written as its workloads are
(``createNodes`` from ``templates/node-default.yaml`` with a ``labelNodePrepareStrategy``,
``createPods`` from ``templates/pod-default.yaml``), with what its ops cannot make yet added:

* **SchedulingGangs** (``5000Nodes_1000Gangs``): 5,000 ``node-default`` nodes in 50 racks of
  100 (``topology.kubernetes.io/rack: rack-00`` ... ``rack-49``, contiguous blocks of node
  names) in 5 zones of 10 racks (``topology.kubernetes.io/zone``); 1,000 ``pod-default`` pods
  already running (one per node, as SchedulingBasic's ``initPods``); 1,000 PodGroups
  (``scheduling.k8s.io/v1alpha2``, gang policy ``minCount: 8``), each with 8 ``pod-default``
  pods carrying ``spec.schedulingGroup.podGroupName`` (8,000 measured pods, pending at once,
  gang after gang). Every third group (``i % 3 == 0``: 334) has a scheduling constraint on the
  rack label, so it must land inside one rack. Every tenth (``i % 10 == 9``: 100, 33 of them
  also rack-constrained) is too large to fit: its last member requests 5 CPUs, more than any
  node's 4, while its other seven members would fit anywhere, so only all-or-nothing keeps
  them unbound. Feature gates GenericWorkload, GangScheduling and
  TopologyAwareWorkloadScheduling on: the default profile then has GangScheduling,
  TopologyPlacementGenerator and PodGroupPodsCount at upstream's positions.
* **SchedulingBasic_WorkloadGates**: SchedulingBasic exactly as ``bench_core.py`` builds it
  (5,000 nodes, 1,000 pods running, 10,000 measured, no pod group) with the three workload
  gates off and on, alternating (off, on, on, off, ...), each run in a fresh interpreter.
  The gates put GangScheduling's PreEnqueue and Permit in every pod's path and the pod-group
  bookkeeping in the cache and queue; with no group they must cost nothing measurable.

Both run through ``Simulation.run``, the path ``kubesched simulate`` takes (the queue, the
scheduler's pod and pod-group cycles, binding, the informer's echo), with the default
configuration for the gates (upstream's heap tie-break). Only ``Simulation.run`` is timed;
building objects and loading cache and queue are setup (``common.run_workload``). A short
untimed warm-up run of the same workload at a small size goes first in each process.

Printed for SchedulingGangs: pods bound per second (wall and CPU), gangs bound per second, the
number of group cycles, of placements evaluated (a constrained gang's cycle tries every rack)
and of per-pod algorithm runs inside them, and the checks that keep a fast wrong answer out:
every fitting gang bound whole, every too-large gang wholly unbound, every constrained gang
inside one rack, each group's ``PodGroupScheduled`` condition. The exit status is 1 when a
check fails.

``--before DIR`` runs every measurement also with the ``kubesched`` package found in DIR
(``git archive <commit> kubesched | tar -x -C DIR``), alternating with this tree's, each in
its own interpreter: the before/after figures of a change, same machine, same load.

No upstream threshold exists for a gang workload; SchedulingBasic's (270 pods/s for
v1.36.2, with an API server and etcd in the loop) is context, not a comparison.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import hashlib
import json
import os
import statistics
import gc
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    NODE_DEFAULT,
    POD_DEFAULT,
    ZONE_LABEL,
    Timer,
    WorkloadResult,
    bind_round_robin,
    build_snapshot,
    dump_profile,
    format_result,
    make_nodes,
    make_pods,
    new_simulation,
    peak_rss_mib,
    run_workload,
)

import kubesched  # noqa: E402
from kubesched.cluster.simulated import Simulation, SimulationResult  # noqa: E402
from kubesched.cluster.snapshot import ClusterSnapshot  # noqa: E402
from kubesched.framework.config import SchedulerConfig, default_config  # noqa: E402
from kubesched.framework.features import Features  # noqa: E402
from kubesched.objects.podgroup import parse_pod_group  # noqa: E402
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry  # noqa: E402
from kubesched.scheduler.podgroup_cycle import GROUP_CYCLE_LOG_SIZE  # noqa: E402

RACK_LABEL = "topology.kubernetes.io/rack"
WORKLOAD_GATES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
GANG_NAMESPACE = "gangs"
TOO_LARGE_CPU = "5"  # node-default has 4 CPUs: no node holds such a pod
WORKLOADS = ("SchedulingGangs", "SchedulingBasic_WorkloadGates")
BASIC_UPSTREAM = "SchedulingBasic: 270 pods/s (v1.36.2), 680 (main)"


@dataclasses.dataclass(frozen=True)
class GangShape:
    nodes: int = 5000
    racks: int = 50
    zones: int = 5
    gangs: int = 1000
    gang_size: int = 8
    init_pods: int = 1000
    constrained_every: int = 3  # gang i has the rack constraint when i % 3 == 0
    too_large_every: int = 10  # gang i cannot fit when i % 10 == 9

    def constrained(self, i: int) -> bool:
        return i % self.constrained_every == 0

    def too_large(self, i: int) -> bool:
        return i % self.too_large_every == self.too_large_every - 1

    def rack_of(self, node_index: int) -> int:
        return node_index * self.racks // self.nodes

    def gang_name(self, i: int) -> str:
        return f"gang-{i:04d}"

    def member_name(self, i: int, m: int) -> str:
        return f"{self.gang_name(i)}-{m}"


WARMUP = GangShape(nodes=200, racks=4, zones=2, gangs=30, init_pods=0)


# -- building -------------------------------------------------------------------------
def pod_group(shape: GangShape, i: int) -> dict[str, Any]:
    """A gang PodGroup as the API server stores it; every third one kept inside one rack."""
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": shape.gang_size}}}
    if shape.constrained(i):
        spec["schedulingConstraints"] = {"topology": [{"key": RACK_LABEL}]}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": shape.gang_name(i), "namespace": GANG_NAMESPACE, "uid": f"podgroup-uid-{i}",
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec,
    }


def gang_members(shape: GangShape, i: int) -> list[dict[str, Any]]:
    """``pod-default`` pods of gang ``i``; a too-large gang's last member asks for 5 CPUs."""
    pods = make_pods(shape.gang_size, prefix=f"{shape.gang_name(i)}-", namespace=GANG_NAMESPACE,
                     spec={"schedulingGroup": {"podGroupName": shape.gang_name(i)}})
    for m, pod in enumerate(pods):
        pod["metadata"]["name"] = shape.member_name(i, m)
        pod["metadata"]["uid"] = f"pod-uid-{GANG_NAMESPACE}-{shape.member_name(i, m)}"
    if shape.too_large(i):
        resources = pods[-1]["spec"]["containers"][0]["resources"]
        resources["requests"]["cpu"] = resources["limits"]["cpu"] = TOO_LARGE_CPU
    return pods


def build_gangs(shape: GangShape) -> Callable[[], ClusterSnapshot]:
    def build() -> ClusterSnapshot:
        per_zone = max(shape.racks // max(shape.zones, 1), 1)

        def labels(index: int) -> dict[str, str]:
            rack = shape.rack_of(index)
            return {RACK_LABEL: f"rack-{rack:02d}", ZONE_LABEL: f"zone-{rack // per_zone}"}

        nodes = make_nodes(shape.nodes, labels=labels, template=NODE_DEFAULT)
        bound = bind_round_robin(make_pods(shape.init_pods, prefix="init-pod-", namespace="namespace-1"), nodes)
        pending = [pod for i in range(shape.gangs) for pod in gang_members(shape, i)]
        snapshot = build_snapshot(nodes, bound, pending)
        snapshot.pod_groups = [parse_pod_group(pod_group(shape, i)) for i in range(shape.gangs)]
        return snapshot

    return build


def build_basic(nodes: int, init_pods: int, pods: int) -> Callable[[], ClusterSnapshot]:
    """SchedulingBasic as ``bench_core.py`` builds it."""
    def build() -> ClusterSnapshot:
        node_objs = make_nodes(nodes)
        bound = bind_round_robin(make_pods(init_pods, prefix="init-pod-", namespace="namespace-1"), node_objs)
        pending = make_pods(pods, prefix="pod-", namespace="namespace-2")
        return build_snapshot(node_objs, bound, pending)

    return build


def registry_and_config(gates_on: bool) -> tuple[Any, SchedulerConfig]:
    """The in-tree registry and default profile with the workload gates on or at v1.36's defaults (off)."""
    registry = in_tree_registry(Features.from_gates(WORKLOAD_GATES if gates_on else {}))
    return registry, default_config(registry, UPSTREAM_ONLY)


# -- checking -------------------------------------------------------------------------
@dataclasses.dataclass
class GangCheck:
    bound_whole: int = 0
    unbound_whole: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)
    group_cycles: int = 0
    cycles_logged: int = 0
    placements: int = 0
    member_runs: int = 0  # per-pod algorithm runs inside group cycles (members x placements tried)
    backoff_retries: int = 0


def check_gangs(shape: GangShape, sim: Simulation, result: SimulationResult) -> GangCheck:
    """Every fitting gang bound whole (a constrained one inside one rack), every too-large gang
    wholly unbound, each group's PodGroupScheduled condition as its outcome says; and what
    the group cycles did."""
    out = GangCheck()
    rack_of_node = {f"scheduler-perf-{i:05d}": shape.rack_of(i) for i in range(shape.nodes)}
    directory = sim.scheduler.hub.pod_groups
    for i in range(shape.gangs):
        name = shape.gang_name(i)
        nodes = [result.outcomes[f"{GANG_NAMESPACE}/{shape.member_name(i, m)}"].node for m in range(shape.gang_size)]
        placed = [n for n in nodes if n]
        condition = _scheduled_condition(directory.pod_group(GANG_NAMESPACE, name))
        if shape.too_large(i):
            if placed:
                out.problems.append(f"{name} is too large to fit but {len(placed)} of its pods were bound")
            else:
                out.unbound_whole += 1
            if condition == "True":
                out.problems.append(f"{name} is too large to fit but its PodGroupScheduled condition is True")
            continue
        if len(placed) != shape.gang_size:
            out.problems.append(f"{name} fits but {len(placed)} of its {shape.gang_size} pods were bound")
            continue
        racks = {rack_of_node[n] for n in placed}
        if shape.constrained(i) and len(racks) != 1:
            out.problems.append(f"{name} is kept inside one rack but was bound across racks {sorted(racks)}")
            continue
        if condition != "True":
            out.problems.append(f"{name} was bound whole but its PodGroupScheduled condition is {condition}")
        out.bound_whole += 1
    records = list(sim.scheduler.group_cycles)
    out.cycles_logged = len(records)
    out.group_cycles = sum(1 for r in records if r.group.startswith(GANG_NAMESPACE + "/"))
    out.placements = sum(max(len(r.placements), 1) for r in records)
    out.member_runs = sum(len(r.order) * max(len(r.placements), 1) for r in records)
    out.backoff_retries = sum(result.group_backoff_retries.values())
    return out


def _scheduled_condition(group: Any) -> str:
    for condition in getattr(group, "conditions", ()) or ():
        if condition.type == "PodGroupScheduled":
            return str(condition.status)
    return "(none)"


def bindings_digest(result: SimulationResult) -> str:
    """A digest of every binding in order, to tell runs (trees, gates) that decided alike."""
    text = "\n".join(f"{pod} {node}" for pod, node in result.placements)
    return f"{len(result.placements)} bindings, sha1 {hashlib.sha1(text.encode()).hexdigest()[:12]}"


# -- one measured run ------------------------------------------------------------------
def run_gangs(shape: GangShape, args: argparse.Namespace, profiler: Any = None, warmup: bool = True) -> WorkloadResult:
    registry, config = registry_and_config(True)
    if warmup:
        run_workload("warm-up", build_gangs(WARMUP), config=config, registry=registry, seed=args.seed,
                     tie_break=args.tie_break)
    checks: list[GangCheck] = []

    digests: list[str] = []

    def inspect(sim: Simulation, result: SimulationResult) -> None:
        checks.append(check_gangs(shape, sim, result))
        digests.append(bindings_digest(result))

    name = (f"SchedulingGangs ({shape.nodes} nodes in {shape.racks} racks, {shape.gangs} gangs of {shape.gang_size}, "
            "workload gates on)")
    result = run_workload(name, build_gangs(shape), config=config, registry=registry, seed=args.seed,
                          tie_break=args.tie_break, profiler=profiler, on_simulation=inspect)
    check = checks[0]
    gangs_fit = sum(1 for i in range(shape.gangs) if not shape.too_large(i))
    constrained = sum(1 for i in range(shape.gangs) if shape.constrained(i))
    fitting_pods = gangs_fit * shape.gang_size
    extra = result.extra
    extra["gangs"] = (f"{shape.gangs} ({constrained} inside one rack; {shape.gangs - gangs_fit} too large: "
                      f"last member asks {TOO_LARGE_CPU} CPUs); {fitting_pods} pods can be bound")
    extra["gangs/s"] = (f"{check.bound_whole / result.run_seconds:,.1f} gangs bound per second "
                        f"({check.bound_whole / result.run_cpu_seconds:,.1f} per CPU second)")
    extra["group cycles"] = (f"{check.group_cycles} ({check.group_cycles / result.run_seconds:,.1f}/s), "
                             f"{check.placements} placements evaluated, {check.member_runs} per-pod algorithm runs "
                             f"inside them, {check.backoff_retries} retries from backoffQ")
    if check.cycles_logged >= GROUP_CYCLE_LOG_SIZE:
        extra["group cycles"] += " (the scheduler keeps the last cycles only: counts are a floor)"
    extra["check"] = (f"{check.bound_whole}/{gangs_fit} fitting gangs bound whole, "
                      f"{check.unbound_whole}/{shape.gangs - gangs_fit} too-large gangs wholly unbound"
                      + ("" if not check.problems else f"; {len(check.problems)} PROBLEMS, first: "
                         + "; ".join(check.problems[:3])))
    extra["bindings"] = digests[0]
    extra["_gangs_bound"] = check.bound_whole
    result.unschedulable = len(check.problems) + (fitting_pods - result.scheduled)
    result.extra["_failed"] = bool(check.problems) or result.scheduled != fitting_pods
    return result


def run_basic(gates_on: bool, args: argparse.Namespace, profiler: Any = None, warmup: bool = True) -> WorkloadResult:
    registry, config = registry_and_config(gates_on)
    nodes, init, pods = args.nodes or 5000, args.init_pods if args.init_pods is not None else 1000, args.pods or 10000
    if warmup:
        run_workload("warm-up", build_basic(200, 20, 400), config=config, registry=registry, seed=args.seed,
                     tie_break=args.tie_break)
    label = "workload gates on, no pod group" if gates_on else "workload gates off"
    digests: list[str] = []
    result = run_workload(f"SchedulingBasic ({label})", build_basic(nodes, init, pods), config=config,
                          registry=registry, seed=args.seed, tie_break=args.tie_break, profiler=profiler,
                          on_simulation=lambda sim, res: digests.append(bindings_digest(res)))
    result.extra["bindings"] = digests[0]
    result.extra["_failed"] = bool(result.unschedulable)
    return result


def run_basic_interleaved(args: argparse.Namespace) -> list[WorkloadResult]:
    """SchedulingBasic with the gates off and on, both loaded in this process and scheduled in
    alternating chunks of ``--chunk`` attempts (off, on, on, off, ...), each side's wall and CPU
    time summed over its chunks: the machine's load, which drifts by the second, hits both alike."""
    nodes, init, pods = args.nodes or 5000, args.init_pods if args.init_pods is not None else 1000, args.pods or 10000
    sides: list[tuple[str, Simulation, Timer]] = []
    build_seconds = load_seconds = 0.0
    for gates_on in (False, True):
        registry, config = registry_and_config(gates_on)
        if not args.no_warmup:
            run_workload("warm-up", build_basic(200, 20, 400), config=config, registry=registry, seed=args.seed,
                         tie_break=args.tie_break)
        with Timer() as built:
            snapshot = build_basic(nodes, init, pods)()
        with Timer() as loaded:
            sim = new_simulation(snapshot, config, args.tie_break, args.seed, registry)
        del snapshot
        build_seconds += built.seconds
        load_seconds += loaded.seconds
        label = "workload gates on, no pod group" if gates_on else "workload gates off"
        sides.append((label, sim, Timer()))
    gc.collect()
    results: dict[str, SimulationResult] = {}
    settled: set[str] = set()
    round_ = 0
    while len(settled) < len(sides):
        for label, sim, timer in (sides if round_ % 2 == 0 else sides[::-1]):
            if label in settled:
                continue
            before = sim.attempts
            started, cpu_started = time.perf_counter(), time.process_time()
            results[label] = sim.run(max_attempts=before + args.chunk)
            timer.seconds += time.perf_counter() - started
            timer.cpu_seconds += time.process_time() - cpu_started
            if sim.attempts < before + args.chunk:
                settled.add(label)
        round_ += 1
    out = []
    for label, sim, timer in sides:
        result = results[label]
        scheduled = sum(1 for o in result.outcomes.values() if o.node)
        r = WorkloadResult(f"SchedulingBasic ({label}; interleaved in chunks of {args.chunk} attempts)", nodes, init,
                           pods, scheduled, pods - scheduled, result.attempts, build_seconds / 2, load_seconds / 2,
                           timer.seconds, timer.cpu_seconds, peak_rss_mib())
        r.extra["bindings"] = bindings_digest(result)
        r.extra["_failed"] = bool(r.unschedulable)
        out.append(r)
    return out


def measure(variant: str, args: argparse.Namespace, profiler: Any = None) -> list[WorkloadResult]:
    warm = not args.no_warmup
    if variant == "gangs":
        return [run_gangs(shape_from(args), args, profiler, warm)]
    if variant == "basic-interleaved":
        return run_basic_interleaved(args)
    return [run_basic(variant == "basic-on", args, profiler, warm)]


def shape_from(args: argparse.Namespace) -> GangShape:
    base = GangShape()
    return dataclasses.replace(
        base,
        nodes=args.nodes or base.nodes,
        racks=args.racks or base.racks,
        gangs=args.gangs or base.gangs,
        init_pods=args.init_pods if args.init_pods is not None else base.init_pods,
    )


# -- runs in fresh interpreters ----------------------------------------------------------
def run_child(variant: str, args: argparse.Namespace, tree: str | None) -> list[WorkloadResult]:
    """One measurement in a fresh interpreter (its own peak RSS; ``tree``: another kubesched)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, __file__, "--child", variant, "--child-result", out.name,
                   "--seed", str(args.seed), "--tie-break", args.tie_break, "--chunk", str(args.chunk)]
        for flag in ("nodes", "racks", "gangs", "init_pods", "pods"):
            value = getattr(args, flag)
            if value is not None:
                command += [f"--{flag.replace('_', '-')}", str(value)]
        if args.no_warmup:
            command.append("--no-warmup")
        env = dict(os.environ)
        if tree is not None:
            env["PYTHONPATH"] = tree + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        subprocess.run(command, check=True, env=env)
        return [WorkloadResult(**r) for r in json.loads(Path(out.name).read_text())]


def print_result(result: WorkloadResult, tree_label: str) -> None:
    shown = dataclasses.replace(result, extra={k: v for k, v in result.extra.items() if not k.startswith("_")})
    if tree_label:
        shown.name += f" [{tree_label}]"
    print(format_result(shown), flush=True)


def summary(label: str, results: list[WorkloadResult]) -> str:
    wall = [r.pods_per_second for r in results]
    cpu = [r.pods_per_cpu_second for r in results]
    spread = f" (runs {', '.join(f'{c:,.0f}' for c in cpu)})" if len(results) > 1 else ""
    gangs = ""
    if all("_gangs_bound" in r.extra for r in results):
        gangs = (f"; {statistics.median(r.extra['_gangs_bound'] / r.run_seconds for r in results):,.1f} gangs/s, "
                 f"{statistics.median(r.extra['_gangs_bound'] / r.run_cpu_seconds for r in results):,.1f} per CPU second")
    return (f"{label}: median {statistics.median(wall):,.0f} pods/s, {statistics.median(cpu):,.0f} pods per CPU "
            f"second{spread}{gangs}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default="all", choices=[*WORKLOADS, "all"])
    parser.add_argument("--nodes", type=int, help="nodes (default 5,000)")
    parser.add_argument("--racks", type=int, help="racks (SchedulingGangs; default 50)")
    parser.add_argument("--gangs", type=int, help="gangs of 8 (SchedulingGangs; default 1,000)")
    parser.add_argument("--init-pods", type=int, help="pods already running (default 1,000)")
    parser.add_argument("--pods", type=int, help="measured pods (SchedulingBasic_WorkloadGates; default 10,000)")
    parser.add_argument("--repeat", type=int, default=1, help="measured runs of each side (default 1)")
    parser.add_argument("--before", metavar="DIR", help="also run each measurement with the kubesched package in DIR")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tie-break", choices=["heap", "random", "name"], default="heap")
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed small run before each measurement")
    parser.add_argument("--in-process", action="store_true", help="every run in this process (no --before)")
    parser.add_argument("--profile", metavar="FILE", help="cProfile one in-process run into FILE (slows it down)")
    parser.add_argument("--separate", action="store_true",
                        help="SchedulingBasic_WorkloadGates: each side in its own interpreter, alternating, instead "
                             "of both in one process in alternating chunks (always so with --before)")
    parser.add_argument("--chunk", type=int, default=500,
                        help="attempts per chunk when the two SchedulingBasic sides alternate in one process")
    parser.add_argument("--child", choices=["gangs", "basic-on", "basic-off", "basic-interleaved"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--child-result", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        results = measure(args.child, args)
        Path(args.child_result).write_text(json.dumps([dataclasses.asdict(r) for r in results]))
        return 0
    print(f"kubesched from {Path(kubesched.__file__).parent}" + (f"; before: {args.before}" if args.before else ""),
          flush=True)
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    if args.profile:
        variant = "gangs" if names[0] == "SchedulingGangs" else "basic-on"
        profiler = cProfile.Profile()
        [result] = measure(variant, args, profiler)
        dump_profile(profiler, args.profile, "tottime")
        print_result(result, "")
        return 1 if result.extra.get("_failed") else 0
    trees: list[tuple[str, str | None]] = [("", None)]
    if args.before:
        trees = [("after", None), ("before", str(Path(args.before).resolve()))]
    failed = False
    for name in names:
        variants = ["gangs"] if name == "SchedulingGangs" else ["basic-off", "basic-on"]
        interleaved = name == "SchedulingBasic_WorkloadGates" and not args.separate and not args.before
        # Every (variant, tree) side once per round; the order turns each round (A B, B A, ...),
        # so that a drifting load hits every side alike.
        sides = [(v, t) for v in variants for t in trees]
        runs: dict[tuple[str, str], list[WorkloadResult]] = {(v, label): [] for v, (label, _) in sides}
        for round_ in range(args.repeat):
            measured: list[tuple[str, str, WorkloadResult]] = []
            if interleaved:  # both sides in one process, in alternating chunks
                found = measure("basic-interleaved", args) if args.in_process else run_child("basic-interleaved", args, None)
                measured = [(v, "", r) for v, r in zip(variants, found)]
            else:
                for variant, (label, tree) in (sides if round_ % 2 == 0 else list(reversed(sides))):
                    [result] = measure(variant, args) if args.in_process and tree is None else \
                        run_child(variant, args, tree)
                    measured.append((variant, label, result))
            for variant, label, result in measured:
                print_result(result, label)
                failed = failed or bool(result.extra.get("_failed"))
                runs[(variant, label)].append(result)
        how = (f"both sides in one process, alternating chunks of {args.chunk} attempts" if interleaved
               else "alternating, each in its own interpreter" if not args.in_process else "alternating, in this process")
        print(f"{name}, {args.repeat} run(s) of each side ({how}):", flush=True)
        for (variant, label), results in runs.items():
            side = {"gangs": "gates on", "basic-off": "gates off", "basic-on": "gates on, no groups"}[variant]
            print("  " + summary(f"{side}{' [' + label + ']' if label else ''}", results), flush=True)
        digests = {r.extra.get("bindings") for results in runs.values() for r in results}
        print(f"  bindings: {'the same in every run' if len(digests) == 1 else 'DIFFER between runs'} "
              f"({'; '.join(sorted(str(d) for d in digests))})", flush=True)
        if name == "SchedulingBasic_WorkloadGates":
            for label, _ in trees:
                off, on = runs[("basic-off", label)], runs[("basic-on", label)]
                ratio_cpu = (statistics.median(r.pods_per_cpu_second for r in on)
                             / statistics.median(r.pods_per_cpu_second for r in off))
                ratio_wall = (statistics.median(r.pods_per_second for r in on)
                              / statistics.median(r.pods_per_second for r in off))
                pairs = ", ".join(f"{b.pods_per_cpu_second / a.pods_per_cpu_second:.3f}" for a, b in zip(off, on))
                print(f"  gates on / gates off{' [' + label + ']' if label else ''}: {ratio_cpu:.3f} by CPU time, "
                      f"{ratio_wall:.3f} by wall time (medians; above 1 is faster with the gates on; "
                      f"by CPU time run by run: {pairs})", flush=True)
            print(f"  upstream threshold (context only, an API server and etcd in the loop): {BASIC_UPSTREAM}",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
