"""The cost of per-node plugins: SchedulingBasic with the tutorial's Filter and Score plugins.

    python benchmarks/bench_sdk.py [--variant default|tutorial|both] [--repeat N]
                                   [--nodes N] [--init-pods N] [--pods N] [--profile FILE]

upstream scheduler_perf's SchedulingBasic (``misc/performance-config.yaml``,
5000Nodes_10000Pods: 5,000 ``node-default`` nodes, 1,000 ``pod-default`` pods already
running, 10,000 measured; built exactly as ``bench_core.py`` builds it) in two variants,
run one after the other in this process:

* ``default``: the default profile (``bench_core.py``'s figure);
* ``tutorial``: the default profile plus the tutorial's per-node plugins
  (``examples/tutorial``), enabled through ``multiPoint``: ``NodePool``, a Filter with only
  the per-node form (``filter(state, pod, node_info)``), and ``FewestPods``, a Score with
  only the per-node form (``score(state, pod, node_info)``), weight 1. The benchmark's pods
  carry no pool label, so NodePool passes every node: what is measured is the price of
  calling a Python function per node, the framework's part of a per-node plugin.

The issue's target for the ``tutorial`` variant is 1,000 pods/s on the 2-core development
machine. A second, untimed run of 1,000 pods counts how many nodes each per-node plugin
is asked about per pod (``--no-count-calls`` to skip it).

Only ``Simulation.run`` is timed, as in ``bench_core.py``. Both variants share one process,
so the peak RSS printed for the second includes the first.
"""

from __future__ import annotations

import contextlib
import cProfile
import functools
import sys
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
TUTORIAL = Path(__file__).resolve().parent.parent / "examples" / "tutorial"
sys.path.insert(0, str(TUTORIAL))

import common  # noqa: E402
from bench_core import WORKLOADS, build_basic  # noqa: E402
from common import (  # noqa: E402
    WorkloadResult,
    benchmark_parser,
    report_run,
    run_workload,
    write_results_json,
)

from kubesched.framework import CycleState, Handle, PluginSpec, Status  # noqa: E402
from kubesched.framework.config import SchedulerConfig, parse_config  # noqa: E402
from kubesched.framework.loader import load_plugins  # noqa: E402
from kubesched.framework.registry import Registry  # noqa: E402
from kubesched.objects import NodeInfo, PodInfo  # noqa: E402
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry  # noqa: E402

WORKLOAD = "SchedulingBasic"
TUTORIAL_PLUGINS = ("node_pool:spec", "fewest_pods:spec")
TUTORIAL_TARGET = 1000  # pods/s: the target with the per-node plugins
UPSTREAM = "270 pods/s (v1.36.2), 680 (main)"

TUTORIAL_PROFILE = {
    "schedulerName": "default-scheduler",
    "plugins": {"multiPoint": {"enabled": [{"name": "NodePool"}, {"name": "FewestPods", "weight": 1}]}},
}


def tutorial_registry(extra: tuple[str, ...] = TUTORIAL_PLUGINS) -> Registry:
    """The in-tree plugins plus the tutorial's, loaded as ``--plugin module:spec`` loads them."""
    return load_plugins(in_tree_registry(), extra, use_entry_points=False)


def tutorial_config(registry: Registry) -> SchedulerConfig:
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [TUTORIAL_PROFILE]}
    return parse_config(raw, registry, UPSTREAM_ONLY)


@contextlib.contextmanager
def simulations_with(registry: Registry) -> Iterator[None]:
    """Make ``common.run_workload`` build its Simulation with ``registry`` (it takes a config
    but no registry, and a config naming out-of-tree plugins needs their registry)."""
    original = common.new_simulation
    common.new_simulation = functools.partial(original, registry=registry)
    try:
        yield
    finally:
        common.new_simulation = original


# -- counting the per-node calls (an untimed run) ------------------------------------
class _Counter:
    def __init__(self) -> None:
        self.calls = 0


class CountingFilter:
    def __init__(self, inner: Any, counter: _Counter) -> None:
        self.name = inner.name
        self._inner = inner
        self._counter = counter

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        self._counter.calls += 1
        result: Status | None = self._inner.filter(state, pod, node)
        return result


class CountingScore:
    def __init__(self, inner: Any, counter: _Counter) -> None:
        self.name = inner.name
        self._inner = inner
        self._counter = counter

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        self._counter.calls += 1
        result: int = self._inner.score(state, pod, node)
        return result


