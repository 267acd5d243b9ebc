"""Cost of DRA device selectors (CEL) and of the structured allocator per node.

    python benchmarks/bench_dra_cel.py [--nodes 5000] [--devices 8]

What it measures, on a cluster shaped like upstream scheduler_perf's DRA workloads (one
ResourceSlice per node, ``--devices`` GPUs each; a DeviceClass with a driver selector; a claim
with one request that adds a request selector):

* compile: microseconds to compile one selector (done once per expression, then cached), the
  engine already loaded; of which the analysis upstream's compiler does besides parsing (type
  check and worst-case cost estimate, ``cel.frontend.analyze``);
* engine evaluation: microseconds per selector evaluation by the CEL engine (the result cache
  bypassed): the class selector (string comparisons) and the request selector (quantity and
  semver library calls, which call back into Python);
* ``device_matches``: microseconds per call through the result cache, which is keyed by what the
  expression reads (driver and the attributes/capacities it names): devices that differ only in
  attributes it does not read (uuid, index) share one evaluation;
* allocate: microseconds per ``Allocator.allocate`` call for one node, cold (first pod, every
  selector evaluated) and warm (a later pod), over all nodes.

Timings are wall clock in one process; on a shared machine run it when it is quiet, and compare
only figures from the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
try:
    import kubesched  # noqa: F401
except ImportError:
    sys.path.insert(0, str(_ROOT))

from kubesched.objects.dra import DeviceClass, ResourceSlice, parse_device_class, parse_resource_claim, parse_resource_slice  # noqa: E402
from kubesched.objects.node import parse_node  # noqa: E402
from kubesched.cel import CelCache  # noqa: E402
from kubesched.cel.frontend import analyze  # noqa: E402
from kubesched.structured import AllocatedState, Allocator, Features, SliceIndex  # noqa: E402

DRIVER = "gpu.example.com"
CLASS_SELECTOR = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].type == "gpu"'
REQUEST_SELECTOR = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0 && device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("1.5.0"))'


def make_slice(node: str, devices: int, unique: bool) -> ResourceSlice:
    return parse_resource_slice(
        {
            "metadata": {"name": f"{node}-gpu"},
            "spec": {
                "driver": DRIVER,
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"gpu-{i}",
                        "attributes": {
                            "type": {"string": "gpu"},
                            "index": {"int": i},
                            "driverVersion": {"version": "2.1.0"},
                            "uuid": {"string": f"GPU-{node}-{i}" if unique else f"GPU-{i}"},
                        },
                        "capacity": {"memory": {"value": "80Gi"}},
                    }
                    for i in range(devices)
                ],
            },
        }
    )


def per_call_us(seconds: float, calls: int) -> float:
    return seconds / max(calls, 1) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--devices", type=int, default=8)
    args = parser.parse_args()

    expressions = [CLASS_SELECTOR, REQUEST_SELECTOR] + [f'device.attributes["{DRIVER}"].index == {i}' for i in range(50)]
    CelCache().get_or_compile("true")  # loads the engine
    start = time.perf_counter()
    cache = CelCache()
    for expression in expressions:
        cache.get_or_compile(expression)
    compile_us = per_call_us(time.perf_counter() - start, len(expressions))
    start = time.perf_counter()
    for expression in expressions:
        analyze(expression)
    analysis_us = per_call_us(time.perf_counter() - start, len(expressions))

    # Engine evaluation, the result cache bypassed (``evaluate``), on distinct devices.
    unique_devices = [d for n in range(max(args.nodes // 10, 1)) for d in make_slice(f"node-{n}", args.devices, True).devices]
    fresh = CelCache()
    compiled = [fresh.get_or_compile(CLASS_SELECTOR), fresh.get_or_compile(REQUEST_SELECTOR)]
    engine_us = []
    for selector in compiled:
        start = time.perf_counter()
        for device in unique_devices:
            selector.evaluate(DRIVER, device)
        engine_us.append(per_call_us(time.perf_counter() - start, len(unique_devices)))
    # Through the cache: a selector's outcome is shared by devices that look alike to it.
    start = time.perf_counter()
    calls = 0
    for _ in range(5):
        for device in unique_devices:
            compiled[1].device_matches(DRIVER, device)
            calls += 1
    cached_us = per_call_us(time.perf_counter() - start, calls)

    # The allocator over every node: identical machines (devices equal but for their name).
    nodes = [parse_node({"metadata": {"name": f"node-{n}", "labels": {"kubernetes.io/hostname": f"node-{n}"}}}) for n in range(args.nodes)]
    index = SliceIndex([make_slice(node.name, args.devices, False) for node in nodes])
    device_class: DeviceClass = parse_device_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": CLASS_SELECTOR}}]}})

    class Lister:
        def get(self, name: str) -> DeviceClass | None:
            return device_class if name == "gpu" else None

    claim = parse_resource_claim(
        {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": REQUEST_SELECTOR}}]}}]}}}
    )
    timings = []
    allocator_cache = CelCache()
    state = AllocatedState()  # one state for the cluster, as the plugin keeps it
    features = Features()
    for _ in range(2):
        allocator = Allocator(features, state, Lister(), index, allocator_cache)
        start = time.perf_counter()
        for node in nodes:
            if allocator.allocate(node, [claim]) is None:
                raise SystemExit(f"no allocation on {node.name}")
        timings.append(per_call_us(time.perf_counter() - start, len(nodes)))

    print(f"nodes={args.nodes} devices/node={args.devices}")
    print(f"compile:                             {compile_us:9.1f} us per expression ({len(expressions)} expressions)")
    print(f"  of which type check and cost:      {analysis_us:9.1f} us per expression")
    print(f"worst-case cost (cel-go's estimate):  class selector {compiled[0].max_cost}, request selector {compiled[1].max_cost} (limit 1,000,000)")
    print(f"engine evaluation, class selector:   {engine_us[0]:9.1f} us per evaluation (no callbacks)")
    print(f"engine evaluation, request selector: {engine_us[1]:9.1f} us per evaluation (quantity and semver calls)")
    print(f"device_matches (result cache):       {cached_us:9.2f} us per call ({len(unique_devices)} devices with distinct uuids)")
    print(f"allocate, first pod (cold):          {timings[0]:9.1f} us per node")
    print(f"allocate, later pod (warm):          {timings[1]:9.1f} us per node")


if __name__ == "__main__":
    main()
