"""The scheduler's metrics against upstream's definitions (pkg/scheduler/metrics/metrics.go,
v1.36): names, types, stability-annotated help, labels and buckets, and what each record
method puts in the exposition."""

from __future__ import annotations

import re

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubesched.scheduler.metrics import (
    PLUGIN_METRICS_SAMPLE_PERCENT,
    SPECS,
    SchedulerMetrics,
    attempts_label,
    exponential_buckets,
    should_sample_plugins,
)

# (exposed name, type, stability, labels, (bucket start, factor, count) or None), as upstream declares them.
UPSTREAM = [
    ("scheduler_schedule_attempts_total", "counter", "STABLE", ("result", "profile"), None),
    ("scheduler_event_handling_duration_seconds", "histogram", "ALPHA", ("event",), (0.0001, 2, 12)),
    ("scheduler_scheduling_attempt_duration_seconds", "histogram", "STABLE", ("result", "profile"), (0.001, 2, 15)),
    ("scheduler_scheduling_algorithm_duration_seconds", "histogram", "ALPHA", (), (0.001, 2, 15)),
    ("scheduler_preemption_victims", "histogram", "STABLE", (), (1, 2, 7)),
    ("scheduler_preemption_attempts_total", "counter", "STABLE", (), None),
    ("scheduler_pending_pods", "gauge", "STABLE", ("queue",), None),
    ("scheduler_goroutines", "gauge", "BETA", ("operation",), None),
    ("scheduler_pod_scheduling_sli_duration_seconds", "histogram", "BETA", ("attempts",), (0.01, 2, 20)),
    ("scheduler_pod_scheduling_attempts", "histogram", "STABLE", (), (1, 2, 5)),
    ("scheduler_pod_scheduled_after_flush_total", "counter", "ALPHA", (), None),
    ("scheduler_framework_extension_point_duration_seconds", "histogram", "STABLE",
     ("extension_point", "status", "profile"), (0.0001, 2, 12)),
    ("scheduler_plugin_execution_duration_seconds", "histogram", "ALPHA", ("plugin", "extension_point", "status"),
     (0.00001, 1.5, 20)),
    ("scheduler_queueing_hint_execution_duration_seconds", "histogram", "ALPHA", ("plugin", "event", "hint"),
     (0.00001, 1.5, 20)),
    ("scheduler_queue_incoming_pods_total", "counter", "STABLE", ("queue", "event"), None),
    ("scheduler_permit_wait_duration_seconds", "histogram", "BETA", ("result",), (0.001, 2, 15)),
    ("scheduler_cache_size", "gauge", "ALPHA", ("type",), None),
    ("scheduler_unschedulable_pods", "gauge", "BETA", ("plugin", "profile"), None),
    ("scheduler_plugin_evaluation_total", "counter", "BETA", ("plugin", "extension_point", "profile"), None),
    ("scheduler_batch_attempts_total", "counter", "ALPHA", ("profile", "result"), None),
    ("scheduler_batch_cache_flushed_total", "counter", "ALPHA", ("profile", "reason"), None),
    ("scheduler_get_node_hint_duration_seconds", "histogram", "ALPHA", ("hinted", "profile"), (0.00001, 2, 12)),
    ("scheduler_store_schedule_results_duration_seconds", "histogram", "ALPHA", ("profile",), (0.00001, 2, 12)),
]


def exposition(metrics: SchedulerMetrics) -> str:
    return metrics.exposition().decode()


