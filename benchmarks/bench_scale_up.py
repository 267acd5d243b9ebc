"""``simulate --scale-up`` at size: 5,000 nodes in 20 pools, 2,000 pending pods.

The cluster: 20 pools of 250 nodes (instance types from 2 to 96 cpu, 2 to 8 GiB of memory
per cpu, three zones; the two largest pools tainted for dedicated work), each node running
two DaemonSet pods and six application pods that leave it no cpu to speak of. The pending pods: 40
Deployments of 50 replicas (cpu from 250m to 6, memory from 512Mi to 24Gi), some with a
node selector on a pool or a zone, some tolerating the tainted pools, some spread one per
node by hostname anti-affinity, and one Deployment too large for any pool.

Timed apart: loading the snapshot into a ``Simulation`` and running it (what
``simulate`` does anyway), the scale-up's estimates (every pool's template check and
binpacking on the settled cluster, incremental: nodes and pods added to the scheduler's
cache and taken out again), and its check (real simulations of the settled cluster with
the chosen pool's new nodes, until the count is sufficient and minimal). Wall and CPU
seconds are printed; nothing is asserted.

    python benchmarks/bench_scale_up.py
    python benchmarks/bench_scale_up.py --nodes-per-pool 50 --pending 400 --profile /tmp/scale_up.prof
"""

from __future__ import annotations

import argparse
import cProfile
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    Timer,
    build_snapshot,
    dump_profile,
    make_node,
    make_pod,
    new_simulation,
    peak_rss_mib,
)

from kubesched.framework.config import default_config  # noqa: E402
from kubesched.planning.scale_up import ScaleUpSpec, plan_scale_up  # noqa: E402
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry  # noqa: E402

POOL_LABEL = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
DAEMONSET = {"apiVersion": "apps/v1", "kind": "DaemonSet", "controller": True}
# (cpu, GiB of memory per cpu): 20 pools
SHAPES = [(cpu, ratio) for cpu in (2, 4, 8, 16, 32) for ratio in (2, 4, 8)] + [(4, 2), (8, 4), (16, 8), (64, 4), (96, 8)]
TAINTED = {18, 19}  # the two largest pools, dedicated


def _pool_name(i: int) -> str:
    cpu, ratio = SHAPES[i]
    family = {2: "c", 4: "m", 8: "r"}[ratio]
    return f"{family}{i % 7}.{cpu}xlarge"


def _resources(cpu_milli: int, memory_mi: int) -> dict[str, Any]:
    return {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.9",
                            "resources": {"requests": {"cpu": f"{cpu_milli}m", "memory": f"{memory_mi}Mi"}}}]}


def _owned(pod: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": name,
                                           "uid": f"uid-{kind}-{name}", "controller": True}]
    return pod