def count_calls(nodes: int, init_pods: int, pods: int, seed: int) -> dict[str, float]:
    """Per-node calls per scheduled pod of each tutorial plugin, over ``pods`` pods."""
    base = tutorial_registry()
    counters = {"NodePool": _Counter(), "FewestPods": _Counter()}
    wrappers = {"NodePool": CountingFilter, "FewestPods": CountingScore}
    registry = Registry([s for s in base.specs() if s.name not in counters], base.defaults, base.unimplemented)
    for name, counter in counters.items():
        spec = base.get(name)
        assert spec is not None

        def factory(args: object, handle: Handle, spec: PluginSpec[object] = spec, counter: _Counter = counter,
                    wrap: Any = wrappers[name]) -> Any:
            return wrap(spec.build(args, handle), counter)

        registry.register(PluginSpec(name, factory))
    with simulations_with(registry):
        result = run_workload(f"{WORKLOAD} (counting calls)", build_basic(nodes, init_pods, pods),
                              config=tutorial_config(registry), seed=seed)
    done = max(1, result.scheduled)
    return {name: counter.calls / done for name, counter in counters.items()}


# -- main -----------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__, [WORKLOAD])
    parser.add_argument("--variant", choices=["default", "tutorial", "both"], default="both",
                        help="the default profile, with the tutorial's per-node plugins, or both (default)")
    parser.add_argument("--no-count-calls", action="store_true", help="skip the untimed run that counts per-node calls")
    args = parser.parse_args(argv)
    if args.trace_memory:
        parser.error("--trace-memory: use bench_core.py; this benchmark compares throughput")

    import kubesched

    print(f"kubesched from {Path(kubesched.__file__).parent}", flush=True)
    (d_nodes, d_init, d_pods), (up_old, up_main), core_target = WORKLOADS[WORKLOAD]
    nodes = args.nodes if args.nodes is not None else d_nodes
    init = args.init_pods if args.init_pods is not None else d_init
    pods = args.pods if args.pods is not None else d_pods
    at_size = (nodes, init, pods) == (d_nodes, d_init, d_pods)
    registry = tutorial_registry()
    variants = ["default", "tutorial"] if args.variant == "both" else [args.variant]
    print(f"target with the tutorial's per-node Filter and Score: >= {TUTORIAL_TARGET} pods/s "
          f"(the issue's, on the 2-core development machine); upstream threshold {UPSTREAM}", flush=True)

    results: list[WorkloadResult] = []
    by_variant: dict[str, list[WorkloadResult]] = {v: [] for v in variants}
    failed = False
    for run in range(args.repeat):
        for variant in variants:
            profiler = cProfile.Profile() if args.profile else None
            name = f"{WORKLOAD} [{variant}]"
            build = build_basic(nodes, init, pods)
            if variant == "default":
                result = run_workload(name, build, tie_break=args.tie_break, seed=args.seed, profiler=profiler)
                target = core_target
            else:
                with simulations_with(registry):
                    result = run_workload(name, build, config=tutorial_config(registry), tie_break=args.tie_break,
                                          seed=args.seed, profiler=profiler)
                target = TUTORIAL_TARGET
            profile_name = f"{args.profile}.{variant}.{run}" if args.profile else ""
            report_run(result, args, profiler, profile_name, at_size, UPSTREAM, target, "tottime")
            failed = failed or bool(result.unschedulable)
            results.append(result)
            by_variant[variant].append(result)

    if len(variants) == 2 and not args.profile:
        base = _median([r.pods_per_second for r in by_variant["default"]])
        with_plugins = _median([r.pods_per_second for r in by_variant["tutorial"]])
        per_pod_us = (1 / with_plugins - 1 / base) * 1e6
        print(f"tutorial per-node plugins: {with_plugins:,.0f} vs {base:,.0f} pods/s (median of {args.repeat}); "
              f"they add {per_pod_us:,.0f} us per pod ({with_plugins / base:.0%} of the default throughput)")
    if not args.no_count_calls and "tutorial" in variants and not args.profile:
        counted = min(pods, 1000)
        calls = count_calls(nodes, init, counted, args.seed)
        print(f"per-node calls per pod (untimed run of {counted} pods): "
              + ", ".join(f"{name} {n:,.0f}" for name, n in calls.items())
              + f" of {nodes} nodes")
    if args.json:
        write_results_json(args.json, results)
    return 1 if failed else 0


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


if __name__ == "__main__":
    sys.exit(main())
