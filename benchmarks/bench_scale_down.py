"""``simulate --scale-down`` at size: N nodes of 8 cpu, 1 to 8 pods each.

Every node runs 1 to 8 ReplicaSet pods of 250m, 500m or 1 cpu (seeded), so most are
below the 0.5 threshold and many are removable: the plan simulates one removal per
candidate, its pods scheduled elsewhere by the real scheduler (the default profile, name
tie-break), and keeps the moves of the removed ones. Timed apart: compiling the snapshot
and the plan (which loads it into its own simulation). Wall seconds are printed; nothing
is asserted.

    python benchmarks/bench_scale_down.py
    python benchmarks/bench_scale_down.py --nodes 200 --profile /tmp/scale_down.prof
"""

from __future__ import annotations

import argparse
import cProfile
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubesched.cluster.snapshot import snapshot_from_objects  # noqa: E402
from kubesched.framework.config import default_config  # noqa: E402
from kubesched.planning.scale_down import plan_scale_down  # noqa: E402
from kubesched.plugins.registry import in_tree_registry  # noqa: E402


def _node(name: str, zone: str) -> dict[str, Any]:
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "spec": {}, "status": {"allocatable": resources, "capacity": resources}}


def _pod(name: str, node: str, cpu: str, owner: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": owner},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                              "uid": f"uid-{owner}", "controller": True}]},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "app:1",
                                                      "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]},
            "status": {"phase": "Running"}}


def cluster(nodes: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        items.append(_node(f"n{i}", f"z{i % 3}"))
        for j in range(rng.randint(1, 8)):
            items.append(_pod(f"p{i}-{j}", f"n{i}", rng.choice(["250m", "500m", "1"]), f"rs{i % 50}"))
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the plan here")
    args = parser.parse_args()
    registry = in_tree_registry()
    kinds = frozenset(kind for _, kind in registry.object_kinds())
    items = cluster(args.nodes, args.seed)
    started = time.perf_counter()
    snapshot = snapshot_from_objects([("bench", obj) for obj in items], plugin_kinds=kinds, keep_raw_objects=True)
    loaded = time.perf_counter()
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    result = plan_scale_down(snapshot, default_config(registry), registry, tie_break="name")
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    planned = time.perf_counter()
    print(f"nodes={args.nodes} pods={len(snapshot.bound_pods)} snapshot={loaded - started:.2f}s "
          f"plan={planned - loaded:.2f}s removable={len(result.removable)} moved={len(result.destinations)} "
          f"kept={len(result.kept)}")


if __name__ == "__main__":
    main()
