"""The scheduling cycle as ``kubesched run`` executes it, in one process, without an API server.

``bench_live.py`` measures the whole live process, whose CPU per pod mixes the scheduling
cycle with HTTP, JSON and the event loop, and wanders by 15% from run to run on a shared
machine. This script isolates the cycle: a scheduler built as the live driver builds it
(``new_scheduler`` with ``SchedulerMetrics``, so every extension point is timed and
``plugin_evaluation_total`` counted; a direct binder, so PreBind's pre-flight and the
Bind point's timing run as in ``run``), on ``bench_live.py``'s real-shaped nodes and
upstream scheduler_perf's default pod template, all pods pending at once (the backlog
mode). Cycles run 32 at a time, as the live driver runs them between I/O; then the binds
complete and each bound pod comes back as the informer's update (a fresh parse of its
document, as the informer's).

It prints the CPU time per cycle of ``Scheduler.schedule_one`` alone and with the binding
completions and informer updates. For an A/B that the machine's noise does not blur, run
it under callgrind with ``--callgrind``: the counters are zeroed after the warm-up cycles
(one-time index builds and first row-cache fills) and dumped at the end, so the dump's
total divided by the measured cycles it prints is the instructions per cycle::

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cycle.out \\
        python benchmarks/bench_cycle.py --nodes 5000 --pods 600 --callgrind
    # total of the dump written at the end (the largest-numbered /tmp/cycle.out.N) / measured cycles

(use the interpreter's real path, not a shell shim, so that valgrind traces Python). The
script imports the kubesched of the tree it sits in: for an A/B, run each side's copy
from its own tree (a ``git worktree`` of the old revision).
The collector runs as in ``run`` after its first sync: what was loaded is frozen, young
collections every ``YOUNG_THRESHOLD`` allocations.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_live import real_shaped_node  # noqa: E402
from common import make_nodes, make_pods  # noqa: E402

from kubesched.clock import RealClock  # noqa: E402
from kubesched.cluster.kube.collector import YOUNG_THRESHOLD  # noqa: E402
from kubesched.framework.config import default_config  # noqa: E402
from kubesched.framework.status import Status  # noqa: E402
from kubesched.objects.node import parse_node  # noqa: E402
from kubesched.objects.pod import PodInfo, parse_pod  # noqa: E402
from kubesched.plugins.registry import in_tree_registry  # noqa: E402
from kubesched.scheduler.factory import new_scheduler  # noqa: E402
from kubesched.scheduler.metrics import SchedulerMetrics  # noqa: E402

CYCLES_PER_TURN = 32  # as the live driver's _CYCLES_PER_TURN


class NoClient:
    """The cluster client: binds go through the direct binder; events and status are dropped."""

    def bind(self, pod: PodInfo, node_name: str) -> None:
        pass

    def update_pod_condition(self, pod: PodInfo, reason: str, message: str, nominated_node_name: str | None) -> None:
        pass

    def record_event(self, *args: Any, **kwargs: Any) -> None:
        pass


def callgrind_control(option: str) -> None:
    subprocess.run(["callgrind_control", option, str(os.getpid())], check=False, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--warmup", type=int, default=96, help="cycles before the measurement (default 96)")
    parser.add_argument("--callgrind", action="store_true",
                        help="zero callgrind's counters after the warm-up and dump them at the end")
    args = parser.parse_args(argv)

    registry = in_tree_registry()
    pending: list[tuple[PodInfo, str, Any]] = []
    sched = new_scheduler(default_config(registry), NoClient(), RealClock(), registry, metrics=SchedulerMetrics(),
                          run_binding=lambda work, done: done(work()),
                          direct_binder=lambda pod, host, done: pending.append((pod, host, done)))
    for i, raw in enumerate(make_nodes(args.nodes)):
        sched.cache.add_node(parse_node(real_shaped_node(raw, i)))
    documents = make_pods(args.pods, prefix="pod-")
    for raw in documents:
        raw["metadata"].setdefault("uid", raw["metadata"]["name"])
        sched.on_pod_add(parse_pod(raw, keep_raw=True))

    def complete() -> None:
        """The binds answer, then the informer hands back each bound pod."""
        for pod, host, done in pending:
            status: Status | None = None
            done(status)
            raw = pod.raw or {}
            bound = parse_pod({**raw, "spec": {**raw.get("spec", {}), "nodeName": host}})
            sched.on_pod_update(pod.copy_with(node_name=""), bound)
        pending.clear()

    def turn() -> int:
        ran = 0
        while ran < CYCLES_PER_TURN and sched.schedule_one():
            ran += 1
        return ran

    gc.collect()
    gc.freeze()
    saved = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, saved[1], saved[2])
    warm = 0
    while warm < args.warmup:
        ran = turn()
        complete()
        if not ran:
            break
        warm += ran
    if args.callgrind:
        callgrind_control("-z")
    cycles = 0
    cycle_cpu = 0.0
    started = time.process_time()
    while True:
        before = time.process_time()
        ran = turn()
        cycle_cpu += time.process_time() - before
        cycles += ran
        if not ran and not pending:
            break
        complete()
    total_cpu = time.process_time() - started
    if args.callgrind:
        callgrind_control("-d")
    gc.set_threshold(*saved)
    if not cycles:
        print("no cycle measured: raise --pods above --warmup")
        return 1
    print(f"{args.nodes} nodes, {cycles} measured cycles (after {warm} warm-up): "
          f"schedule_one {cycle_cpu / cycles * 1e3:.4f} ms CPU per cycle, "
          f"{total_cpu / cycles * 1e3:.4f} ms with binding completions and informer updates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
