"""Inter-pod affinity throughput, mirroring upstream scheduler_perf's SchedulingPodAntiAffinity,
SchedulingPodAffinity, SchedulingPreferredPodAffinity and SchedulingPreferredPodAntiAffinity
(``test/integration/scheduler_perf/affinity/performance-config.yaml``, the workloads upstream
records a threshold for: ``5000Nodes_2000Pods`` and ``5000Nodes_5000Pods``).

    python benchmarks/bench_affinity.py [--workload NAME|all] [--nodes N] [--init-pods N] [--pods N]

The workloads, as upstream writes them:

* SchedulingPodAntiAffinity (5000Nodes_2000Pods, threshold 60 pods/s): 5,000
  ``node-default`` nodes; 1,000 pods in ``sched-0`` then 2,000 measured pods in ``sched-1``,
  all from ``pod-with-pod-anti-affinity.yaml`` (label ``color: green``, required
  anti-affinity to ``color: green`` over ``kubernetes.io/hostname`` in namespaces
  ``[sched-1, sched-0]``): one pod per node.
* SchedulingPodAffinity (5000Nodes_5000Pods, threshold 35): 5,000 nodes labelled
  ``topology.kubernetes.io/zone: zone1`` (``labelNodePrepareStrategy``); 5,000 + 5,000 pods
  from ``pod-with-pod-affinity.yaml`` (``color: blue``, required affinity to
  ``color: blue`` over the zone key in ``[sched-1, sched-0]``).
* SchedulingPreferredPodAffinity (5000Nodes_5000Pods, threshold 90): 5,000 nodes;
  5,000 + 5,000 pods from ``pod-with-preferred-pod-affinity.yaml`` (``color: red``,
  preferred affinity, weight 1, to ``color: red`` over the hostname key in
  ``[sched-1, sched-0]``).
* SchedulingPreferredPodAntiAffinity (5000Nodes_5000Pods, threshold 90): 5,000 nodes;
  5,000 + 5,000 pods from ``pod-with-preferred-pod-anti-affinity.yaml`` (``color: yellow``,
  preferred anti-affinity, weight 1, to ``color: yellow`` over the hostname key in
  ``[sched-1, sched-0]``).
* ManyAntiAffineWorkloads (not an upstream workload): 5,000 nodes in 3 zones, 50,000
  pods of 1,000 workloads already bound, 2,000 measured pods of the same workloads; every
  pod has a label unique to it (as StatefulSet pods do), a required anti-affinity to its
  workload over the hostname key and a preferred one (weight 10) over the zone key. It
  checks that the cost of a cycle does not grow with the number of pods, distinct label
  sets or distinct terms.

Every pod asks for 100m cpu and 500Mi (``pod-default``'s containers). Upstream has the
scheduler place the first batch; here it starts bound one pod per node (round-robin),
which is where the scheduler puts it too (anti-affinity forces it; LeastAllocated does it
for the others), as setup. The measured pods then go through
``kubesched.cluster.simulated.Simulation`` with the default configuration (in-tree
registry, adaptive percentageOfNodesToScore, upstream's random tie-break with a fixed
seed). Only ``Simulation.run`` is timed; the figure is measured pods scheduled per second
of that run. Peak memory is the process's peak RSS (with ``--trace-memory``, the Python
heap's peak over load and run instead, untimed).
"""

from __future__ import annotations

import cProfile
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    report_run,
    benchmark_parser,
    write_results_json,  # noqa: E402
    HOSTNAME_LABEL,
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

NAMESPACES = ["sched-1", "sched-0"]
_REQ, _PREF = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"


def _term(color: str, key: str) -> dict:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key, "namespaces": list(NAMESPACES)}


def _template(prefix: str, color: str, affinity: dict) -> dict:
    return deep_merge(
        POD_DEFAULT, {"metadata": {"generateName": prefix, "labels": {"color": color}}, "spec": {"affinity": affinity}}
    )


# templates/pod-with-pod-anti-affinity.yaml
POD_WITH_POD_ANTI_AFFINITY = _template("anti-affinity-pod-", "green", {"podAntiAffinity": {_REQ: [_term("green", HOSTNAME_LABEL)]}})
# templates/pod-with-pod-affinity.yaml
POD_WITH_POD_AFFINITY = _template("affinity-pod-", "blue", {"podAffinity": {_REQ: [_term("blue", ZONE_LABEL)]}})
# templates/pod-with-preferred-pod-affinity.yaml
POD_WITH_PREFERRED_POD_AFFINITY = _template(
    "preferred-affinity-pod-", "red", {"podAffinity": {_PREF: [{"podAffinityTerm": _term("red", HOSTNAME_LABEL), "weight": 1}]}}
)
# templates/pod-with-preferred-pod-anti-affinity.yaml
POD_WITH_PREFERRED_POD_ANTI_AFFINITY = _template(
    "preferred-anti-affinity-pod-",
    "yellow",
    {"podAntiAffinity": {_PREF: [{"podAffinityTerm": _term("yellow", HOSTNAME_LABEL), "weight": 1}]}},
)

