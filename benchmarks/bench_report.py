"""`simulate --report` at scale: the decision page on SchedulingBasic (5,000 nodes, 1,000
running pods, 10,000 pending pods), against the same run without it.

    python benchmarks/bench_report.py [--nodes N] [--init-pods N] [--pods N] [--repeat K] [--keep DIR]

The snapshot is written once as a JSON List (what `kubectl get -o json` writes); then
`kubesched simulate SNAPSHOT -q --seed 1` runs as a separate process, alternately with
and without `--report`, ``--repeat`` times each (both sides on this machine, in this
run). Printed: each side's wall-clock time (median), their ratio (the issue's bound:
1.5x), the report's size, and, in this process, where the report's own time goes:
keeping each pod's decision during the run, and writing the page after it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import bind_round_robin, build_snapshot, make_nodes, make_pods  # noqa: E402

from kubesched.cli.decisions import DecisionLog  # noqa: E402
from kubesched.cluster.simulated import Simulation  # noqa: E402
from kubesched.framework.config import default_config  # noqa: E402
from kubesched.plugins.registry import in_tree_registry  # noqa: E402
from kubesched.cli.html_report import html_report  # noqa: E402
from kubesched.cli.summary import summarize  # noqa: E402

BOUND = 1.5  # the issue's: the run with --report at most 1.5x the run without it


def objects(nodes: int, init_pods: int, pods: int) -> tuple[list[dict], list[dict], list[dict]]:
    node_objs = make_nodes(nodes)
    bound = bind_round_robin(make_pods(init_pods, prefix="init-pod-", namespace="namespace-1"), node_objs)
    pending = make_pods(pods, prefix="pod-", namespace="namespace-2")
    return node_objs, bound, pending


def write_snapshot(path: Path, node_objs: list[dict], bound: list[dict], pending: list[dict]) -> None:
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("namespace-1", "namespace-2")]
    path.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": [*namespaces, *node_objs, *bound, *pending]}))


def cli_seconds(snapshot: Path, report: Path | None) -> float:
    command = [sys.executable, "-m", "kubesched", "simulate", str(snapshot), "-q", "--seed", "1"]
    if report is not None:
        command += ["--report", str(report)]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def in_process(node_objs: list[dict], bound: list[dict], pending: list[dict]) -> tuple[float, float, float, int]:
    """(run without decisions, run keeping decisions, writing the page, page bytes), in seconds."""
    registry = in_tree_registry()
    config = default_config(registry)
    plain = Simulation(build_snapshot(node_objs, bound, pending), config, registry, tie_break="name")
    started = time.perf_counter()
    plain.run()
    plain_seconds = time.perf_counter() - started
    log = DecisionLog()
    sim = Simulation(build_snapshot(node_objs, bound, pending), config, registry, tie_break="name", on_attempt=log)
    started = time.perf_counter()
    result = sim.run()
    kept_seconds = time.perf_counter() - started
    started = time.perf_counter()
    page = html_report(summarize(sim, result, "SchedulingBasic", "name", None), log.decisions)
    page_seconds = time.perf_counter() - started
    return plain_seconds, kept_seconds, page_seconds, len(page)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--init-pods", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3, help="command runs per side (alternating)")
    parser.add_argument("--keep", metavar="DIR", help="keep the snapshot and the report here")
    args = parser.parse_args(argv)
    node_objs, bound, pending = objects(args.nodes, args.init_pods, args.pods)
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(args.keep) if args.keep else Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        snapshot, report = directory / "scheduling-basic.json", directory / "report.html"
        write_snapshot(snapshot, node_objs, bound, pending)
        print(f"SchedulingBasic: {args.nodes} nodes, {args.init_pods} running pods, {args.pods} pending pods "
              f"({snapshot.stat().st_size / 2**20:.1f} MiB snapshot)", flush=True)
        without, with_report = [], []
        for _ in range(args.repeat):
            without.append(cli_seconds(snapshot, None))
            with_report.append(cli_seconds(snapshot, report))
        size = report.stat().st_size
    plain, kept, page, page_bytes = in_process(node_objs, bound, pending)
    a, b = statistics.median(without), statistics.median(with_report)
    print(f"simulate -q:           {a:.2f} s (median of {args.repeat}: {', '.join(f'{s:.2f}' for s in without)})")
    print(f"simulate -q --report:  {b:.2f} s (median of {args.repeat}: {', '.join(f'{s:.2f}' for s in with_report)})")
    print(f"ratio: {b / a:.2f}x (bound {BOUND}x): {'ok' if b / a <= BOUND else 'OVER'}")
    print(f"report: {size / 2**20:.2f} MiB")
    print(f"in this process: run {plain:.2f} s; run keeping every decision {kept:.2f} s (+{kept - plain:.2f} s); "
          f"writing the page {page:.2f} s ({page_bytes / 2**20:.2f} MiB)")
    return 0 if b / a <= BOUND else 1


if __name__ == "__main__":
    raise SystemExit(main())
