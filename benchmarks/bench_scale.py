"""The core at scale and under change: varied pod shapes, node status churn, 50,000 and
100,000 nodes.

    python benchmarks/bench_scale.py [--workload NAME|all] [--nodes N] [--init-pods N] [--pods N]
                                     [--repeat N] [--profile FILE] [--json FILE]

None of these is an upstream scheduler_perf workload; they are the issue's, built from
upstream's templates (``node-default``, ``pod-default``) so that they read as variations
of SchedulingBasic (``misc/performance-config.yaml``, ``5000Nodes_10000Pods``, threshold
680 pods/s with an API server and etcd in the loop):

* **VariedShapes**: 5,000 nodes, 5,000 ``pod-default`` pods bound, 10,000 measured pods
  in 50 request shapes (shape ``k = i mod 50``: cpu ``100m + 10m*k``, memory
  ``500Mi + 10Mi*k``, requests = limits): per-shape caches must not fall off a cliff.
* **NodeChurn**: 50,000 nodes, 1,000 pods bound, 10,000 measured ``pod-default`` pods;
  before each scheduling attempt one node's status is updated through
  ``Scheduler.on_node_update`` with only heartbeat-like fields changed (the Ready
  condition's ``lastHeartbeatTime``, ``resourceVersion``), node after node, as kubelets
  do. The updated node objects are parsed before the run (an informer's decoding is not
  the scheduler's cost); handling the updates is inside the timed run.
* **SchedulingBasic50k**, **SchedulingBasic100k**: SchedulingBasic's pods (1,000 bound,
  10,000 measured) on 50,000 and 100,000 nodes.

The issue's targets on the 2-core development machine: at least 2,000 pods/s each.
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
    WorkloadResult,
    benchmark_parser,
    bind_round_robin,
    build_snapshot,
    deep_merge,
    make_nodes,
    make_pods,
    report_run,
    run_workload,
    write_results_json,
)

from kubesched.cluster.simulated import Simulation  # noqa: E402
from kubesched.cluster.snapshot import ClusterSnapshot  # noqa: E402
from kubesched.objects.node import Node, parse_node  # noqa: E402

SHAPES = 50


@dataclass(frozen=True)
class ScaleWorkload:
    sizes: tuple[int, int, int]  # nodes, bound pods, measured pods
    target: int
    shapes: int = 1  # distinct request shapes of the measured pods
    node_churn: bool = False


WORKLOADS: dict[str, ScaleWorkload] = {
    "VariedShapes": ScaleWorkload((5000, 5000, 10000), 2000, shapes=SHAPES),
    "NodeChurn": ScaleWorkload((50000, 1000, 10000), 2000, node_churn=True),
    "SchedulingBasic50k": ScaleWorkload((50000, 1000, 10000), 2000),
    "SchedulingBasic100k": ScaleWorkload((100000, 1000, 10000), 2000),
}


def shape(k: int) -> dict[str, Any]:
    """Request shape ``k``: pod-default's container with more cpu and memory."""
    amounts = {"cpu": f"{100 + 10 * k}m", "memory": f"{500 + 10 * k}Mi"}
    container = deep_merge(POD_DEFAULT["spec"]["containers"][0], {"resources": {"requests": amounts, "limits": amounts}})
    return {"containers": [container]}


def builder(nodes: int, init_pods: int, pods: int, shapes: int) -> Callable[[], ClusterSnapshot]:
    def build() -> ClusterSnapshot:
        node_objs = make_nodes(nodes)
        bound = bind_round_robin(make_pods(init_pods, prefix="init-pod-", namespace="namespace-1"), node_objs)
        spec = (lambda i: shape(i % shapes)) if shapes > 1 else None
        pending = make_pods(pods, prefix="pod-", namespace="namespace-2", spec=spec)
        return build_snapshot(node_objs, bound, pending)
    return build


def heartbeat(name: str, beat: int) -> dict[str, Any]:
    """``node-default`` as its kubelet reports it at heartbeat ``beat``: only the Ready
    condition's times and the resourceVersion differ from one beat to the next."""
    stamp = f"2026-01-01T{beat // 3600 % 24:02d}:{beat // 60 % 60:02d}:{beat % 60:02d}Z"
    return deep_merge(NODE_DEFAULT, {
        "metadata": {"name": name, "uid": f"node-uid-{name}", "resourceVersion": str(1000 + beat),
                     "labels": {"kubernetes.io/hostname": name}},
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": stamp,
                                   "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "KubeletReady"}]},
    })


class NodeStatusChurn:
    """Before each attempt, one node's heartbeat, node after node (parsed ahead of time)."""

    def __init__(self, sim: Simulation, updates: int) -> None:
        self.sim = sim
        self.current: dict[str, Node] = {n.name: n for n in sim.snapshot.nodes}
        names = [n.name for n in sim.snapshot.nodes]
        self.updates = [parse_node(heartbeat(names[i % len(names)], i)) for i in range(updates)]
        self.done = 0

    def __call__(self, scheduled: int, total: int) -> None:
        if self.done >= len(self.updates):
            return
        new = self.updates[self.done]
        old = self.current[new.name]
        self.current[new.name] = new
        self.sim.scheduler.on_node_update(old, new)
        self.done += 1


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__, list(WORKLOADS))
    args = parser.parse_args(argv)
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    results: list[WorkloadResult] = []
    failed = False
    for name in names:
        spec = WORKLOADS[name]
        d_nodes, d_init, d_pods = spec.sizes
        nodes = args.nodes if args.nodes is not None else d_nodes
        init = args.init_pods if args.init_pods is not None else d_init
        pods = args.pods if args.pods is not None else d_pods
        rates: list[float] = []
        for run_index in range(args.repeat):
            profiler = cProfile.Profile() if args.profile else None
            churn: list[NodeStatusChurn] = []

            def driver(sim: Simulation) -> Progress:
                made = NodeStatusChurn(sim, pods)
                churn.append(made)
                return made

            result = run_workload(
                name, builder(nodes, init, pods, spec.shapes), tie_break=args.tie_break, seed=args.seed,
                trace_memory=args.trace_memory, profiler=profiler, driver=driver if spec.node_churn else None,
            )
            if churn:
                result.extra["node status updates while measuring"] = churn[0].done
            if spec.shapes > 1:
                result.extra["request shapes"] = spec.shapes
            at_size = (nodes, init, pods) == spec.sizes
            report_run(result, args, profiler, f"{args.profile}.{name}.{run_index}", at_size,
                       None, spec.target, "tottime")
            rates.append(result.pods_per_second)
            failed = failed or bool(result.unschedulable)
            results.append(result)
        if args.repeat > 1:
            print(f"{name}: median of {len(rates)} runs {statistics.median(rates):,.0f} pods/s", flush=True)
    if args.json:
        write_results_json(args.json, results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
