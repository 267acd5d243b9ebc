"""The queue under load: scheduling while many pods wait, mirroring upstream scheduler_perf.

    python benchmarks/bench_queue.py [--workload NAME|all] [--pods N] [--repeat N]
                                     [--no-baseline] [--profile FILE] [--json FILE]

Upstream's queue-stressing workloads (``test/integration/scheduler_perf/misc/performance-config.yaml``
and its templates), at their performance sizes:

* **Unschedulable** (``5kNodes/100Init/10kPods``, threshold 590): 5,000 ``node-default``
  nodes, 100 ``pod-default`` pods running; while 10,000 ``pod-default`` pods are measured,
  a ``pod-high-priority-large-cpu`` pod (cpu 9 on 4-cpu nodes: never fits) is created
  every 200 ms (``churn``, mode ``create``).
* **LargeBacklog** (ours, from the issue): Unschedulable with 2,000 such pods already
  waiting when the measured pods arrive (tried once and filed as unschedulable before
  the measurement starts).
* **SchedulingWhileGated** (``1Node_10000GatedPods``, threshold 910): one
  ``node-with-name`` node, 10,000 ``gated-pod`` pods that stay gated, 20,000 ``light-pod``
  pods running and deleted at 50 per second (``deletePods``) while 20,000 ``light-pod``
  pods are measured.
* **SchedulingGatedPodsWithPodAffinityImpactForThroughput** (``1Node_10000GatedPods``):
  one ``node-with-name`` node, 10,000 ``gated-pod-with-pod-affinity`` pods (gated, label
  ``app: scheduler-perf`` and a required pod affinity to it over the hostname), then
  20,000 measured ``pod-with-label`` pods (``app: scheduler-perf``): every binding is an
  AssignedPodAdd event that matches every gated pod's affinity term. Its threshold is not
  in the version of the file the code index holds; none is printed.
* **SchedulingWithMixedChurn** (``5000Nodes_10000Pods``, threshold 710): 5,000 nodes;
  every second a ``churn/node-default`` node (``pods: 0``), a ``pod-high-priority-large-cpu``
  pod and a ``churn/service-default`` Service are created, and deleted the next second
  (``churn``, mode ``recreate``, ``number: 1``), while 10,000 ``pod-default`` pods are measured.

Each workload also runs with nothing waiting (the same cluster and measured pods, without
the waiting pods or the churn that makes them), unless ``--no-baseline``: the issue's target
is at least 1,000 pods/s and at least half of that rate.

How this differs from upstream, by necessity: there is no API server; objects are created,
updated and deleted through the scheduler's event handlers (``Scheduler.on_pod_add``,
``on_pod_delete``, ``on_node_add``, ...) and the Service through its object store, from
the simulation's progress callback at the given rates in wall time (``common.RateDriver``);
the pods to delete start bound instead of being scheduled first; all measured pods are
pending at once instead of created at a rate; kubesched has no preemption yet, so the
high-priority pods do not try it (upstream's do, which is part of its cost). Upstream's
thresholds are floors its CI enforces with an API server and etcd in the loop: printed as
context, never as a ratio.
"""

from __future__ import annotations

import cProfile
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    NODE_DEFAULT,
    POD_DEFAULT,
    Progress,
    RateDriver,
    WorkloadResult,
    benchmark_parser,
    bind_round_robin,
    build_snapshot,
    deep_merge,
    make_node,
    make_nodes,
    make_pods,
    report_run,
    run_workload,
    write_results_json,
)

from kubesched.cluster.simulated import Simulation  # noqa: E402
from kubesched.cluster.snapshot import ClusterSnapshot  # noqa: E402
from kubesched.objects.node import parse_node  # noqa: E402
from kubesched.objects.pod import parse_pod  # noqa: E402

# templates/pod-high-priority-large-cpu.yaml
POD_HIGH_PRIORITY_LARGE_CPU: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-h-"},
    "spec": {"priority": 10, "containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause",
                                             "ports": [{"containerPort": 80}],
                                             "resources": {"requests": {"cpu": "9", "memory": "500Mi"}}}]},
}
# templates/light-pod.yaml, templates/gated-pod.yaml
LIGHT_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "light-pod-"},
    "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.2", "name": "pause"}],
             "terminationGracePeriodSeconds": 0},
}
GATED_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "gated-pod-"},
    "spec": {"schedulingGates": [{"name": "test.k8s.io/hold"}],
             "containers": [{"image": "registry.k8s.io/pause:3.10", "name": "pause"}]},
}
# templates/gated-pod-with-pod-affinity.yaml, templates/pod-with-label.yaml
_PERF_LABEL = {"app": "scheduler-perf"}
GATED_POD_WITH_POD_AFFINITY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-", "labels": _PERF_LABEL},
    "spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                 {"labelSelector": {"matchLabels": _PERF_LABEL}, "topologyKey": "kubernetes.io/hostname"}]}},
             "schedulingGates": [{"name": "scheduling-gate-1"}],
             "containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause"}]},
}
POD_WITH_LABEL: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-", "labels": _PERF_LABEL},
    "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause"}]},
}
# templates/node-with-name.yaml (capacity for every pod of the workload)
NODE_WITH_NAME = deep_merge(NODE_DEFAULT, {"status": {"capacity": {"pods": "90000", "cpu": "4", "memory": "32Gi"}}})
# templates/churn/node-default.yaml, templates/churn/service-default.yaml
CHURN_NODE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "node-churn-"},
    "status": {"capacity": {"pods": "0"}, "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"},
}
CHURN_SERVICE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "service-churn-"},
    "spec": {"selector": {"app": "foo"}, "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}]},
}

