"""The live process's metrics beside the scheduler's own (``SchedulerMetrics``), in the
same registry so ``/metrics`` shows them all:

* ``rest_client_requests_total{code,host,method}``, ``rest_client_request_duration_seconds
  {host,verb}`` and ``rest_client_rate_limiter_duration_seconds{host,verb}``: client-go's
  REST client metrics (component-base/metrics/prometheus/restclient, ALPHA), recorded by
  every ``ApiClient`` (the scheduler's, the events' and the Lease's);
* ``scheduler_pending_async_api_calls{call_type}``, ``scheduler_async_api_call_execution_total
  {call_type,result}`` and ``scheduler_async_api_call_execution_duration_seconds{call_type,result}``:
  upstream's API dispatcher metrics (ALPHA), for the work kubesched does off the scheduling
  loop (``pod_status_patch``, ``pod_binding``); the queue of status patches is kubesched's
  one work queue, so these are its ``workqueue_*`` equivalents;
* ``process_*``: CPU seconds, resident and virtual memory, open and max file descriptors and
  start time, as every Kubernetes component exports them;
* ``kubesched_events_recorded_total``, ``kubesched_events_written_total``,
  ``kubesched_events_dropped_total`` and ``kubesched_events_queued``: the event writer
  (upstream has no metric for it: kubesched's own names). ``dropped`` stays 0 unless the
  API server refuses an event or the writes run out of retries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Gauge, ProcessCollector
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from kubesched.scheduler.metric_families import CounterFamily, HistogramFamily

__all__ = ["AsyncCallMetrics", "EventWriterStats", "LiveMetrics", "POD_BINDING", "POD_STATUS_PATCH", "RestClientMetrics"]

# client-go's request latency buckets (restclient: requestLatency).
_REST_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
# the dispatcher's execution buckets (metrics.ExponentialBuckets(0.001, 2, 15)).
_ASYNC_BUCKETS = tuple(0.001 * 2 ** i for i in range(15))

POD_STATUS_PATCH = "pod_status_patch"
POD_BINDING = "pod_binding"


class RestClientMetrics:
    """What ``ApiClient`` reports about each request (its ``observer``). Every API request
    records three samples, so they go to plain cells (``metric_families``) keyed by
    pre-built label tuples, not through prometheus_client's locked children."""

    def __init__(self, registry: CollectorRegistry, host: str) -> None:
        self.host = host
        self._requests = CounterFamily("rest_client_requests_total", "[ALPHA] Number of HTTP requests, partitioned "
                                       "by status code, method, and host.", ("code", "host", "method"), registry)
        self._latency = HistogramFamily("rest_client_request_duration_seconds", "[ALPHA] Request latency in "
                                        "seconds. Broken down by verb, and host.", ("host", "verb"), _REST_BUCKETS,
                                        registry)
        self._throttled = HistogramFamily("rest_client_rate_limiter_duration_seconds", "[ALPHA] Client side rate "
                                          "limiter latency in seconds. Broken down by verb, and host.",
                                          ("host", "verb"), _REST_BUCKETS, registry)
        # Label tuples built once per verb / (code, verb).
        self._by_verb: dict[str, tuple[str, str]] = {}
        self._by_code: dict[tuple[int, str], tuple[str, str, str]] = {}

    def _verb_key(self, verb: str) -> tuple[str, str]:
        key = self._by_verb.get(verb)
        if key is None:
            key = self._by_verb[verb] = (self.host, verb)
        return key

    def rate_limited(self, verb: str, seconds: float) -> None:
        self._throttled.observe(self._verb_key(verb), seconds)

    def response(self, verb: str, code: int, seconds: float) -> None:
        """``code`` 0: no HTTP answer (client-go labels it ``<error>``)."""
        key = self._by_code.get((code, verb))
        if key is None:
            key = self._by_code[(code, verb)] = (str(code) if code else "<error>", self.host, verb)
        self._requests.inc(key)
        self._latency.observe(self._verb_key(verb), seconds)


class AsyncCallMetrics:
    """Upstream's API dispatcher metrics for kubesched's background API calls."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._pending = Gauge("scheduler_pending_async_api_calls", "[ALPHA] Number of API calls currently pending "
                              "in the async queue.", ("call_type",), registry=registry)
        self._total = CounterFamily("scheduler_async_api_call_execution_total", "[ALPHA] Total number of API calls "
                                    "executed by the async dispatcher.", ("call_type", "result"), registry)
        self._duration = HistogramFamily("scheduler_async_api_call_execution_duration_seconds", "[ALPHA] Duration "
                                         "in seconds for executing API call in the async dispatcher.",
                                         ("call_type", "result"), _ASYNC_BUCKETS, registry)
        self._keys: dict[tuple[str, bool], tuple[str, str]] = {}

    def set_pending_source(self, call_type: str, source: Callable[[], int]) -> None:
        self._pending.labels(call_type).set_function(lambda: float(source()))

    def executed(self, call_type: str, ok: bool, seconds: float) -> None:
        key = self._keys.get((call_type, ok))
        if key is None:
            key = self._keys[(call_type, ok)] = (call_type, "success" if ok else "error")
        self._total.inc(key)
        self._duration.observe(key, seconds)


@dataclass(slots=True)
class EventWriterStats:
    """Where the event counts come from (the broadcaster's stats and queue)."""

    recorded: Callable[[], int]
    written: Callable[[], int]
    dropped: Callable[[], int]
    queued: Callable[[], int]


class _EventWriterCollector(Collector):
    def __init__(self, source: EventWriterStats) -> None:
        self._source = source

    def describe(self) -> Iterable[Metric]:
        return self.collect()

    def collect(self) -> Iterable[Metric]:
        s = self._source
        return [
            CounterMetricFamily("kubesched_events_recorded", "Events the scheduler recorded (before aggregation "
                                "into series).", value=s.recorded()),
            CounterMetricFamily("kubesched_events_written", "Event creates and series patches the API server "
                                "accepted.", value=s.written()),
            CounterMetricFamily("kubesched_events_dropped", "Events never written: refused by the API server or "
                                "out of retries.", value=s.dropped()),
            GaugeMetricFamily("kubesched_events_queued", "Event writes waiting for the events client.",
                              value=s.queued()),
        ]


class LiveMetrics:
    """The live process's families, registered into the scheduler's registry."""

    def __init__(self, registry: CollectorRegistry, host: str) -> None:
        self.registry = registry
        self.rest = RestClientMetrics(registry, host)
        self.async_calls = AsyncCallMetrics(registry)
        ProcessCollector(registry=registry)

    def watch_events(self, source: EventWriterStats) -> None:
        self.registry.register(_EventWriterCollector(source))
