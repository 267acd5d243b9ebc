"""A scrape reads as it did when the scheduler's metrics were prometheus_client's own
Counter/Histogram/Gauge objects: the record methods now add to plain cells
(``metric_families``) and a collector exposes them, with the same series, label
order, ``le`` strings and values (issue 20: the library's per-call locks and ``labels()``
look-ups were a tenth of the live process's CPU). The expected texts below were
scraped from the prometheus_client-backed implementation."""

from __future__ import annotations

import random
import re
import sys
import threading

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.metric_families import CounterFamily, GaugeFamily, HistogramFamily
from kubesched.scheduler.metrics import RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, SchedulerMetrics

from ..helpers import config, node, only, parse, pod

PROFILE = "default-scheduler"
NO_SCHEDULE = {"key": "dedicated", "value": "db", "effect": "NoSchedule"}


def lines(text: bytes, pattern: str) -> str:
    keep = re.compile(pattern)
    return "\n".join(line for line in text.decode().splitlines() if keep.match(line))


def test_a_scrape_after_six_scheduled_pods_shows_the_series_and_counts_it_showed_before() -> None:
    metrics = SchedulerMetrics()
    clock = VirtualClock()
    client = SimulatedCluster(clock)
    doc = config({"schedulerName": PROFILE, **only("TaintToleration", "NodeResourcesFit", "NodeAffinity")})
    sched = new_scheduler(parse(doc), client, clock, tie_break="name", metrics=metrics)
    for raw in [node("n0", taints=[NO_SCHEDULE]), node("n1", cpu="1")] + [node(f"n{i}") for i in range(2, 5)]:
        sched.on_node_add(parse_node(raw))
    for i in range(6):
        sched.on_pod_add(parse_pod(pod(f"p{i}", cpu="2")))
        assert sched.schedule_one()
    assert len(client.bindings) == 6
    # Durations are wall-clock: the counts of their histograms, not their buckets.
    pattern = (r"^(scheduler_schedule_attempts_total|scheduler_queue_incoming_pods_total|scheduler_pod_scheduling_"
               r"attempts_|scheduler_scheduling_attempt_duration_seconds_count|scheduler_framework_extension_point_"
               r"duration_seconds_count|scheduler_pod_scheduling_sli_duration_seconds_count|scheduler_scheduling_"
               r"algorithm_duration_seconds_count|scheduler_plugin_evaluation_total|scheduler_pending_pods)")
    assert lines(metrics.exposition(), pattern) == SIX_PODS


SIX_PODS = """\
scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 6.0
scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"} 6.0
scheduler_scheduling_algorithm_duration_seconds_count 6.0
scheduler_pending_pods{queue="active"} 0.0
scheduler_pending_pods{queue="backoff"} 0.0
scheduler_pending_pods{queue="unschedulable"} 0.0
scheduler_pending_pods{queue="gated"} 0.0
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 6.0
scheduler_pod_scheduling_attempts_bucket{le="1.0"} 6.0
scheduler_pod_scheduling_attempts_bucket{le="2.0"} 6.0
scheduler_pod_scheduling_attempts_bucket{le="4.0"} 6.0
scheduler_pod_scheduling_attempts_bucket{le="8.0"} 6.0
scheduler_pod_scheduling_attempts_bucket{le="16.0"} 6.0
scheduler_pod_scheduling_attempts_bucket{le="+Inf"} 6.0
scheduler_pod_scheduling_attempts_count 6.0
scheduler_pod_scheduling_attempts_sum 6.0
scheduler_framework_extension_point_duration_seconds_count{extension_point="PreFilter",profile="default-scheduler",status="Success"} 6.0
scheduler_framework_extension_point_duration_seconds_count{extension_point="PreScore",profile="default-scheduler",status="Success"} 4.0
scheduler_framework_extension_point_duration_seconds_count{extension_point="Score",profile="default-scheduler",status="Success"} 4.0
scheduler_framework_extension_point_duration_seconds_count{extension_point="Reserve",profile="default-scheduler",status="Success"} 6.0
scheduler_framework_extension_point_duration_seconds_count{extension_point="Permit",profile="default-scheduler",status="Success"} 6.0
scheduler_framework_extension_point_duration_seconds_count{extension_point="PreBind",profile="default-scheduler",status="Success"} 6.0
scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",profile="default-scheduler",status="Success"} 6.0
scheduler_framework_extension_point_duration_seconds_count{extension_point="PostBind",profile="default-scheduler",status="Success"} 6.0
scheduler_queue_incoming_pods_total{event="UnschedulablePodAdd",queue="active"} 6.0
scheduler_plugin_evaluation_total{extension_point="PreFilter",plugin="NodeResourcesFit",profile="default-scheduler"} 6.0
scheduler_plugin_evaluation_total{extension_point="Filter",plugin="TaintToleration",profile="default-scheduler"} 27.0
scheduler_plugin_evaluation_total{extension_point="Filter",plugin="NodeResourcesFit",profile="default-scheduler"} 23.0
scheduler_plugin_evaluation_total{extension_point="PreScore",plugin="TaintToleration",profile="default-scheduler"} 4.0
scheduler_plugin_evaluation_total{extension_point="PreScore",plugin="NodeResourcesFit",profile="default-scheduler"} 4.0
scheduler_plugin_evaluation_total{extension_point="Score",plugin="TaintToleration",profile="default-scheduler"} 12.0
scheduler_plugin_evaluation_total{extension_point="Score",plugin="NodeResourcesFit",profile="default-scheduler"} 12.0"""


