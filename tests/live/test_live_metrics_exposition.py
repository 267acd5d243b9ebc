"""The live process's own families (REST client, async API calls, event writer) scrape
as they did when they were prometheus_client's Counter/Histogram objects: the same
series, help, types and values (issue 20: they now add to plain cells per label tuple).
The expected texts were scraped from the prometheus_client-backed implementation."""

from __future__ import annotations

import re

from prometheus_client import CollectorRegistry, generate_latest

import kubesched.scheduler.metrics  # noqa: F401  (disables ``_created`` series, as in the process)
from kubesched.cluster.kube.live_metrics import EventWriterStats, LiveMetrics

HOST = "127.0.0.1:6443"


def scrape() -> str:
    registry = CollectorRegistry(auto_describe=True)
    m = LiveMetrics(registry, HOST)
    m.rest.rate_limited("POST", 0.0)
    m.rest.rate_limited("POST", 0.03)
    m.rest.response("POST", 201, 0.004)
    m.rest.response("POST", 201, 0.2)
    m.rest.response("PATCH", 0, 1.5)
    m.rest.response("GET", 200, 0.01)
    m.async_calls.set_pending_source("pod_status_patch", lambda: 3)
    m.async_calls.executed("pod_binding", True, 0.002)
    m.async_calls.executed("pod_binding", False, 0.02)
    m.async_calls.executed("pod_status_patch", True, 0.5)
    m.watch_events(EventWriterStats(lambda: 5, lambda: 4, lambda: 0, lambda: 1))
    return "\n".join(line for line in generate_latest(registry).decode().splitlines() if "process_" not in line)


def test_requests_and_async_calls_scrape_as_before() -> None:
    keep = re.compile(r'^(rest_client_requests_total|rest_client_request_duration_seconds_(count|sum)|rest_client_'
                      r'request_duration_seconds_bucket\{host="127.0.0.1:6443",le="0.(005|25)"|scheduler_async_api_'
                      r'call_execution_total|scheduler_async_api_call_execution_duration_seconds_(count|sum)|rest_'
                      r'client_rate_limiter_duration_seconds_(count|sum)|scheduler_pending_async_api_calls|kubesched_'
                      r'events_)')
    assert "\n".join(line for line in scrape().splitlines() if keep.match(line)) == SAMPLES


SAMPLES = """\
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 2.0
rest_client_requests_total{code="<error>",host="127.0.0.1:6443",method="PATCH"} 1.0
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 1.0
rest_client_request_duration_seconds_bucket{host="127.0.0.1:6443",le="0.005",verb="POST"} 1.0
rest_client_request_duration_seconds_bucket{host="127.0.0.1:6443",le="0.25",verb="POST"} 2.0
rest_client_request_duration_seconds_count{host="127.0.0.1:6443",verb="POST"} 2.0
rest_client_request_duration_seconds_sum{host="127.0.0.1:6443",verb="POST"} 0.20400000000000001
rest_client_request_duration_seconds_bucket{host="127.0.0.1:6443",le="0.005",verb="PATCH"} 0.0
rest_client_request_duration_seconds_bucket{host="127.0.0.1:6443",le="0.25",verb="PATCH"} 0.0
rest_client_request_duration_seconds_count{host="127.0.0.1:6443",verb="PATCH"} 1.0
rest_client_request_duration_seconds_sum{host="127.0.0.1:6443",verb="PATCH"} 1.5
rest_client_request_duration_seconds_bucket{host="127.0.0.1:6443",le="0.005",verb="GET"} 0.0
rest_client_request_duration_seconds_bucket{host="127.0.0.1:6443",le="0.25",verb="GET"} 1.0
rest_client_request_duration_seconds_count{host="127.0.0.1:6443",verb="GET"} 1.0
rest_client_request_duration_seconds_sum{host="127.0.0.1:6443",verb="GET"} 0.01
rest_client_rate_limiter_duration_seconds_count{host="127.0.0.1:6443",verb="POST"} 2.0
rest_client_rate_limiter_duration_seconds_sum{host="127.0.0.1:6443",verb="POST"} 0.03
scheduler_pending_async_api_calls{call_type="pod_status_patch"} 3.0
scheduler_async_api_call_execution_total{call_type="pod_binding",result="success"} 1.0
scheduler_async_api_call_execution_total{call_type="pod_binding",result="error"} 1.0
scheduler_async_api_call_execution_total{call_type="pod_status_patch",result="success"} 1.0
scheduler_async_api_call_execution_duration_seconds_count{call_type="pod_binding",result="success"} 1.0
scheduler_async_api_call_execution_duration_seconds_sum{call_type="pod_binding",result="success"} 0.002
scheduler_async_api_call_execution_duration_seconds_count{call_type="pod_binding",result="error"} 1.0
scheduler_async_api_call_execution_duration_seconds_sum{call_type="pod_binding",result="error"} 0.02
scheduler_async_api_call_execution_duration_seconds_count{call_type="pod_status_patch",result="success"} 1.0
scheduler_async_api_call_execution_duration_seconds_sum{call_type="pod_status_patch",result="success"} 0.5
kubesched_events_recorded_total 5.0
kubesched_events_written_total 4.0
kubesched_events_dropped_total 0.0
kubesched_events_queued 1.0"""


def test_help_and_type_lines_are_unchanged() -> None:
    assert "\n".join(line for line in scrape().splitlines() if line.startswith("# ")) == HELP


HELP = """\
# HELP rest_client_requests_total [ALPHA] Number of HTTP requests, partitioned by status code, method, and host.
# TYPE rest_client_requests_total counter
# HELP rest_client_request_duration_seconds [ALPHA] Request latency in seconds. Broken down by verb, and host.
# TYPE rest_client_request_duration_seconds histogram
# HELP rest_client_rate_limiter_duration_seconds [ALPHA] Client side rate limiter latency in seconds. Broken down by verb, and host.
# TYPE rest_client_rate_limiter_duration_seconds histogram
# HELP scheduler_pending_async_api_calls [ALPHA] Number of API calls currently pending in the async queue.
# TYPE scheduler_pending_async_api_calls gauge
# HELP scheduler_async_api_call_execution_total [ALPHA] Total number of API calls executed by the async dispatcher.
# TYPE scheduler_async_api_call_execution_total counter
# HELP scheduler_async_api_call_execution_duration_seconds [ALPHA] Duration in seconds for executing API call in the async dispatcher.
# TYPE scheduler_async_api_call_execution_duration_seconds histogram
# HELP kubesched_events_recorded_total Events the scheduler recorded (before aggregation into series).
# TYPE kubesched_events_recorded_total counter
# HELP kubesched_events_written_total Event creates and series patches the API server accepted.
# TYPE kubesched_events_written_total counter
# HELP kubesched_events_dropped_total Events never written: refused by the API server or out of retries.
# TYPE kubesched_events_dropped_total counter
# HELP kubesched_events_queued Event writes waiting for the events client.
# TYPE kubesched_events_queued gauge"""
