"""The queue under load: scheduling while many pods wait, mirroring upstream scheduler_perf.

    python benchmarks/bench_queue.py [--workload Unschedulable|LargeBacklog|SchedulingWhileGated|all]
                                     [--pods N] [--repeat N]

* **Unschedulable** (``misc/performance-config.yaml``, ``5kNodes/100Init/10kPods``): 5,000
  ``node-default`` nodes, 100 ``pod-default`` pods running; while 10,000 ``pod-default``
  pods are measured, a ``pod-high-priority-large-cpu`` pod (cpu 9 on 4-cpu nodes: never
  fits) is created every 200 ms.
* **LargeBacklog** (ours, from the issue): Unschedulable with 2,000 such pods already
  waiting when the measured pods arrive.
* **SchedulingWhileGated** (``misc/performance-config.yaml``, ``1Node_10000GatedPods``):
  one ``node-with-name`` node (90,000 pods), 10,000 ``gated-pod`` pods that stay gated,
  20,000 ``light-pod`` pods scheduled and then deleted at 50 per second while 20,000
  ``light-pod`` pods are measured.

How this differs from upstream, by necessity: there is no API server; pods are created
and deleted through the scheduler's event handlers (``Scheduler.on_pod_add`` /
``on_pod_delete``) from the simulation's progress callback, at the given rates in wall
time; the 20,000 pods to delete start bound instead of being scheduled first; kubesched
has no preemption yet, so the unschedulable pods do not try it (upstream's do, which is
part of its cost). Upstream's thresholds are floors measured with an API server and etcd
in the loop: printed as context, not as a comparison.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    NODE_DEFAULT,
    POD_DEFAULT,
    Timer,
    bind_round_robin,
    build_snapshot,
    current_rss_mib,
    deep_merge,
    make_nodes,
    make_pods,
    new_simulation,
    peak_rss_mib,
)

from kubesched.objects.pod import parse_pod  # noqa: E402

# templates/pod-high-priority-large-cpu.yaml
POD_HIGH_PRIORITY_LARGE_CPU: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-h-"},
    "spec": {"priority": 10, "containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause",
                                             "ports": [{"containerPort": 80}],
                                             "resources": {"requests": {"cpu": "9", "memory": "500Mi"}}}]},
}
# templates/light-pod.yaml and templates/gated-pod.yaml
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
# templates/node-with-name.yaml
NODE_WITH_NAME = deep_merge(NODE_DEFAULT, {"status": {"capacity": {"pods": "90000", "cpu": "4", "memory": "32Gi"}}})

# workload -> (measured pods, upstream threshold (v1.36 performance-config), kubesched target)
WORKLOADS: dict[str, tuple[int, int | None, int]] = {
    "Unschedulable": (10000, 590, 1000),
    "LargeBacklog": (10000, None, 1000),
    "SchedulingWhileGated": (20000, 910, 1000),
}


class Driver:
    """Creates or deletes pods at a wall-clock rate while the simulation schedules."""

    def __init__(self, rate: float, act: Callable[[int], None], limit: int) -> None:
        self.rate, self.act, self.limit = rate, act, limit
        self.done = 0
        self.start = 0.0

    def __call__(self, scheduled: int, total: int) -> None:
        if not self.start:
            self.start = time.perf_counter()
        due = min(self.limit, int((time.perf_counter() - self.start) * self.rate))
        while self.done < due:
            self.act(self.done)
            self.done += 1


def run(name: str, pods: int) -> dict[str, Any]:
    with Timer() as build:
        if name == "SchedulingWhileGated":
            nodes = make_nodes(1, template=NODE_WITH_NAME)
            deleting = bind_round_robin(make_pods(20000, prefix="light-", namespace="namespace-3", template=LIGHT_POD), nodes)
            gated = make_pods(10000, prefix="gated-", namespace="namespace-2", template=GATED_POD)
            measured = make_pods(pods, prefix="pod-", namespace="namespace-4", template=LIGHT_POD)
            snapshot = build_snapshot(nodes, deleting, gated + measured)
        else:
            nodes = make_nodes(5000)
            init = bind_round_robin(make_pods(100, prefix="init-", namespace="namespace-1"), nodes)
            backlog = 2000 if name == "LargeBacklog" else 0
            waiting = make_pods(backlog, prefix="large-", namespace="namespace-3", template=POD_HIGH_PRIORITY_LARGE_CPU)
            measured = make_pods(pods, prefix="pod-", namespace="namespace-2", template=POD_DEFAULT)
            snapshot = build_snapshot(nodes, init, waiting + measured)
    with Timer() as load:
        sim = new_simulation(snapshot, None, "random", 0)
    scheduler = sim.scheduler
    if name == "SchedulingWhileGated":
        bound = list(snapshot.bound_pods)
        driver = Driver(50.0, lambda i: scheduler.on_pod_delete(bound[i]), len(bound))
    else:
        def create(i: int) -> None:
            raw = make_pods(1, prefix="churn-", namespace="namespace-3", template=POD_HIGH_PRIORITY_LARGE_CPU, start=i)[0]
            scheduler.on_pod_add(parse_pod(raw))

        driver = Driver(5.0, create, 1 << 30)
    rss_loaded = current_rss_mib()
    with Timer() as timed:
        result = sim.run(progress=driver)
    measured_keys = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in measured}
    scheduled = sum(1 for key in measured_keys if (o := result.outcomes.get(key)) is not None and o.node)
    return {
        "name": name, "measured": pods, "scheduled": scheduled, "seconds": timed.seconds, "cpu": timed.cpu_seconds,
        "attempts": result.attempts, "driven": driver.done, "build": build.seconds, "load": load.seconds,
        "rss_loaded": rss_loaded, "peak_rss": peak_rss_mib(),
        "waiting_at_end": scheduler.queue.counts(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", choices=[*WORKLOADS, "all"], default="all")
    parser.add_argument("--pods", type=int, default=None, help="measured pods (default: upstream's count)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    failed = False
    for name in names:
        pods_default, upstream, target = WORKLOADS[name]
        pods = args.pods or pods_default
        for _ in range(args.repeat):
            r = run(name, pods)
            rate = r["scheduled"] / r["seconds"] if r["seconds"] else 0.0
            print(f"{name}: {r['measured']} measured pods, scheduled {r['scheduled']} in {r['attempts']} attempts "
                  f"({r['driven']} pods created or deleted while measuring)")
            print(f"  throughput: {rate:,.0f} pods/s (measured pods only; run {r['seconds']:.2f} s wall, "
                  f"{r['cpu']:.2f} s CPU)")
            print(f"  setup: build {r['build']:.2f} s, load {r['load']:.2f} s (not measured); "
                  f"peak RSS {r['peak_rss']:.0f} MiB; queue at the end: {r['waiting_at_end']}")
            if upstream is not None:
                print(f"  upstream threshold (v1.36, with API server and etcd; context only): {upstream} pods/s")
            if pods == pods_default:
                print(f"  kubesched target: >= {target} pods/s: {'met' if rate >= target else 'NOT MET'}")
            failed = failed or r["scheduled"] < r["measured"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
