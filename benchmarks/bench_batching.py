"""OpportunisticBatching: identical pods that each fill a node, with and without batching.

    python benchmarks/bench_batching.py [--nodes N] [--pods N] [--repeat N] [--profile FILE]

5,000 ``node-default`` nodes (4 cpu, 32Gi) and 4,000 measured pods asking for 4 cpu
each (every pod fills a node), in a profile with PodTopologySpread ``defaultingType:
List`` (no system default constraints, so pods are signed). With batching (upstream's
default since v1.35) the pod after a fully scored one takes the next node of the stored
heap without a walk or scoring, as long as the previous pod's node is now full; without
it (``OpportunisticBatching=false``) every pod walks until it has found 500 feasible
nodes and scores them. Both runs schedule the same pods on the same cluster, one after
the other in this process; the figure is measured pods per second of ``Simulation.run``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    benchmark_parser,
    build_snapshot,
    deep_merge,
    default_scheduler_config,
    make_nodes,
    make_pods,
    POD_DEFAULT,
    report_run,
    run_workload,
    write_results_json,
)

from kubesched.cluster.simulated import Simulation  # noqa: E402

LIST_DEFAULTING = {"profiles": [{"schedulerName": "default-scheduler",
                                 "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}]}
NODE_FILLING_POD: dict[str, Any] = deep_merge(POD_DEFAULT, {"spec": {"containers": [{
    "image": POD_DEFAULT["spec"]["containers"][0]["image"], "name": "pause",
    "resources": {"limits": {"cpu": "4", "memory": "500Mi"}, "requests": {"cpu": "4", "memory": "500Mi"}}}]}})


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__, ["Batching"])
    args = parser.parse_args(argv)
    nodes, pods = args.nodes or 5000, args.pods or 4000

    def build() -> Any:
        return build_snapshot(make_nodes(nodes), [], make_pods(pods, template=NODE_FILLING_POD, namespace="batch"))

    config = default_scheduler_config(LIST_DEFAULTING)
    results = []
    rates: dict[bool, float] = {}
    for run_index in range(args.repeat):
        for batching in (True, False):
            def prepare(sim: Simulation, on: bool = batching) -> None:
                sim.scheduler.algorithm.batching = on  # the OpportunisticBatching feature gate

            name = f"Batching ({'on' if batching else 'off'})"
            result = run_workload(name, build, config, tie_break=args.tie_break, seed=args.seed, prepare=prepare)
            result.extra["batching"] = "on (upstream's default)" if batching else "off"
            rates[batching] = result.pods_per_second
            report_run(result, args, None, f"{args.profile}.{run_index}", False, None, 0)
            results.append(result)
        if rates.get(False):
            print(f"  with batching: {rates[True]:,.0f} pods/s, without: {rates[False]:,.0f} pods/s "
                  f"({rates[True] / rates[False]:.2f}x, same pods and cluster, this process)", flush=True)
    if args.json:
        write_results_json(args.json, results)
    return 0 if all(r.scheduled == r.measured_pods for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
