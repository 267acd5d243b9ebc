"""The cost of preemption after an out-of-tree Filter's Unschedulable rejections.

    python benchmarks/bench_sdk_preemption.py [--variant default|quota|quota-ext|all] [--repeat N]
                                              [--nodes N] [--init-pods N] [--pods N] [--profile FILE]

upstream scheduler_perf's SchedulingBasic (5,000 nodes, 1,000 pods running, 10,000
measured, built as ``bench_core.py`` builds it), except that every 20th pending pod
(5%) carries ``acme.io/team: capped``, a team whose quota is 0 pods. Variants, run one
after the other in this process on the same pods:

* ``default``: the default profile (the labels change nothing);
* ``quota``: the default profile plus ``TeamQuota`` (``sdk_quota.py``), an out-of-tree
  PreFilter/Filter that rejects the capped team's pods on every node as
  ``Unschedulable``; so DefaultPreemption runs for each of them, on every node;
* ``quota-ext``: the same plugin with ``PreFilterExtensions`` (``add_pod``/``remove_pod``)
  and a state that clones, which preemption's what-if runs must copy per node.

No pod has a lower priority than another, so no node can yield victims: upstream's
``SelectVictimsOnNode`` answers at once on every node, and so should the cost. The
issue's target: each quota variant within 2x of the default profile's time, measured
in the same run (the ratio printed last). Only ``Simulation.run`` is timed.
"""

from __future__ import annotations

import cProfile
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import WORKLOADS  # noqa: E402
from bench_sdk import simulations_with  # noqa: E402
from common import (  # noqa: E402
    WorkloadResult,
    benchmark_parser,
    bind_round_robin,
    build_snapshot,
    make_nodes,
    make_pods,
    report_run,
    run_workload,
    write_results_json,
)

import sdk_quota  # noqa: E402

from kubesched.cluster.snapshot import ClusterSnapshot  # noqa: E402
from kubesched.framework.config import SchedulerConfig, parse_config  # noqa: E402
from kubesched.framework.loader import load_plugins  # noqa: E402
from kubesched.framework.registry import Registry  # noqa: E402
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry  # noqa: E402

WORKLOAD = "SchedulingBasic"
EVERY = 20  # one pending pod in 20 is over quota
VARIANTS = {"quota": "sdk_quota:spec", "quota-ext": "sdk_quota:spec_with_extensions"}
TARGET_RATIO = 2.0


def build(nodes: int, init_pods: int, pods: int):  # type: ignore[no-untyped-def]
    def make() -> ClusterSnapshot:
        node_objs = make_nodes(nodes)
        bound = bind_round_robin(make_pods(init_pods, prefix="init-pod-", namespace="namespace-1"), node_objs)
        pending = make_pods(pods, prefix="pod-", namespace="namespace-2",
                            labels=lambda i: {sdk_quota.TEAM: "capped"} if i % EVERY == 0 else None)
        return build_snapshot(node_objs, bound, pending)

    return make


def quota_setup(target: str) -> tuple[Registry, SchedulerConfig]:
    registry = load_plugins(in_tree_registry(), [target], use_entry_points=False)
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"multiPoint": {"enabled": [{"name": "TeamQuota"}]}},
                         "pluginConfig": [{"name": "TeamQuota", "args": {"limits": {"capped": 0}}}]}]}
    return registry, parse_config(raw, registry, UPSTREAM_ONLY)


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__, [WORKLOAD])
    parser.add_argument("--variant", choices=["default", *VARIANTS, "all"], default="all",
                        help="one variant, or all three (default)")
    args = parser.parse_args(argv)
    if args.trace_memory:
        parser.error("--trace-memory: use bench_core.py; this benchmark compares times")
    (d_nodes, d_init, d_pods), _, _ = WORKLOADS[WORKLOAD]
    nodes = args.nodes if args.nodes is not None else d_nodes
    init = args.init_pods if args.init_pods is not None else d_init
    pods = args.pods if args.pods is not None else d_pods
    variants = ["default", *VARIANTS] if args.variant == "all" else [args.variant]
    print(f"{nodes} nodes, {init} running pods, {pods} pending of which {len(range(0, pods, EVERY))} over quota; "
          f"target: each quota variant within {TARGET_RATIO:g}x the default profile's time (same run)", flush=True)
    results: list[WorkloadResult] = []
    times: dict[str, list[float]] = {v: [] for v in variants}
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    failed = False
    for run in range(args.repeat):
        for variant in variants:
            profiler = cProfile.Profile() if args.profile else None
            name = f"{WORKLOAD} 5% over quota [{variant}]"
            if variant == "default":
                result = run_workload(name, build(nodes, init, pods), tie_break=args.tie_break, seed=args.seed,
                                      profiler=profiler)
                failed = failed or bool(result.unschedulable)
            else:
                registry, config = quota_setup(VARIANTS[variant])
                with simulations_with(registry):
                    result = run_workload(name, build(nodes, init, pods), config=config, tie_break=args.tie_break,
                                          seed=args.seed, profiler=profiler)
                failed = failed or result.unschedulable != len(range(0, pods, EVERY))
            report_run(result, args, profiler, f"{args.profile}.{variant}.{run}" if args.profile else "", False,
                       None, 0, "tottime")
            results.append(result)
            times[variant].append(result.run_seconds)
            cpu[variant].append(result.run_cpu_seconds)
    if "default" in times and len(variants) > 1:
        base = _median(times["default"])
        for variant in VARIANTS:
            if variant in times:
                ratio = _median(times[variant]) / base
                verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
                cpu_ratio = _median(cpu[variant]) / _median(cpu["default"])
                print(f"{variant}: {_median(times[variant]):.2f} s vs default {base:.2f} s "
                      f"(median of {args.repeat}): {ratio:.2f}x the default's time ({cpu_ratio:.2f}x its CPU time), "
                      f"target <= {TARGET_RATIO:g}x {verdict}")
    if args.json:
        write_results_json(args.json, results)
    return 1 if failed else 0


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


if __name__ == "__main__":
    sys.exit(main())
