"""`simulate --kubeconfig`: taking the snapshot from an API server, at 5,000 nodes and 50,000 pods.

    python benchmarks/bench_live_snapshot.py [--nodes N] [--pods N] [--pending N] [--plain-http]

The test API server runs in its own process (TLS, verified through the kubeconfig, as
against a real cluster) with real-shaped nodes (a kubelet's status: conditions,
addresses, images; ``bench_live.real_shaped_node``) and ``pod-default`` pods, all but
``--pending`` of them bound round-robin. Printed:

* the snapshot itself, in this process (``live_snapshot.take_snapshot``: the live
  mode's paginated LISTs of every kind the default profile reads, each object compiled
  as it arrives): seconds, objects per second, LIST requests;
* the whole command, `kubesched simulate --kubeconfig KC -q --save FILE` in a process of
  its own: wall-clock seconds (start-up, snapshot, scheduling the pending pods, the
  summary) and the size of the saved snapshot.

The server is kubesched's Python test server (in memory, no etcd), so absolute times
are bounded by it; a real kube-apiserver serves LIST pages faster.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_live import PYC_ENV, ROOT, APIServerProcess, real_shaped_node, warm_bytecode  # noqa: E402
from common import bind_round_robin, make_nodes, make_pods  # noqa: E402

from kubesched.cluster.kube.connection import load_connection  # noqa: E402
from kubesched.cluster.live_snapshot import PAGE_SIZE, listed_kinds, take_snapshot  # noqa: E402
from kubesched.framework.config import default_config  # noqa: E402
from kubesched.plugins.registry import in_tree_registry  # noqa: E402


def cluster_objects(nodes: int, pods: int, pending: int) -> list[dict]:
    node_objs = [real_shaped_node(n, i) for i, n in enumerate(make_nodes(nodes))]
    bound = bind_round_robin(make_pods(pods - pending, prefix="running-", namespace="namespace-1"), node_objs)
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("namespace-1", "namespace-2")]
    return [*namespaces, *node_objs, *bound, *make_pods(pending, prefix="pending-", namespace="namespace-2")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000, help="pods in the cluster, bound and pending")
    parser.add_argument("--pending", type=int, default=1000, help="of them, pending (not bound)")
    parser.add_argument("--plain-http", action="store_true", help="serve plain HTTP instead of TLS")
    args = parser.parse_args(argv)
    warm_bytecode()
    objects = cluster_objects(args.nodes, args.pods, args.pending)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        started = time.perf_counter()
        server = APIServerProcess(objects, work, tls=not args.plain_http)
        print(f"test API server: {args.nodes} nodes, {args.pods} pods ({args.pending} pending) loaded in "
              f"{time.perf_counter() - started:.1f} s", flush=True)
        try:
            registry = in_tree_registry()
            kinds = listed_kinds(default_config(registry), registry)
            conn = load_connection(server.kubeconfig, qps=200.0, burst=400)
            cpu = time.process_time()
            taken = take_snapshot(conn, kinds, "bench", plugin_kinds=frozenset(k for _, k in registry.object_kinds()))
            cpu = time.process_time() - cpu
            listed = sum(taken.counts.values())
            pages = sum(max(1, -(-count // PAGE_SIZE)) for count in taken.counts.values())
            print(f"snapshot (this process): {taken.seconds:.2f} s for {listed} objects of {len(taken.counts)} kinds "
                  f"in {pages} LIST pages of {PAGE_SIZE} ({listed / taken.seconds:,.0f} objects/s); "
                  f"{len(taken.snapshot.nodes)} nodes, {len(taken.snapshot.bound_pods)} bound and "
                  f"{len(taken.snapshot.pending_pods)} pending pods compiled; this process's CPU {cpu:.2f} s "
                  "(the rest is the server's)", flush=True)
            saved = work / "snapshot.json"
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kubesched", "simulate", "--kubeconfig", server.kubeconfig, "-q",
                            "--save", str(saved)], check=True, cwd=ROOT, env=PYC_ENV, stdout=subprocess.DEVNULL)
            print(f"kubesched simulate --kubeconfig -q --save: {time.perf_counter() - started:.2f} s in all "
                  f"(start-up, snapshot, scheduling {args.pending} pending pods, summary); "
                  f"saved snapshot {saved.stat().st_size / 2**20:.1f} MiB")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
