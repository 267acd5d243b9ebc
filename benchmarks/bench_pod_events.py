"""CPU per pod of run's pod watch events, in one process: a pending pod's ADDED and the
MODIFIED echo of its binding, each decoded (``watch.decode_event``) and applied through the
pods informer run builds (``Informer.apply``, ``LiveScheduler``'s pod parsing, ``PodEvents``,
the scheduler's handlers, queue and cache).

Pods are upstream scheduler_perf's default template as the API server stores it (defaults,
``managedFields``); nodes are ``bench_live.py``'s real-shaped ones. Pods arrive 32 at a
time; between the ADDED and the echoes the scheduling cycles run and the binds complete
(not timed). Each batch is timed alone, and the lowest quarter is printed beside the mean,
which a shared machine's noise moves much less. For an A/B run each side's copy of this
script from its own tree (a ``git worktree`` of the old revision, with ``PYTHONPATH``)::

    python benchmarks/bench_pod_events.py --nodes 500 --pods 4000
"""

from __future__ import annotations

import argparse
import copy
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_live import real_shaped_node  # noqa: E402
from common import make_nodes, make_pods  # noqa: E402

from kubesched.clock import RealClock  # noqa: E402
from kubesched.cluster.kube.collector import YOUNG_THRESHOLD  # noqa: E402
from kubesched.cluster.kube.driver import POD_FIELD_SELECTOR, LiveScheduler  # noqa: E402
from kubesched.cluster.kube.handlers import PodEvents  # noqa: E402
from kubesched.cluster.kube.informer import Informer, Resource  # noqa: E402
from kubesched.cluster.kube.watch import decode_event  # noqa: E402
from kubesched.framework.config import default_config  # noqa: E402
from kubesched.objects.node import parse_node  # noqa: E402
from kubesched.objects.pod import PodInfo  # noqa: E402
from kubesched.plugins.registry import in_tree_registry  # noqa: E402
from kubesched.scheduler.factory import new_scheduler  # noqa: E402
from kubesched.scheduler.metrics import SchedulerMetrics  # noqa: E402

BATCH = 32
NOW = "2026-11-26T13:37:07Z"


class NoClient:
    """The cluster client: binds go through the direct binder; events and status are dropped."""

    def bind(self, pod: PodInfo, node_name: str) -> None:
        pass

    def update_pod_condition(self, *args: Any) -> None:
        pass

    def record_event(self, *args: Any, **kwargs: Any) -> None:
        pass


def stored(raw: dict[str, Any], index: int) -> dict[str, Any]:
    """The pod as the API server stores and watches it: uid, version, time, defaults, managedFields."""
    doc = copy.deepcopy(raw)
    meta = doc["metadata"]
    meta.update(uid=f"uid-{index}", resourceVersion=str(2 * index + 10), creationTimestamp=NOW,
                managedFields=[{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "time": NOW,
                                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:containers": {}, "f:priority": {}}}}])
    spec = doc["spec"]
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    doc["status"] = {"phase": "Pending", "qosClass": "Guaranteed"}
    return doc


def echo_of(doc: dict[str, Any], node: str) -> dict[str, Any]:
    """What the watch sends once ``pods/binding`` set the node."""
    bound = copy.deepcopy(doc)
    bound["metadata"]["resourceVersion"] = str(int(doc["metadata"]["resourceVersion"]) + 1)
    bound["spec"]["nodeName"] = node
    bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                      "lastTransitionTime": NOW}]
    return bound


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=4000)
    parser.add_argument("--warmup", type=int, default=256, help="pods before the measurement (default 256)")
    args = parser.parse_args(argv)

    registry = in_tree_registry()
    config = default_config(registry)
    metrics = SchedulerMetrics()
    binds: list[tuple[PodInfo, str, Any]] = []
    sched = new_scheduler(config, NoClient(), RealClock(), registry, metrics=metrics,
                          run_binding=lambda work, done: done(work()),
                          direct_binder=lambda pod, host, done: binds.append((pod, host, done)))
    for i, raw in enumerate(make_nodes(args.nodes)):
        sched.cache.add_node(parse_node(real_shaped_node(raw, i)))
    live = LiveScheduler(config, None, None, registry=registry, metrics=metrics)  # type: ignore[arg-type]
    live.scheduler = sched
    live._keep_raw = live._keep_raw_objects()
    # The pods informer as LiveScheduler.build makes it (its API client is never used here).
    informer: Informer[PodInfo] = Informer(None, Resource("/api/v1/pods", "Pod", field_selector=POD_FIELD_SELECTOR),  # type: ignore[arg-type]
                                           live._parse_pod, PodEvents(sched, live.wake), name="pods")
    documents = {f"uid-{i}": stored(raw, i) for i, raw in enumerate(make_pods(args.pods, prefix="pod-"))}
    order = list(documents.values())

    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 10, 10)
    added: list[float] = []
    echoes: list[float] = []
    for start in range(0, len(order), BATCH):
        lines = [orjson.dumps({"type": "ADDED", "object": doc}) for doc in order[start:start + BATCH]]
        began = time.perf_counter()
        for line in lines:
            event = decode_event(line)
            informer.apply(event.type, event.object)
        took = time.perf_counter() - began
        while sched.schedule_one():
            pass
        back = []
        for pod, host, done in binds:
            done(None)
            back.append(orjson.dumps({"type": "MODIFIED", "object": echo_of(documents[pod.uid], host)}))
        binds.clear()
        began = time.perf_counter()
        for line in back:
            event = decode_event(line)
            informer.apply(event.type, event.object)
        if start >= args.warmup:
            added.append(took / len(lines))
            echoes.append((time.perf_counter() - began) / max(len(back), 1))
    bound = sum(1 for pod in sched.cache.pods() if not sched.cache.is_assumed(pod))
    if len(added) < 4 or bound != len(order):
        print(f"too few batches measured, or echoes did not confirm the assumed pods ({bound} of {len(order)})")
        return 1

    def figures(samples: list[float]) -> str:
        return (f"mean {statistics.fmean(samples) * 1e6:.1f} us, lowest quarter "
                f"{statistics.quantiles(samples, n=4)[0] * 1e6:.1f} us")

    print(f"{args.nodes} nodes, {len(added) * BATCH} measured pods: ADDED {figures(added)}; "
          f"echo of the binding {figures(echoes)} (per pod, wall time of the batch)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
