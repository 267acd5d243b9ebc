"""The time of one replay of the FGD paper's experiment: the default Alibaba trace at 130%.

    python benchmarks/bench_replay.py [--trace DIR] [--nodes CSV] [--pods CSV] [--policy NAME ...]
                                      [--seeds N] [--arrival R] [--profile FILE]

The default trace is the paper's: ``openb_node_list_gpu_node.csv`` (1,213 GPU nodes,
6,212 GPUs) and ``openb_pod_list_default.csv`` (8,152 pods) of Alibaba's
``cluster-trace-gpu-v2023`` (examples/alibaba-gpu-v2023/README.md says how to fetch it),
read from ``--trace DIR``, else ``$KUBESCHED_GPU_TRACE``, else the repository's sample of
it in ``examples/alibaba-gpu-v2023`` (121 nodes, 800 pods: not the paper's figures). Each replay
schedules about 10,800 pods, one attempt each, on the replay's profile (upstream's
filters, GpuShare, one policy as the only Score). The trace is read once, untimed (a
process reads it once too); then every replay is timed: wall-clock and CPU seconds,
microseconds per scheduling attempt, and the GPU allocation it ends with. The paper's
Go simulator takes about ten minutes per replay on two cores.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import resource
import sys
import time
from pathlib import Path
from statistics import fmean

from kubesched.plugins.gpushare import POLICIES
from kubesched.replay import DEFAULT_SEED, ReplaySpec, TraceError, load_trace, run_replay

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "examples" / "alibaba-gpu-v2023"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", metavar="DIR", default=os.environ.get("KUBESCHED_GPU_TRACE"),
                        help="the trace's folder (default: $KUBESCHED_GPU_TRACE, else the shipped sample)")
    parser.add_argument("--nodes", help="default: DIR/openb_node_list_gpu_node.csv")
    parser.add_argument("--pods", help="default: DIR/openb_pod_list_default.csv")
    parser.add_argument("--policy", action="append", help="default: all six")
    parser.add_argument("--seeds", type=int, default=1, help=f"seeds per policy, from {DEFAULT_SEED}")
    parser.add_argument("--arrival", type=float, default=1.3)
    parser.add_argument("--profile", help="write a cProfile of the replays here")
    args = parser.parse_args()
    trace_dir = Path(args.trace) if args.trace else SAMPLE_DIR
    if not args.trace and not (args.nodes and args.pods):
        print(f"no --trace and no $KUBESCHED_GPU_TRACE: the sample in {SAMPLE_DIR} (not the paper's figures)")
    args.nodes = args.nodes or str(trace_dir / "openb_node_list_gpu_node.csv")
    args.pods = args.pods or str(trace_dir / "openb_pod_list_default.csv")
    try:
        started = time.perf_counter()
        trace = load_trace(args.nodes, args.pods)
    except TraceError as err:
        for problem in err.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    print(f"trace: {len(trace.nodes)} nodes, {trace.gpu_capacity_milli // 1000} GPUs, {len(trace.pods)} pods "
          f"(read in {time.perf_counter() - started:.2f}s, once per process)")
    profiler = cProfile.Profile() if args.profile else None
    walls: list[float] = []
    print(f"{'policy':14} {'seed':>4} {'wall s':>7} {'cpu s':>7} {'pods':>6} {'us/attempt':>10} {'allocated':>9}")
    for policy in args.policy or list(POLICIES):
        for seed in range(DEFAULT_SEED, DEFAULT_SEED + args.seeds):
            spec = ReplaySpec(args.nodes, args.pods, policy, seed, arrival=args.arrival)
            cpu = time.process_time()
            if profiler is not None:
                profiler.enable()
            result = run_replay(spec)
            if profiler is not None:
                profiler.disable()
            cpu = time.process_time() - cpu
            walls.append(result.seconds)
            print(f"{result.policy:14} {seed:>4} {result.seconds:>7.2f} {cpu:>7.2f} {result.pods_arrived:>6} "
                  f"{result.seconds / result.attempts * 1e6:>10.0f} {result.final.allocation_ratio * 100:>8.1f}%")
    print(f"{len(walls)} replay(s): {fmean(walls):.2f}s per replay (wall), peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if profiler is not None:
        profiler.dump_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