# name -> (defaults (nodes, init pods, measured pods), upstream's recorded threshold in pods/s,
# kubesched's target on the 2-core development machine, pod template, node zone labels)
WORKLOADS = {
    "SchedulingPodAntiAffinity": ((5000, 1000, 2000), 60, 500, POD_WITH_POD_ANTI_AFFINITY, None),
    "SchedulingPodAffinity": ((5000, 5000, 5000), 35, 500, POD_WITH_POD_AFFINITY, ["zone1"]),
    "SchedulingPreferredPodAffinity": ((5000, 5000, 5000), 90, 500, POD_WITH_PREFERRED_POD_AFFINITY, None),
    "SchedulingPreferredPodAntiAffinity": ((5000, 5000, 5000), 90, 500, POD_WITH_PREFERRED_POD_ANTI_AFFINITY, None),
    "ManyAntiAffineWorkloads": ((5000, 50000, 2000), None, 500, None, ["zone-0", "zone-1", "zone-2"]),
}
WORKLOAD_COUNT = 1000
UPSTREAM_WORKLOADS = [name for name, spec in WORKLOADS.items() if spec[1] is not None]


def _workload_pod(i: int) -> dict:
    app = f"app-{i % WORKLOAD_COUNT}"
    term = {"labelSelector": {"matchLabels": {"app": app}}}
    return {"affinity": {"podAntiAffinity": {
        _REQ: [{**term, "topologyKey": HOSTNAME_LABEL}],
        _PREF: [{"weight": 10, "podAffinityTerm": {**term, "topologyKey": ZONE_LABEL}}],
    }}}


def builder(template: dict | None, zones: list[str] | None, nodes: int, init_pods: int, pods: int):
    if template is None:  # ManyAntiAffineWorkloads
        def build_many():
            node_objs = make_nodes(nodes, label_strategy=(ZONE_LABEL, zones))
            labels = lambda prefix: lambda i: {"app": f"app-{i % WORKLOAD_COUNT}", "pod-name": f"{prefix}{i}"}  # noqa: E731
            init = make_pods(init_pods, prefix="init-pod-", namespace="sched-0", labels=labels("init-"), spec=_workload_pod)
            bound = bind_round_robin(init, node_objs)
            pending = make_pods(pods, prefix="pod-", namespace="sched-0", labels=labels("pod-"), spec=_workload_pod)
            return build_snapshot(node_objs, bound, pending)

        return build_many

    def build():
        node_objs = make_nodes(nodes, label_strategy=(ZONE_LABEL, zones) if zones else None)
        init = make_pods(init_pods, prefix="init-pod-", namespace="sched-0", template=template)
        bound = bind_round_robin(init, node_objs)
        pending = make_pods(pods, prefix="pod-", namespace="sched-1", template=template)
        return build_snapshot(node_objs, bound, pending)

    return build


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__, list(WORKLOADS))
    args = parser.parse_args(argv)

    names = UPSTREAM_WORKLOADS if args.workload == "all" else [args.workload]
    results: list[WorkloadResult] = []
    failed = False
    for name in names:
        (d_nodes, d_init, d_pods), upstream, target, template, zones = WORKLOADS[name]
        nodes = args.nodes if args.nodes is not None else d_nodes
        init = args.init_pods if args.init_pods is not None else d_init
        pods = args.pods if args.pods is not None else d_pods
        for run in range(args.repeat):
            profiler = cProfile.Profile() if args.profile else None
            result = run_workload(
                name,
                builder(template, zones, nodes, init, pods),
                tie_break=args.tie_break,
                seed=args.seed,
                trace_memory=args.trace_memory,
                profiler=profiler,
            )
            profile_name = args.profile if args.repeat == 1 and len(names) == 1 else f"{args.profile}.{name}.{run}"
            at_size = (nodes, init, pods) == (d_nodes, d_init, d_pods)
            report_run(result, args, profiler, profile_name, at_size, None if upstream is None else f"{upstream} pods/s", target, "tottime")
            failed = failed or bool(result.unschedulable)
            results.append(result)
    if args.json:
        write_results_json(args.json, results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