MEASURED_NS = "measured"
BACKLOG = 2000


@dataclass(frozen=True)
class QueueWorkload:
    pods: int  # measured pods at upstream's size
    upstream: int | None  # threshold in performance-config.yaml (pods/s), if the file we read has one
    target: int  # kubesched's, on the 2-core development machine
    build: Callable[[int, bool], Callable[[], ClusterSnapshot]]  # (measured pods, waiting) -> builder
    driver: Callable[[bool], Callable[[Simulation], Progress] | None]  # waiting -> driver factory
    backlog: int = 0  # pending pods to try once, untimed, before measuring (they come first: priority 10)


def _measured(pods: int, template: dict[str, Any] = POD_DEFAULT) -> list[dict[str, Any]]:
    return make_pods(pods, prefix="pod-", namespace=MEASURED_NS, template=template)


# -- Unschedulable, LargeBacklog --------------------------------------------------
def _build_unschedulable(backlog: int) -> Callable[[int, bool], Callable[[], ClusterSnapshot]]:
    def build(pods: int, waiting: bool) -> Callable[[], ClusterSnapshot]:
        def snapshot() -> ClusterSnapshot:
            nodes = make_nodes(5000)
            init = bind_round_robin(make_pods(100, prefix="init-", namespace="namespace-1"), nodes)
            large = make_pods(backlog if waiting else 0, prefix="large-", namespace="namespace-3",
                              template=POD_HIGH_PRIORITY_LARGE_CPU)
            return build_snapshot(nodes, init, large + _measured(pods))
        return snapshot
    return build


def _create_large_pods(waiting: bool) -> Callable[[Simulation], Progress] | None:
    if not waiting:
        return None

    def factory(sim: Simulation) -> Progress:
        def create(i: int) -> None:
            raw = make_pods(1, prefix="churn-", namespace="namespace-3", template=POD_HIGH_PRIORITY_LARGE_CPU, start=i)[0]
            sim.scheduler.on_pod_add(parse_pod(raw))
        return RateDriver(5.0, create)  # intervalMilliseconds: 200
    return factory


# -- SchedulingWhileGated, SchedulingGatedPodsWithPodAffinityImpactForThroughput ---------
def _build_while_gated(pods: int, waiting: bool) -> Callable[[], ClusterSnapshot]:
    def snapshot() -> ClusterSnapshot:
        nodes = make_nodes(1, template=NODE_WITH_NAME)
        deleting = bind_round_robin(make_pods(20000, prefix="light-", namespace="namespace-3", template=LIGHT_POD), nodes)
        gated = make_pods(10000 if waiting else 0, prefix="gated-", namespace="namespace-2", template=GATED_POD)
        return build_snapshot(nodes, deleting, gated + _measured(pods, LIGHT_POD))
    return snapshot


def _delete_bound_pods(waiting: bool) -> Callable[[Simulation], Progress] | None:
    def factory(sim: Simulation) -> Progress:
        bound = list(sim.snapshot.bound_pods)
        return RateDriver(50.0, lambda i: sim.scheduler.on_pod_delete(bound[i]), len(bound))  # deletePodsPerSecond
    return factory  # the deletions are the workload's events, waiting pods or not


def _build_gated_affinity(pods: int, waiting: bool) -> Callable[[], ClusterSnapshot]:
    def snapshot() -> ClusterSnapshot:
        nodes = make_nodes(1, template=NODE_WITH_NAME)
        gated = make_pods(10000 if waiting else 0, prefix="gated-", namespace="namespace-1",
                          template=GATED_POD_WITH_POD_AFFINITY)
        return build_snapshot(nodes, [], gated + _measured(pods, POD_WITH_LABEL))
    return snapshot


# -- SchedulingWithMixedChurn ------------------------------------------------------
def _build_mixed_churn(pods: int, waiting: bool) -> Callable[[], ClusterSnapshot]:
    def snapshot() -> ClusterSnapshot:
        return build_snapshot(make_nodes(5000), [], _measured(pods))
    return snapshot