def test_each_record_method_scrapes_as_before() -> None:
    m = SchedulerMetrics()
    for i in range(5):
        m.attempt(RESULT_SCHEDULED, PROFILE, 0.0015 * (i + 1))
    m.attempt(RESULT_UNSCHEDULABLE, PROFILE, 0.25)
    m.algorithm(0.002)
    m.algorithm(0.0005)
    m.pod_scheduled(1, 0.05)
    m.pod_scheduled(16, None)
    m.pod_scheduled(3, 1.5)
    m.scheduled_after_flush()
    m.incoming("active", "PodAdd")
    m.incoming("active", "PodAdd")
    m.incoming("backoff", "NodeAdd")
    m.permit_wait("Success", 0.01)
    m.preemption(None)
    m.preemption(3)
    m.batch_attempt(PROFILE, "no_hint")
    m.batch_flushed(PROFILE, "pod_failed")
    m.goroutines("binding", 1)
    m.goroutines("binding", 1)
    m.goroutines("binding", -1)
    pattern = (r'^(scheduler_schedule_attempts_total|scheduler_scheduling_attempt_duration_seconds_(count|sum)|'
               r'scheduler_scheduling_attempt_duration_seconds_bucket\{le="0.00[248]"|scheduler_scheduling_algorithm_'
               r'duration_seconds_(count|sum)|scheduler_pod_scheduling_attempts_bucket|scheduler_pod_scheduling_sli_'
               r'duration_seconds_count|scheduler_queue_incoming_pods_total|scheduler_preemption_attempts_total|'
               r'scheduler_preemption_victims_(count|sum)|scheduler_goroutines|scheduler_pod_scheduled_after_flush_'
               r'total|scheduler_batch_|scheduler_permit_wait_duration_seconds_(count|sum))')
    assert lines(m.exposition(), pattern) == RECORDED


RECORDED = """\
scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 5.0
scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 1.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.002",profile="default-scheduler",result="scheduled"} 1.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.004",profile="default-scheduler",result="scheduled"} 2.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.008",profile="default-scheduler",result="scheduled"} 5.0
scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"} 5.0
scheduler_scheduling_attempt_duration_seconds_sum{profile="default-scheduler",result="scheduled"} 0.0225
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.002",profile="default-scheduler",result="unschedulable"} 0.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.004",profile="default-scheduler",result="unschedulable"} 0.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.008",profile="default-scheduler",result="unschedulable"} 0.0
scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="unschedulable"} 1.0
scheduler_scheduling_attempt_duration_seconds_sum{profile="default-scheduler",result="unschedulable"} 0.25
scheduler_scheduling_algorithm_duration_seconds_count 2.0
scheduler_scheduling_algorithm_duration_seconds_sum 0.0025
scheduler_preemption_victims_count 1.0
scheduler_preemption_victims_sum 3.0
scheduler_preemption_attempts_total 2.0
scheduler_goroutines{operation="binding"} 1.0
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 1.0
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="3"} 1.0
scheduler_pod_scheduling_attempts_bucket{le="1.0"} 1.0
scheduler_pod_scheduling_attempts_bucket{le="2.0"} 1.0
scheduler_pod_scheduling_attempts_bucket{le="4.0"} 2.0
scheduler_pod_scheduling_attempts_bucket{le="8.0"} 2.0
scheduler_pod_scheduling_attempts_bucket{le="16.0"} 3.0
scheduler_pod_scheduling_attempts_bucket{le="+Inf"} 3.0
scheduler_pod_scheduled_after_flush_total 1.0
scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} 2.0
scheduler_queue_incoming_pods_total{event="NodeAdd",queue="backoff"} 1.0
scheduler_permit_wait_duration_seconds_count{result="Success"} 1.0
scheduler_permit_wait_duration_seconds_sum{result="Success"} 0.01
scheduler_batch_attempts_total{profile="default-scheduler",result="no_hint"} 1.0
scheduler_batch_cache_flushed_total{profile="default-scheduler",reason="pod_failed"} 1.0"""


