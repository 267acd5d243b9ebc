"""Memory of ``simulate --explain``: the same run with and without the explain stream.

    python benchmarks/bench_explain.py [--nodes N] [--pods N] [--unschedulable-every K]
                                       [--filter all|failed|none] [--keep FILE]

The issue's workload: 20,000 pending ``pod-default`` pods on 5,000 ``node-default``
nodes; every K-th pod (default 10) has a node selector no node matches, so its failed
attempts name every node (the records that made the old, buffered ``--explain`` reach
gigabytes). Each variant runs in its own process so that peak RSS (``ru_maxrss``) is
its own: ``plain`` has no explain callback, ``explain`` streams every attempt (or only
the failed ones with ``--filter failed``) to a file through ``cli.explain_stream``.
The issue's bound: the explain run's peak RSS within 1.5x of the plain run's. A
benchmark, not a test: it prints the figures and the ratio and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    Timer,
    build_snapshot,
    current_rss_mib,
    make_nodes,
    make_pods,
    peak_rss_mib,
)

from kubesched.cluster.simulated import Simulation  # noqa: E402
from kubesched.framework.config import default_config  # noqa: E402
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry  # noqa: E402

from kubesched.cli.explain_stream import ExplainFilter, ExplainStream  # noqa: E402


def _child(args: argparse.Namespace) -> dict[str, float | int | str]:
    nodes = make_nodes(args.nodes, zones=3)
    every = args.unschedulable_every
    pods = make_pods(args.pods, spec=lambda i: {"nodeSelector": {"pool": "none"}} if every and i % every == 0 else None)
    snap = build_snapshot(nodes, (), pods)
    del nodes, pods
    registry = in_tree_registry()
    config = default_config(registry, UPSTREAM_ONLY)
    out = Path(args.out)
    sink = out.open("wb") if args.variant == "explain" else None
    sims: list[Simulation] = []
    stream = None
    if sink is not None:  # as simulate wires it: the callback reads the simulation's node table
        stream = ExplainStream(sink, lambda: sims[0].scheduler.cache.table.order.tolist(),
                               ExplainFilter(failed_only=args.filter == "failed"))
    sims.append(Simulation(snap, config, registry, seed=0, on_attempt=stream))
    loaded = peak_rss_mib()
    with Timer() as timer:
        result = sims[0].run()
    written = stream.written if stream is not None else 0
    size = 0
    if sink is not None:
        sink.close()
        size = out.stat().st_size
    return {"variant": args.variant, "scheduled": len(result.scheduled), "unschedulable": len(result.unschedulable),
            "attempts": result.attempts, "lines": written, "file_mib": size / 2**20, "seconds": timer.seconds,
            "peak_loaded_mib": loaded, "peak_mib": peak_rss_mib(), "rss_end_mib": current_rss_mib() or 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--unschedulable-every", type=int, default=10, help="every K-th pod fits no node (0: none)")
    parser.add_argument("--filter", choices=["all", "failed"], default="all", help="which attempts the explain run writes")
    parser.add_argument("--keep", metavar="FILE", help="keep the explain output here (default: a temporary file)")
    parser.add_argument("--variant", choices=["plain", "explain"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(_child(args)))
        return
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or str(Path(tmp) / "explain.jsonl")
        for variant in ("plain", "explain"):
            command = [sys.executable, __file__, "--variant", variant, "--out", out, "--nodes", str(args.nodes),
                       "--pods", str(args.pods), "--unschedulable-every", str(args.unschedulable_every),
                       "--filter", args.filter]
            proc = subprocess.run(command, capture_output=True, text=True, check=True)
            results[variant] = json.loads(proc.stdout.splitlines()[-1])
            r = results[variant]
            print(f"{variant:8s} {r['scheduled']} scheduled, {r['unschedulable']} unschedulable, "
                  f"{r['attempts']} attempts, {r['lines']} explain lines ({r['file_mib']:.0f} MiB) "
                  f"in {r['seconds']:.1f}s; peak RSS {r['peak_loaded_mib']:.0f} MiB loaded, "
                  f"{r['peak_mib']:.0f} MiB at the end", flush=True)
    ratio = results["explain"]["peak_mib"] / results["plain"]["peak_mib"]
    print(f"explain/plain peak RSS: {ratio:.2f}x (the issue's bound: 1.5x)")


if __name__ == "__main__":
    main()