def cluster(nodes_per_pool: int, pending: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    nodes: list[dict[str, Any]] = []
    bound: list[dict[str, Any]] = []
    for i in range(len(SHAPES)):
        cpu, ratio = SHAPES[i]
        pool = _pool_name(i)
        taints = [{"key": "dedicated", "value": pool, "effect": "NoSchedule"}] if i in TAINTED else None
        for n in range(nodes_per_pool):
            name = f"{pool}-{n:04d}"
            nodes.append(make_node(name, {POOL_LABEL: pool, ZONE: f"zone-{n % 3}"},
                                   {"cpu": str(cpu), "memory": f"{cpu * ratio}Gi", "pods": "110"}, taints))
            tolerate = {"tolerations": [{"operator": "Exists"}]}
            for ds, (milli, mem) in (("kube-proxy", (100, 128)), ("node-agent", (200, 256))):
                pod = make_pod(f"{ds}-{name}", "kube-system", spec={**_resources(milli, mem), **tolerate}, node_name=name)
                bound.append(_owned(pod, "DaemonSet", ds))
            # six application pods take the cpu the DaemonSets leave (less a few millicores)
            left = cpu * 1000 - 300
            per_pod = left // 6
            count = 6
            for k in range(count):
                mem = max(256, (cpu * ratio * 1024 * 8 // 10) // max(count, 1))
                pod = make_pod(f"app-{name}-{k}", "apps", spec={**_resources(per_pod, mem),
                                                                **(tolerate if i in TAINTED else {})},
                               node_name=name, labels={"app": f"filler-{i}"})
                bound.append(_owned(pod, "ReplicaSet", f"filler-{i}"))
    pending_pods: list[dict[str, Any]] = []
    deployments = 40
    per = max(1, pending // deployments)
    for d in range(deployments):
        cpu_milli = [250, 500, 1000, 1500, 2000, 3000, 4000, 6000][d % 8]
        memory_mi = [512, 1024, 2048, 4096, 8192, 16384, 24576][d % 7]
        spec: dict[str, Any] = _resources(cpu_milli, memory_mi)
        if d % 10 == 3:
            spec["nodeSelector"] = {POOL_LABEL: _pool_name(d % 18)}
        if d % 10 == 5:
            spec["nodeSelector"] = {ZONE: "zone-1"}
        if d % 10 == 7:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        if d % 10 == 9:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": f"web-{d}"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        if d == deployments - 1:
            spec = _resources(200_000, 1024)  # no pool has 200 cpu
        for r in range(per):
            pod = make_pod(f"web-{d}-{r:03d}", "shop", spec=spec, labels={"app": f"web-{d}"})
            pod["metadata"]["creationTimestamp"] = f"2026-01-01T{(d * per + r) // 3600:02d}:{(d * per + r) // 60 % 60:02d}:{(d * per + r) % 60:02d}Z"
            pending_pods.append(_owned(pod, "ReplicaSet", f"web-{d}"))
    return nodes, bound, pending_pods


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes-per-pool", type=int, default=250, help="nodes in each of the 20 pools (default 250)")
    parser.add_argument("--pending", type=int, default=2000, help="pending pods (default 2000)")
    parser.add_argument("--expander", default="least-waste", help="the expander chain (default least-waste)")
    parser.add_argument("--check-all-pools", action="store_true", help="check every pool's estimate by a simulation")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the scale-up (not the run) into FILE")
    args = parser.parse_args()

    started = time.perf_counter()
    nodes, bound, pending = cluster(args.nodes_per_pool, args.pending)
    snapshot = build_snapshot(nodes, bound, pending)
    print(f"cluster: {len(snapshot.nodes)} nodes in {len(SHAPES)} pools, {len(snapshot.bound_pods)} bound pods, "
          f"{len(snapshot.pending_pods)} pending pods (built in {time.perf_counter() - started:.1f} s)")
    registry = in_tree_registry()
    config = default_config(registry, UPSTREAM_ONLY)
    with Timer() as load:
        sim = new_simulation(snapshot, config, registry=registry)
    with Timer() as run:
        result = sim.run()
    print(f"simulate: load {load.seconds:.2f} s, run {run.seconds:.2f} s wall ({run.cpu_seconds:.2f} s CPU): "
          f"{len(result.scheduled)} scheduled, {len(result.unschedulable)} unschedulable")
    spec = ScaleUpSpec(expanders=tuple(args.expander.split(",")), check_all=args.check_all_pools)
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    with Timer() as scale:
        plan = plan_scale_up(sim, result, config, registry, spec, "heap", 0)
    if profiler is not None:
        profiler.disable()
        dump_profile(profiler, args.profile)
    check_seconds = plan.seconds - plan.estimate_seconds
    estimated = [p for p in plan.pools if p.estimate is not None and p.estimate.pods]
    print(f"scale-up: {scale.seconds:.2f} s wall ({scale.cpu_seconds:.2f} s CPU): estimates {plan.estimate_seconds:.2f} s "
          f"({len(estimated)} of {len(plan.pools)} pools take pods, {len(plan.pending)} pending), "
          f"check {check_seconds:.2f} s ({plan.simulations} simulation(s), "
          f"{check_seconds / max(plan.simulations, 1):.2f} s each)")
    answer = plan.answer
    if answer is not None:
        print(f"answer: {answer.node_count} node(s) of {answer.pool} place {len(answer.helped)} pod(s); "
              f"estimate {answer.estimated_nodes} node(s) for {len(answer.estimated_pods)} pod(s); "
              f"simulated {answer.probes}")
    print(f"pods no pool helps: {len(plan.no_pool)}; only other pools help: {len(plan.elsewhere)}")
    print(f"peak RSS {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