class MixedChurn:
    """``churn`` mode ``recreate``, ``number: 1``: each tick deletes what the last one made,
    or makes one node, one high-priority large pod and one Service."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.live: list[Any] = []
        self.services = sim.scheduler.hub.object_stores.find("v1", "Service")

    def tick(self, i: int) -> None:
        scheduler = self.sim.scheduler
        if self.live:
            node, pod, service = self.live
            scheduler.on_node_delete(node)
            scheduler.on_pod_delete(pod)
            if self.services is not None:
                self.services.delete(service)
            self.live = []
            return
        node = parse_node(make_node(f"node-churn-{i:05d}", template=CHURN_NODE))
        pod = parse_pod(make_pods(1, prefix="churn-", namespace="namespace-3", template=POD_HIGH_PRIORITY_LARGE_CPU,
                                  start=i)[0])
        service = deep_merge(CHURN_SERVICE, {"metadata": {"name": f"service-churn-{i}", "namespace": "namespace-3"}})
        scheduler.on_node_add(node)
        scheduler.on_pod_add(pod)
        if self.services is not None:
            self.services.upsert(service)
        self.live = [node, pod, service]


def _mixed_churn(waiting: bool) -> Callable[[Simulation], Progress] | None:
    if not waiting:
        return None
    return lambda sim: RateDriver(1.0, MixedChurn(sim).tick)  # intervalMilliseconds: 1000


WORKLOADS: dict[str, QueueWorkload] = {
    "Unschedulable": QueueWorkload(10000, 590, 1000, _build_unschedulable(0), _create_large_pods),
    "LargeBacklog": QueueWorkload(10000, None, 1000, _build_unschedulable(BACKLOG), _create_large_pods, BACKLOG),
    "SchedulingWhileGated": QueueWorkload(20000, 910, 1000, _build_while_gated, _delete_bound_pods),
    "SchedulingGatedPodsWithPodAffinityImpactForThroughput": QueueWorkload(
        20000, None, 1000, _build_gated_affinity, lambda waiting: None),
    "SchedulingWithMixedChurn": QueueWorkload(10000, 710, 1000, _build_mixed_churn, _mixed_churn),
}


def _try_backlog(sim: Simulation, count: int) -> None:
    """Attempt the backlog pods once (they pop first), so they wait as unschedulable pods."""
    sim.run(max_attempts=count)
    waiting = sim.scheduler.queue.counts()
    assert waiting["unschedulablePods"] >= count, waiting


def run(name: str, pods: int, waiting: bool, args: Any, profiler: Any) -> WorkloadResult:
    """One measured run (``common.run_workload``), with or without the waiting pods."""
    spec = WORKLOADS[name]
    factory = spec.driver(waiting)
    drivers: list[Progress] = []

    def driver(sim: Simulation) -> Progress:
        made: Progress = factory(sim) if factory is not None else (lambda scheduled, total: None)
        drivers.append(made)
        return made

    queue_at_end: dict[str, int] = {}
    result = run_workload(
        name if waiting else f"{name} (nothing waiting)", spec.build(pods, waiting), tie_break=args.tie_break,
        seed=args.seed, profiler=profiler, driver=driver, measured=lambda key: key.startswith(MEASURED_NS + "/"),
        on_simulation=lambda sim, _: queue_at_end.update(sim.scheduler.queue.counts()),
        prepare=(lambda sim: _try_backlog(sim, spec.backlog)) if waiting and spec.backlog else None,
    )
    done = getattr(drivers[0], "done", None) if drivers else None
    if done is not None:
        result.extra["driven while measuring"] = f"{done} creations, deletions or churn ticks"
    result.extra["queue at the end"] = queue_at_end
    return result


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__, list(WORKLOADS))
    parser.add_argument("--no-baseline", action="store_true", help="skip the runs with nothing waiting")
    args = parser.parse_args(argv)
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    results: list[WorkloadResult] = []
    failed = False
    for name in names:
        spec = WORKLOADS[name]
        pods = args.pods or spec.pods
        at_size = pods == spec.pods
        rates: dict[bool, list[float]] = {True: [], False: []}
        for run_index in range(args.repeat):
            for waiting in ([True] if args.no_baseline else [False, True]):
                profiler = cProfile.Profile() if args.profile and waiting else None
                result = run(name, pods, waiting, args, profiler)
                rates[waiting].append(result.pods_per_second)
                if waiting and rates[False]:
                    base = statistics.median(rates[False])
                    share = result.pods_per_second / base if base else 0.0
                    result.extra["vs nothing waiting"] = (
                        f"{share:.0%} of {base:,.0f} pods/s (target >= 50%: {'met' if share >= 0.5 else 'NOT MET'})")
                upstream = f"{spec.upstream} pods/s" if spec.upstream is not None and waiting else None
                report_run(result, args, profiler, f"{args.profile}.{name}.{run_index}", at_size and waiting,
                           upstream, spec.target, "tottime")
                failed = failed or result.scheduled < result.measured_pods
                results.append(result)
        if args.repeat > 1:
            for waiting, values in rates.items():
                if values:
                    which = "" if waiting else " (nothing waiting)"
                    print(f"{name}{which}: median of {len(values)} runs {statistics.median(values):,.0f} pods/s", flush=True)
    if args.json:
        write_results_json(args.json, results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
