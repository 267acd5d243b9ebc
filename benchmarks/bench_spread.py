"""Topology spreading throughput, mirroring upstream scheduler_perf's TopologySpreading and
PreferredTopologySpreading (``topology_spreading/performance-config.yaml``, workload
``5000Nodes_5000Pods``).

    python benchmarks/bench_spread.py [--workload TopologySpreading|PreferredTopologySpreading|all]
                                      [--nodes N] [--init-pods N] [--pods N]

Both workloads, as upstream writes them:

* 5,000 ``node-default`` nodes (pods 110, cpu 4, memory 32Gi) labelled
  ``topology.kubernetes.io/zone`` from ``[moon-1, moon-2, moon-3]``
  (``labelNodePrepareStrategy``; assigned round-robin here);
* 5,000 ``pod-default`` pods (100m cpu, 500Mi, no labels) in ``namespace-1``;
  upstream has the scheduler place them, which with LeastAllocated puts one pod on each
  node: here they start bound that way, as setup;
* 5,000 measured pods in ``namespace-2`` from ``pod-with-topology-spreading.yaml``
  (TopologySpreading: label ``color: blue``, one constraint ``maxSkew: 5`` over the zone
  key, ``DoNotSchedule``, selecting ``color: blue``) or
  ``pod-with-preferred-topology-spreading.yaml`` (the same with ``ScheduleAnyway``).

Everything runs in simulation through ``kubesched.cluster.simulated.Simulation`` with the
default configuration (in-tree registry, adaptive percentageOfNodesToScore, upstream's
random tie-break with a fixed seed). Only ``Simulation.run`` is timed, as scheduler_perf
measures the scheduling of the measured pods; the figure is measured pods scheduled per
second of that run. Peak memory is the process's peak RSS (and, with ``--trace-memory``,
the Python heap's peak over load and run, untimed).
"""

from __future__ import annotations

import cProfile
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    report_run,
    benchmark_parser,
    write_results_json,
    POD_DEFAULT,
    ZONE_LABEL,
    WorkloadResult,
    bind_round_robin,
    build_snapshot,
    deep_merge,
    make_nodes,
    make_pods,
    run_workload,
)

ZONES = ["moon-1", "moon-2", "moon-3"]


def _spreading_template(when: str) -> dict:
    """``pod-with-topology-spreading.yaml`` / ``pod-with-preferred-topology-spreading.yaml``."""
    return deep_merge(
        POD_DEFAULT,
        {
            "metadata": {"generateName": "spreading-pod-", "labels": {"color": "blue"}},
            "spec": {
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 5,
                        "topologyKey": ZONE_LABEL,
                        "whenUnsatisfiable": when,
                        "labelSelector": {"matchLabels": {"color": "blue"}},
                    }
                ]
            },
        },
    )


POD_WITH_TOPOLOGY_SPREADING = _spreading_template("DoNotSchedule")
POD_WITH_PREFERRED_TOPOLOGY_SPREADING = _spreading_template("ScheduleAnyway")

# name -> (defaults (nodes, init pods, measured pods), upstream's thresholds in pods/s
# (v1.36.2, newest main), kubesched's target on the 2-core development machine, template)
WORKLOADS = {
    "TopologySpreading": ((5000, 5000, 5000), (85, 460), 1000, POD_WITH_TOPOLOGY_SPREADING),
    "PreferredTopologySpreading": ((5000, 5000, 5000), (125, 340), 1000, POD_WITH_PREFERRED_TOPOLOGY_SPREADING),
}


def builder(template: dict, nodes: int, init_pods: int, pods: int):
    def build():
        node_objs = make_nodes(nodes, label_strategy=(ZONE_LABEL, ZONES))
        bound = bind_round_robin(make_pods(init_pods, prefix="pod-", namespace="namespace-1"), node_objs)
        pending = make_pods(pods, prefix="spreading-pod-", namespace="namespace-2", template=template)
        return build_snapshot(node_objs, bound, pending)

    return build


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__, list(WORKLOADS))
    args = parser.parse_args(argv)

    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    results: list[WorkloadResult] = []
    failed = False
    for name in names:
        (d_nodes, d_init, d_pods), upstream, target, template = WORKLOADS[name]
        nodes = args.nodes if args.nodes is not None else d_nodes
        init = args.init_pods if args.init_pods is not None else d_init
        pods = args.pods if args.pods is not None else d_pods
        for run in range(args.repeat):
            profiler = cProfile.Profile() if args.profile else None
            result = run_workload(
                name,
                builder(template, nodes, init, pods),
                tie_break=args.tie_break,
                seed=args.seed,
                trace_memory=args.trace_memory,
                profiler=profiler,
            )
            profile_name = args.profile if args.repeat == 1 and len(names) == 1 else f"{args.profile}.{name}.{run}"
            at_size = (nodes, init, pods) == (d_nodes, d_init, d_pods)
            report_run(result, args, profiler, profile_name, at_size, f"{upstream[0]} pods/s (v1.36.2), {upstream[1]} (main)", target, "tottime")
            failed = failed or bool(result.unschedulable)
            results.append(result)
    if args.json:
        write_results_json(args.json, results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
