"""The pod-group metrics (upstream's podgroup_schedule_attempts_total,
podgroup_scheduling_attempt_duration_seconds and podgroup_scheduling_algorithm_duration_seconds):
registered only with GenericWorkload, as upstream's, and recorded once per pod-group cycle
with the cycle's result."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.features import Features
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.metrics import SchedulerMetrics
from tests.helpers import make_node

from .podgroup_support import group, member

NAMES = ("scheduler_podgroup_schedule_attempts_total", "scheduler_podgroup_scheduling_attempt_duration_seconds",
         "scheduler_podgroup_scheduling_algorithm_duration_seconds")


def scheduler(gates: dict[str, bool], metrics: SchedulerMetrics):  # type: ignore[no-untyped-def]
    registry = in_tree_registry(Features.from_gates(gates))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    sched = new_scheduler(config, SimulatedCluster(clock), clock, registry, metrics=metrics)
    sched.on_node_add(make_node("n1", cpu="2"))
    return sched


def families(metrics: SchedulerMetrics) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def test_the_pod_group_metrics_exist_only_with_generic_workload() -> None:
    off, on = SchedulerMetrics(), SchedulerMetrics()
    scheduler({}, off)
    scheduler({"GenericWorkload": True}, on)
    text_off, text_on = off.exposition().decode(), on.exposition().decode()
    for name in NAMES:
        assert f"# TYPE {name}" not in text_off
        assert f"# TYPE {name.removesuffix('_total')}" in text_on


def test_each_cycle_counts_once_with_its_result() -> None:
    metrics = SchedulerMetrics()
    sched = scheduler({"GenericWorkload": True, "GangScheduling": True}, metrics)
    sched.on_pod_group_add(group("fits", min_count=2))
    sched.on_pod_group_add(group("too-big", min_count=2))
    for p in (member("a", "fits", cpu="500m"), member("b", "fits", cpu="500m"),
              member("c", "too-big", cpu="2"), member("d", "too-big", cpu="2")):
        sched.on_pod_add(p)
    while sched.queue.num_active():  # not schedule_one until False: a failed gang is popped from backoffQ again
        sched.schedule_one()
    found = families(metrics)
    attempts = found["scheduler_podgroup_schedule_attempts_total"]
    assert attempts == {(("profile", "default-scheduler"), ("result", "scheduled")): 1.0,
                        (("profile", "default-scheduler"), ("result", "unschedulable")): 1.0}
    assert found["scheduler_podgroup_scheduling_algorithm_duration_seconds_count"][()] == 2.0