def samples(metrics: SchedulerMetrics, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Sample name+labels -> value for every sample whose name starts with ``name``."""
    found: dict[tuple[tuple[str, str], ...], float] = {}
    for family in text_string_to_metric_families(exposition(metrics)):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


@pytest.mark.parametrize("name,kind,stability,labels,buckets", UPSTREAM, ids=[u[0] for u in UPSTREAM])
def test_each_metric_is_declared_as_upstream(name: str, kind: str, stability: str, labels: tuple[str, ...],
                                             buckets: tuple[float, float, int] | None) -> None:
    spec = SPECS[name]
    assert (spec.kind, spec.stability, spec.labels) == (kind, stability, labels)
    assert spec.buckets == (exponential_buckets(*buckets) if buckets else ())
    text = exposition(SchedulerMetrics())
    assert f"# TYPE {name} {kind}\n" in text
    assert re.search(rf"^# HELP {name} \[{stability}\] \S", text, re.M)


def test_no_other_metric_is_exposed() -> None:
    text = exposition(SchedulerMetrics())
    assert set(re.findall(r"^# TYPE (\S+)", text, re.M)) == {u[0] for u in UPSTREAM}


def test_buckets_print_as_go_prints_them() -> None:
    m = SchedulerMetrics()
    m.attempt("scheduled", "default-scheduler", 0.003)
    text = exposition(m)
    les = re.findall(r'scheduler_scheduling_attempt_duration_seconds_bucket\{le="([^"]+)"', text)
    assert les == ["0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256", "0.512",
                   "1.024", "2.048", "4.096", "8.192", "16.384", "+Inf"]


def test_plugin_buckets_print_the_floats_upstreams_exposition_prints() -> None:
    m = SchedulerMetrics()
    m.plugin("testPlugin", "Filter", "Success", 0.00001)
    les = re.findall(r'^scheduler_plugin_execution_duration_seconds_bucket\{.*le="([^"]+)"', exposition(m), re.M)
    # From upstream's metrics_test.go expected exposition.
    assert les[:4] == ["1e-05", "1.5000000000000002e-05", "2.2500000000000005e-05", "3.375000000000001e-05"]
    assert les[6] == "0.00011390625000000003"
    assert les[-2:] == ["0.02216837820053101", "+Inf"]


def test_exponential_buckets_multiply_step_by_step() -> None:
    assert exponential_buckets(1, 2, 7) == (1, 2, 4, 8, 16, 32, 64)
    plugin = exponential_buckets(0.00001, 1.5, 20)
    assert plugin[0] == 0.00001 and len(plugin) == 20
    assert plugin[-1] == pytest.approx(0.00001 * 1.5**19)  # ~22 ms, as upstream's comment says


def test_an_attempt_counts_and_times_by_result_and_profile() -> None:
    m = SchedulerMetrics()
    m.attempt("unschedulable", "p1", 0.01)
    m.attempt("unschedulable", "p1", 0.02)
    m.attempt("scheduled", "p2", 0.5)
    assert samples(m, "scheduler_schedule_attempts_total") == {
        (("profile", "p1"), ("result", "unschedulable")): 2.0,
        (("profile", "p2"), ("result", "scheduled")): 1.0,
    }
    assert samples(m, "scheduler_scheduling_attempt_duration_seconds_sum")[
        (("profile", "p1"), ("result", "unschedulable"))] == pytest.approx(0.03)


def test_counters_have_no_created_series() -> None:
    m = SchedulerMetrics()
    m.attempt("scheduled", "p", 0.1)
    assert "_created" not in exposition(m)


def test_a_scheduled_pod_records_attempts_and_the_sli_by_capped_attempts() -> None:
    m = SchedulerMetrics()
    m.pod_scheduled(2, 1.5)
    m.pod_scheduled(20, 3.0)
    m.pod_scheduled(1, None)
    assert samples(m, "scheduler_pod_scheduling_attempts_count") == {(): 3.0}
    assert samples(m, "scheduler_pod_scheduling_sli_duration_seconds_count") == {
        (("attempts", "2"),): 1.0, (("attempts", "15+"),): 1.0}


def test_attempts_label_caps_at_fifteen() -> None:
    assert [attempts_label(n) for n in (1, 14, 15, 99)] == ["1", "14", "15+", "15+"]


def test_pending_pods_are_read_from_the_source_at_scrape_time() -> None:
    m = SchedulerMetrics()
    counts = {"active": 3, "backoff": 1}
    m.set_pending_source(lambda: counts)
    first = samples(m, "scheduler_pending_pods")
    assert first == {(("queue", "active"),): 3.0, (("queue", "backoff"),): 1.0,
                     (("queue", "unschedulable"),): 0.0, (("queue", "gated"),): 0.0}
    counts["active"] = 7
    assert samples(m, "scheduler_pending_pods")[(("queue", "active"),)] == 7.0


def test_unschedulable_pods_are_read_by_plugin_and_profile() -> None:
    m = SchedulerMetrics()
    m.set_unschedulable_source(lambda: {("NodeResourcesFit", "default-scheduler"): 4})
    assert samples(m, "scheduler_unschedulable_pods") == {
        (("plugin", "NodeResourcesFit"), ("profile", "default-scheduler")): 4.0}


def test_cache_size_is_read_by_type() -> None:
    m = SchedulerMetrics()
    m.set_cache_size_source(lambda: {"nodes": 5, "pods": 9, "assumed_pods": 1})
    assert samples(m, "scheduler_cache_size")[(("type", "assumed_pods"),)] == 1.0


def test_extension_points_plugins_incoming_permit_and_preemption_are_recorded() -> None:
    m = SchedulerMetrics()
    m.extension_point("Filter", "Success", "p", 0.001)
    m.plugin("NodeAffinity", "Filter", "Unschedulable", 0.00002)
    m.incoming("active", "PodAdd")
    m.permit_wait("Success", 0.2)
    m.preemption(3)
    m.preemption(None)
    m.set_plugin_evaluation_source(lambda: {("NodeAffinity", "Filter", "p"): 3})
    m.goroutines("binding", 1)
    assert samples(m, "scheduler_framework_extension_point_duration_seconds_count") == {
        (("extension_point", "Filter"), ("profile", "p"), ("status", "Success")): 1.0}
    assert samples(m, "scheduler_plugin_execution_duration_seconds_count") == {
        (("extension_point", "Filter"), ("plugin", "NodeAffinity"), ("status", "Unschedulable")): 1.0}
    assert samples(m, "scheduler_queue_incoming_pods_total") == {(("event", "PodAdd"), ("queue", "active")): 1.0}
    assert samples(m, "scheduler_permit_wait_duration_seconds_count") == {(("result", "Success"),): 1.0}
    assert samples(m, "scheduler_preemption_attempts_total") == {(): 2.0}
    assert samples(m, "scheduler_preemption_victims_sum") == {(): 3.0}
    assert samples(m, "scheduler_plugin_evaluation_total") == {
        (("extension_point", "Filter"), ("plugin", "NodeAffinity"), ("profile", "p")): 3.0}
    assert samples(m, "scheduler_goroutines") == {(("operation", "binding"),): 1.0}


def test_two_instances_do_not_share_values() -> None:
    a, b = SchedulerMetrics(), SchedulerMetrics()
    a.incoming("active", "PodAdd")
    assert samples(b, "scheduler_queue_incoming_pods_total") == {}


def test_plugin_metrics_are_sampled_in_ten_percent_of_cycles() -> None:
    assert PLUGIN_METRICS_SAMPLE_PERCENT == 10
    assert should_sample_plugins(lambda: 0.0999)
    assert not should_sample_plugins(lambda: 0.1)
