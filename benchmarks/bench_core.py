"""Core scheduling throughput, mirroring upstream scheduler_perf's SchedulingBasic and SchedulingNodeAffinity.

    python benchmarks/bench_core.py [--workload SchedulingBasic|SchedulingNodeAffinity|all]
                                    [--nodes N] [--init-pods N] [--pods N]

* SchedulingBasic (``misc/performance-config.yaml``, 5000Nodes_10000Pods): 5,000
  ``node-default`` nodes, 1,000 ``pod-default`` pods already running, 10,000
  ``pod-default`` pods measured.
* SchedulingNodeAffinity (``affinity/performance-config.yaml``, 5000Nodes_10000Pods):
  5,000 ``node-default`` nodes labelled ``topology.kubernetes.io/zone=zone1``
  (``labelNodePrepareStrategy``), 5,000 ``pod-with-node-affinity`` pods already
  running, 10,000 ``pod-with-node-affinity`` pods measured.

Everything runs in simulation through ``kubesched.cluster.simulated.Simulation`` with the
default configuration (in-tree registry, adaptive percentageOfNodesToScore, upstream's
random tie-break with a fixed seed). Only ``Simulation.run`` is timed: building the
objects and loading the cache and queue are setup, as in scheduler_perf. The figure is
measured pods scheduled per second of that run.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    report_run,
    benchmark_parser,
    write_results_json,  # noqa: E402
    POD_DEFAULT,
    POD_WITH_NODE_AFFINITY,
    ZONE_LABEL,
    WorkloadResult,
    bind_round_robin,
    build_snapshot,
    make_nodes,
    make_pods,
    run_workload,
)

# name -> (defaults (nodes, init pods, measured pods), upstream's threshold in pods/s
# (v1.36.2, newest main), kubesched's target on the 2-core development machine)
WORKLOADS = {
    "SchedulingBasic": ((5000, 1000, 10000), (270, 680), 2000),
    "SchedulingNodeAffinity": ((5000, 5000, 10000), (220, 220), 1000),
}


def build_basic(nodes: int, init_pods: int, pods: int):
    def build():
        node_objs = make_nodes(nodes)
        bound = bind_round_robin(make_pods(init_pods, prefix="init-pod-", namespace="namespace-1"), node_objs)
        pending = make_pods(pods, prefix="pod-", namespace="namespace-2")
        return build_snapshot(node_objs, bound, pending)

    return build


def build_node_affinity(nodes: int, init_pods: int, pods: int):
    def build():
        node_objs = make_nodes(nodes, label_strategy=(ZONE_LABEL, ["zone1"]))
        init = make_pods(init_pods, prefix="init-pod-", namespace="namespace-1", template=POD_WITH_NODE_AFFINITY)
        bound = bind_round_robin(init, node_objs)
        pending = make_pods(pods, prefix="pod-", namespace="namespace-2", template=POD_WITH_NODE_AFFINITY)
        return build_snapshot(node_objs, bound, pending)

    return build


BUILDERS = {"SchedulingBasic": build_basic, "SchedulingNodeAffinity": build_node_affinity}
assert POD_DEFAULT  # the templates are documented in common.py


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__, list(WORKLOADS))
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run everything in this process (by default each of several runs gets its own, so peak RSS is its own)",
    )
    parser.add_argument("--child-result", metavar="FILE", help=argparse.SUPPRESS)  # one run, result to FILE
    args = parser.parse_args(argv)

    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    if not args.child_result:
        import kubesched

        print(f"kubesched from {Path(kubesched.__file__).parent}", flush=True)
    isolate = len(names) * args.repeat > 1 and not args.in_process and not args.profile and not args.child_result
    results: list[WorkloadResult] = []
    failed = False
    for name in names:
        (d_nodes, d_init, d_pods), upstream, target = WORKLOADS[name]
        nodes = args.nodes if args.nodes is not None else d_nodes
        init = args.init_pods if args.init_pods is not None else d_init
        pods = args.pods if args.pods is not None else d_pods
        for run in range(args.repeat):
            profiler = cProfile.Profile() if args.profile else None
            if isolate:
                result = _run_child(name, nodes, init, pods, args)
            else:
                result = run_workload(
                    name,
                    BUILDERS[name](nodes, init, pods),
                    tie_break=args.tie_break,
                    seed=args.seed,
                    trace_memory=args.trace_memory,
                    profiler=profiler,
                    batching=args.batching == "on",
                )
            if args.child_result:
                Path(args.child_result).write_text(json.dumps(dataclasses.asdict(result)))
                return 0
            profile_name = args.profile if args.repeat == 1 and len(names) == 1 else f"{args.profile}.{name}.{run}"
            at_size = (nodes, init, pods) == (d_nodes, d_init, d_pods)
            report_run(result, args, profiler, profile_name, at_size, f"{upstream[0]} pods/s (v1.36.2), {upstream[1]} (main)", target, "cumulative")
            failed = failed or bool(result.unschedulable)
            results.append(result)
    if args.json:
        write_results_json(args.json, results)
    return 1 if failed else 0


def _run_child(name: str, nodes: int, init: int, pods: int, args: argparse.Namespace) -> WorkloadResult:
    """One run in a fresh interpreter, so that its peak RSS is its own."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [
            sys.executable, __file__, "--workload", name, "--nodes", str(nodes), "--init-pods", str(init),
            "--pods", str(pods), "--seed", str(args.seed), "--tie-break", args.tie_break, "--batching", args.batching, "--child-result", out.name,
        ]
        if args.trace_memory:
            command.append("--trace-memory")
        subprocess.run(command, check=True)
        return WorkloadResult(**json.loads(Path(out.name).read_text()))


if __name__ == "__main__":
    sys.exit(main())