def test_a_fresh_registry_shows_only_the_unlabelled_series() -> None:
    samples = [line for line in SchedulerMetrics().exposition().decode().splitlines() if not line.startswith("#")]
    names = {line.split("{")[0].split(" ")[0] for line in samples}
    assert names == {
        "scheduler_scheduling_algorithm_duration_seconds_bucket", "scheduler_scheduling_algorithm_duration_seconds_count",
        "scheduler_scheduling_algorithm_duration_seconds_sum", "scheduler_preemption_victims_bucket",
        "scheduler_preemption_victims_count", "scheduler_preemption_victims_sum", "scheduler_preemption_attempts_total",
        "scheduler_pod_scheduling_attempts_bucket", "scheduler_pod_scheduling_attempts_count",
        "scheduler_pod_scheduling_attempts_sum", "scheduler_pod_scheduled_after_flush_total",
    }


BUCKETS = (0.001, 0.002, 0.004, 0.008, 0.016)
# Values on, just under and just over the bucket bounds, zero, negative, past the last bound.
VALUES = [0.0, -1.0, 0.001, 0.0010000001, 0.002, 0.016, 0.0160001, 5.0, 1e-9, 0.004, 0.003999]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_families_expose_what_prometheus_clients_own_metrics_expose(seed: int) -> None:
    rng = random.Random(seed)
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    counter = CounterFamily("demo_requests_total", "Requests.", ("code", "verb"), ours)
    gauge = GaugeFamily("demo_in_flight", "In flight.", ("operation",), ours)
    histogram = HistogramFamily("demo_seconds", "Latency.", ("verb",), BUCKETS, ours)
    plain = HistogramFamily("demo_plain_seconds", "Unlabelled.", (), BUCKETS, ours)
    ref_counter = Counter("demo_requests", "Requests.", ("code", "verb"), registry=theirs)
    ref_gauge = Gauge("demo_in_flight", "In flight.", ("operation",), registry=theirs)
    ref_histogram = Histogram("demo_seconds", "Latency.", ("verb",), buckets=BUCKETS, registry=theirs)
    ref_plain = Histogram("demo_plain_seconds", "Unlabelled.", buckets=BUCKETS, registry=theirs)
    for _ in range(200):
        verb = rng.choice(("GET", "POST", "PATCH"))
        value = rng.choice(VALUES + [rng.random() / 50])
        code = rng.choice(("200", "201", "<error>"))
        counter.inc((code, verb))
        ref_counter.labels(code, verb).inc()
        delta = rng.choice((1, -1, 2))
        gauge.inc((verb,), delta)
        ref_gauge.labels(verb).inc(delta)
        histogram.observe((verb,), value)
        ref_histogram.labels(verb).observe(value)
        plain.observe((), value)
        ref_plain.observe(value)
    assert generate_latest(ours) == generate_latest(theirs)



def test_records_from_several_threads_are_all_counted() -> None:
    """PreBind and Bind record from binding worker threads while the loop records the rest."""
    registry = CollectorRegistry()
    histogram = HistogramFamily("demo_seconds", "Latency.", ("verb",), BUCKETS, registry)
    counter = CounterFamily("demo_total", "Count.", ("verb",), registry)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        def record() -> None:
            for _ in range(50_000):
                histogram.observe(("POST",), 0.003)
                counter.inc(("POST",))

        threads = [threading.Thread(target=record) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert counter.cells[("POST",)] == 200_000
    assert sum(histogram.cells[("POST",)][:-1]) == 200_000
