"""Cost of scoring DRA-backed extended resources in NodeResourcesFit and BalancedAllocation.

    python benchmarks/bench_dra_scoring.py [--nodes 5000] [--devices 8] [--pods 200]

A cluster shaped like upstream scheduler_perf's extended-resource workload: ``--nodes`` nodes
without the resource in their allocatable, one ResourceSlice of ``--devices`` GPUs per node, a
DeviceClass with a driver selector and ``extendedResourceName``, a quarter of the devices held
by claims. The DRA manager is built first (it parses the objects; DynamicResources' does that
at start-up, not in a cycle). Printed, in CPU microseconds per pod (PreScore + Score over every node, both plugins):

* ``cpu/memory``: the default scoring resources (DRA never looked at), for reference;
* ``dra cold``: the scoring resources list the GPU resource, first pod (each node's devices
  gathered, the class selector evaluated through the CEL result cache);
* ``dra warm``: later pods, same slices and allocations (the per-node device lists kept);
* ``dra after an allocation``: a claim added before each pod (the allocated counts of that
  node's rows counted again, followed through the allocated state's change log);
* ``dra after a slice change``: one node's slice replaced before each pod (every node's device
  list gathered again from the per-slice selections, which are kept for unchanged slices);
* ``dra with one in flight``: a Reserve'd allocation not yet written (the manager hands each
  cycle a fresh copy of the allocated state, so every row's allocated count is counted again).

Compare only figures from one run; on a shared machine run it when it is quiet.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

_ROOT = Path(__file__).resolve().parent.parent
try:
    import kubesched  # noqa: F401
except ImportError:
    sys.path.insert(0, str(_ROOT))

from kubesched.cache.cache import Cache  # noqa: E402
from kubesched.clock import VirtualClock  # noqa: E402
from kubesched.framework.cycle_state import CycleState  # noqa: E402
from kubesched.objects.node import parse_node  # noqa: E402
from kubesched.objects.pod import PodInfo, parse_pod  # noqa: E402
from kubesched.plugins.dynamicresources.names import PLURALS  # noqa: E402
from kubesched.plugins.noderesources import balanced_allocation, fit  # noqa: E402
from kubesched.plugins.noderesources.dra_totals import dra_manager_of  # noqa: E402
from kubesched.scheduler.handle import HandleHub  # noqa: E402

API = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"
GPU = "example.com/gpu"


def _node(name: str) -> dict[str, Any]:
    alloc = {"cpu": "32", "memory": "256Gi", "pods": "110"}
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": alloc, "capacity": alloc}}


def _slice(name: str, devices: int) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(devices)]}}


def _claim(name: str, node: str, device: int) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "r", "driver": DRIVER, "pool": node, "device": f"gpu-{device}"}]}}}}


def _pod(i: int) -> PodInfo:
    return parse_pod({"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"uid-p{i}"},
                      "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {
                          "cpu": "1", "memory": "4Gi", GPU: "1"}}}]}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--pods", type=int, default=200)
    opts = parser.parse_args()

    cache = Cache()
    handle = HandleHub(cache, VirtualClock(), None).handle("default-scheduler")
    names = [f"node-{i}" for i in range(opts.nodes)]
    for name in names:
        cache.add_node(parse_node(_node(name)))

    def add(obj: dict[str, Any]) -> None:
        handle.object_store(API, obj["kind"], PLURALS[obj["kind"]]).upsert(obj)

    add({"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"extendedResourceName": GPU, "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    for name in names:
        add(_slice(name, opts.devices))
    held = 0
    for n, name in enumerate(names):
        for d in range(opts.devices // 4):
            add(_claim(f"held-{n}-{d}", name, d))
            held += 1

    start = time.process_time()
    dra_manager_of(handle)  # the DRA manager: parses the objects (DynamicResources' does this at start-up)
    built = time.process_time() - start
    snapshot = cache.snapshot()
    rows = np.asarray(snapshot.table.order, dtype=np.int64)
    pods = [_pod(i) for i in range(opts.pods)]
    resources = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 1}]

    def plugins(with_gpu: bool) -> list[Any]:
        listed = resources if with_gpu else resources[:2]
        return [fit.new(fit.parse_args({"scoringStrategy": {"type": "LeastAllocated", "resources": listed}}), handle),
                balanced_allocation.new(balanced_allocation.parse_args({"resources": listed}), handle)]

    def cycle(scorers: list[Any], pod: PodInfo) -> float:
        start = time.process_time()
        for plugin in scorers:
            state = CycleState()
            plugin.pre_score(state, pod, snapshot, rows)
            plugin.score_nodes(state, pod, snapshot, rows)
        return time.process_time() - start

    print(f"{opts.nodes} nodes x {opts.devices} devices, {held} devices held; DRA manager built in {built:.2f} CPU s")
    print("CPU us per pod (Fit + BalancedAllocation, PreScore + Score over every node)")
    default = plugins(False)
    cycle(default, pods[0])
    base = min(cycle(default, p) for p in pods)
    print(f"  cpu/memory                 {base * 1e6:10.0f}")
    dra = plugins(True)
    print(f"  dra cold                   {cycle(dra, pods[0]) * 1e6:10.0f}")
    print(f"  dra warm                   {min(cycle(dra, p) for p in pods[1:]) * 1e6:10.0f}")
    spent = []
    for i, p in enumerate(pods[1:20]):
        add(_claim(f"new-{i}", names[i], opts.devices - 1))
        spent.append(cycle(dra, p))
    print(f"  dra after an allocation    {min(spent) * 1e6:10.0f}")
    spent = []
    for i, p in enumerate(pods[20:30]):
        add(_slice(names[i], opts.devices + 1))  # a driver republishes one node's slice
        spent.append(cycle(dra, p))
    print(f"  dra after a slice change   {min(spent) * 1e6:10.0f}")
    manager = dra_manager_of(handle)
    pending = manager.parse_claim(_claim("in-flight", names[-1], opts.devices - 1))
    manager.signal_pending_allocation("uid-in-flight", pending)
    cycle(dra, pods[0])
    print(f"  dra with one in flight     {min(cycle(dra, p) for p in pods[30:40]) * 1e6:10.0f}")
    manager.remove_pending_allocation("uid-in-flight")


if __name__ == "__main__":
    main()
