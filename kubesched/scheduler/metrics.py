"""kube-scheduler's Prometheus metrics (``pkg/scheduler/metrics/metrics.go``, v1.36).

Names, types, help texts, labels and buckets are upstream's, so dashboards and alerts
written for kube-scheduler read kubesched unchanged. Help texts carry the stability
prefix component-base adds (``[STABLE] ...``), and counters expose no ``_created``
series (the Go client has none).

Each ``SchedulerMetrics`` owns its registry: several schedulers in one process (tests,
the simulator) never collide. Recording sits on the scheduling loop's hot path (about
80 records per pod), so a record is a plain dict/list update on a cell per label tuple
(``metric_families``) and prometheus_client only sees the values at scrape time. Queue lengths and unschedulable counts are not pushed: the
scrape reads them from sources the integrator sets (``set_pending_source``...).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import prometheus_client
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from kubesched.scheduler.metric_families import CounterFamily, GaugeFamily, HistogramFamily

__all__ = [
    "CONTENT_TYPE",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "RESULT_ERROR",
    "RESULT_SCHEDULED",
    "RESULT_UNSCHEDULABLE",
    "MetricSpec",
    "POD_GROUP_SPECS",
    "SPECS",
    "SchedulerMetrics",
    "attempts_label",
    "exponential_buckets",
    "should_sample_plugins",
]

# The Go client exposes no ``_created`` samples; without this every counter and
# histogram would grow one series per label set that upstream does not have.
prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]

#: What upstream's /metrics answers with (text exposition format 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: Share of scheduling cycles whose per-plugin durations are recorded
#: (``pluginMetricsSamplePercent`` in pkg/scheduler/scheduler.go).
PLUGIN_METRICS_SAMPLE_PERCENT = 10

#: ``result`` label values of schedule_attempts_total (metrics/profile_metrics.go).
RESULT_SCHEDULED = "scheduled"
RESULT_UNSCHEDULABLE = "unschedulable"
RESULT_ERROR = "error"

#: pod_scheduling_sli_duration_seconds caps its ``attempts`` label here (getAttemptsLabel).
_ATTEMPTS_CAP = 15

_PENDING_QUEUES = ("active", "backoff", "unschedulable", "gated")


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """component-base ``ExponentialBuckets``: multiplied step by step, as Go does, so
    the bucket bounds are the same floats upstream prints."""
    buckets: list[float] = []
    value = start
    for _ in range(count):
        buckets.append(value)
        value *= factor
    return tuple(buckets)


def attempts_label(attempts: int) -> str:
    """The ``attempts`` label: the count, or ``15+`` from 15 on (bounded cardinality)."""
    return "15+" if attempts >= _ATTEMPTS_CAP else str(attempts)


def should_sample_plugins(rng: Callable[[], float] = random.random) -> bool:
    """Whether this scheduling cycle records per-plugin durations
    (upstream: ``rand.Intn(100) < pluginMetricsSamplePercent``)."""
    return rng() * 100 < PLUGIN_METRICS_SAMPLE_PERCENT


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One upstream metric: its exposed name (with the ``scheduler_`` subsystem),
    type, stability level, help, labels and histogram buckets."""

    name: str
    kind: str  # counter | gauge | histogram
    stability: str  # STABLE | BETA | ALPHA
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()

    @property
    def annotated_help(self) -> str:
        return f"[{self.stability}] {self.help}"


def _spec(name: str, kind: str, stability: str, help: str, labels: tuple[str, ...] = (),
          buckets: tuple[float, ...] = ()) -> MetricSpec:
    return MetricSpec("scheduler_" + name, kind, stability, help, labels, buckets)


SPECS: dict[str, MetricSpec] = {s.name: s for s in (
    _spec("schedule_attempts_total", "counter", "STABLE",
          "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
          "scheduled, while 'error' means an internal scheduler problem.", ("result", "profile")),
    _spec("event_handling_duration_seconds", "histogram", "ALPHA", "Event handling latency in seconds.",
          ("event",), exponential_buckets(0.0001, 2, 12)),
    _spec("scheduling_attempt_duration_seconds", "histogram", "STABLE",
          "Scheduling attempt latency in seconds (scheduling algorithm + binding)", ("result", "profile"),
          exponential_buckets(0.001, 2, 15)),
    _spec("scheduling_algorithm_duration_seconds", "histogram", "ALPHA", "Scheduling algorithm latency in seconds",
          (), exponential_buckets(0.001, 2, 15)),
    _spec("preemption_victims", "histogram", "STABLE",
          "Number of selected preemption victims for preemption initiated by a single pod", (),
          exponential_buckets(1, 2, 7)),
    _spec("preemption_attempts_total", "counter", "STABLE", "Total preemption attempts in the cluster till now"),
    _spec("pending_pods", "gauge", "STABLE",
          "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means "
          "number of pods in backoffQ; 'unschedulable' means number of pods in unschedulableEntities that the "
          "scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the "
          "scheduler never attempted to schedule because they are gated; 'incomplete' means number of pods in "
          "incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods.", ("queue",)),
    _spec("goroutines", "gauge", "BETA",
          "Number of running goroutines split by the work they do such as binding.", ("operation",)),
    _spec("pod_scheduling_sli_duration_seconds", "histogram", "BETA",
          "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
          "involve multiple scheduling attempts.", ("attempts",), exponential_buckets(0.01, 2, 20)),
    _spec("pod_scheduling_attempts", "histogram", "STABLE", "Number of attempts to successfully schedule a pod.",
          (), exponential_buckets(1, 2, 5)),
    _spec("pod_scheduled_after_flush_total", "counter", "ALPHA",
          "Number of pods that were successfully scheduled after being flushed from unschedulableEntities due to "
          "timeout. This metric helps detect potential queueing hint misconfigurations or event handling issues."),
    _spec("framework_extension_point_duration_seconds", "histogram", "STABLE",
          "Latency for running all plugins of a specific extension point.", ("extension_point", "status", "profile"),
          exponential_buckets(0.0001, 2, 12)),
    _spec("plugin_execution_duration_seconds", "histogram", "ALPHA",
          "Duration for running a plugin at a specific extension point.", ("plugin", "extension_point", "status"),
          exponential_buckets(0.00001, 1.5, 20)),
    _spec("queueing_hint_execution_duration_seconds", "histogram", "ALPHA",
          "Duration for running a queueing hint function of a plugin.", ("plugin", "event", "hint"),
          exponential_buckets(0.00001, 1.5, 20)),
    _spec("queue_incoming_pods_total", "counter", "STABLE",
          "Number of pods added to scheduling queues by event and queue type.", ("queue", "event")),
    _spec("permit_wait_duration_seconds", "histogram", "BETA", "Duration of waiting on permit.", ("result",),
          exponential_buckets(0.001, 2, 15)),
    _spec("cache_size", "gauge", "ALPHA",
          "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", ("type",)),
    _spec("unschedulable_pods", "gauge", "BETA",
          "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all "
          "plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin.",
          ("plugin", "profile")),
    _spec("plugin_evaluation_total", "counter", "BETA",
          "Number of attempts to schedule pods by each plugin and the extension point (available only in "
          "PreFilter, Filter, PreScore, and Score).", ("plugin", "extension_point", "profile")),
    # OpportunisticBatching (scheduler/batching.py).
    _spec("batch_attempts_total", "counter", "ALPHA", "Counts of results when we attempt to use batching.",
          ("profile", "result")),
    _spec("batch_cache_flushed_total", "counter", "ALPHA", "Counts of cache flushes by reason.", ("profile", "reason")),
    _spec("get_node_hint_duration_seconds", "histogram", "ALPHA", "Latency for getting a node hint.",
          ("hinted", "profile"), exponential_buckets(0.00001, 2, 12)),
    _spec("store_schedule_results_duration_seconds", "histogram", "ALPHA", "Latency for getting a no.",
          ("profile",), exponential_buckets(0.00001, 2, 12)),
)}

# Registered only with GenericWorkload (``SchedulerMetrics.enable_pod_groups``), as upstream's.
POD_GROUP_SPECS: dict[str, MetricSpec] = {s.name: s for s in (
    _spec("podgroup_schedule_attempts_total", "counter", "ALPHA",
          "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group could not be "
          "scheduled, while 'error' means an internal scheduler problem.", ("result", "profile")),
    _spec("podgroup_scheduling_attempt_duration_seconds", "histogram", "ALPHA",
          "Pod group scheduling attempt latency in seconds (scheduling algorithm + binding)", ("result", "profile"),
          exponential_buckets(0.001, 2, 15)),
    _spec("podgroup_scheduling_algorithm_duration_seconds", "histogram", "ALPHA",
          "Pod group scheduling algorithm latency in seconds", (), exponential_buckets(0.001, 2, 15)),
)}

#: The counter the frameworks count themselves (``Framework.evaluation_counts``, read at scrape time).
_EVALUATIONS = "scheduler_plugin_evaluation_total"

#: Gauges whose values the scrape reads from a source instead of a pushed value.
_PULLED = ("scheduler_pending_pods", "scheduler_unschedulable_pods", "scheduler_cache_size")

PendingSource = Callable[[], Mapping[str, int]]
UnschedulableSource = Callable[[], Mapping[tuple[str, str], int]]
EvaluationSource = Callable[[], Mapping[tuple[str, str, str], int]]


class _PulledCounter(Collector):
    """A counter family read at scrape time: the frameworks add to plain dicts on the hot
    path (a few additions per cycle) and the scrape turns them into samples."""

    def __init__(self, spec: MetricSpec) -> None:
        self._spec = spec
        self.source: EvaluationSource | None = None

    def _family(self) -> CounterMetricFamily:
        return CounterMetricFamily(self._spec.name, self._spec.annotated_help, labels=list(self._spec.labels))

    def describe(self) -> Iterable[Metric]:
        return [self._family()]

    def collect(self) -> Iterable[Metric]:
        family = self._family()
        if self.source is not None:
            for key, value in self.source().items():
                family.add_metric(list(key), float(value))
        return [family]


class _PulledGauge(Collector):
    """A gauge family computed at scrape time from a source callable."""

    def __init__(self, spec: MetricSpec, fixed: tuple[str, ...] = ()) -> None:
        self._spec = spec
        self._fixed = fixed  # label values always exposed (0 when the source omits them)
        self.source: Callable[[], Mapping[str, int]] | Callable[[], Mapping[tuple[str, str], int]] | None = None

    def describe(self) -> Iterable[Metric]:
        return [GaugeMetricFamily(self._spec.name, self._spec.annotated_help, labels=list(self._spec.labels))]

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(self._spec.name, self._spec.annotated_help, labels=list(self._spec.labels))
        if self.source is not None:
            values: dict[str | tuple[str, str], int] = {}
            values.update(self.source().items())
            for name in self._fixed:
                values.setdefault(name, 0)
            for key, value in values.items():
                labels = list(key) if isinstance(key, tuple) else [key]
                family.add_metric(labels, float(value))
        return [family]


class SchedulerMetrics:
    """The scheduler's metrics in a registry of their own, with typed record methods
    the scheduler calls. Each record is a dict update on a plain cell
    (``metric_families``): no lock and no ``labels()`` look-up per call."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._counters: dict[str, CounterFamily] = {}
        self._histograms: dict[str, HistogramFamily] = {}
        self._gauges: dict[str, GaugeFamily] = {}
        self._pulled: dict[str, _PulledGauge] = {}
        self._evaluations: _PulledCounter
        for spec in SPECS.values():
            self._register(spec)
        h, c = self._histograms, self._counters
        self._attempts = c["scheduler_schedule_attempts_total"]
        self._attempt_seconds = h["scheduler_scheduling_attempt_duration_seconds"]
        self._algorithm = h["scheduler_scheduling_algorithm_duration_seconds"]
        self._extension_points = h["scheduler_framework_extension_point_duration_seconds"]
        self._plugins = h["scheduler_plugin_execution_duration_seconds"]
        self._hints = h["scheduler_queueing_hint_execution_duration_seconds"]
        self._events = h["scheduler_event_handling_duration_seconds"]
        self._sli = h["scheduler_pod_scheduling_sli_duration_seconds"]
        self._incoming = c["scheduler_queue_incoming_pods_total"]
        self._permit = h["scheduler_permit_wait_duration_seconds"]
        self._victims = h["scheduler_preemption_victims"]
        self._preemptions = c["scheduler_preemption_attempts_total"]
        self._pod_attempts = h["scheduler_pod_scheduling_attempts"]
        self._after_flush = c["scheduler_pod_scheduled_after_flush_total"]
        self._batch_attempts = c["scheduler_batch_attempts_total"]
        self._batch_flushes = c["scheduler_batch_cache_flushed_total"]
        self._node_hints = h["scheduler_get_node_hint_duration_seconds"]
        self._store_results = h["scheduler_store_schedule_results_duration_seconds"]
        self._goroutines = self._gauges["scheduler_goroutines"]

    def _register(self, spec: MetricSpec) -> None:
        if spec.name == _EVALUATIONS:
            self._evaluations = _PulledCounter(spec)
            self.registry.register(self._evaluations)
            return
        if spec.name in _PULLED:
            fixed = _PENDING_QUEUES if spec.name == "scheduler_pending_pods" else ()
            pulled = _PulledGauge(spec, fixed)
            self.registry.register(pulled)
            self._pulled[spec.name] = pulled
            return
        help_text = spec.annotated_help
        if spec.kind == "counter":
            self._counters[spec.name] = CounterFamily(spec.name, help_text, spec.labels, self.registry)
        elif spec.kind == "histogram":
            self._histograms[spec.name] = HistogramFamily(spec.name, help_text, spec.labels, spec.buckets,
                                                          self.registry)
        else:
            self._gauges[spec.name] = GaugeFamily(spec.name, help_text, spec.labels, self.registry)

    # -- record methods (the scheduler's hot path) ---------------------------------
    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """One scheduling attempt ended: ``result`` is scheduled, unschedulable or error."""
        key = (result, profile)
        self._attempts.inc(key)
        self._attempt_seconds.observe(key, seconds)

    def enable_pod_groups(self) -> None:
        """GenericWorkload on: the pod-group metrics exist (``pod_group_attempt``, ``pod_group_algorithm``)."""
        if "scheduler_podgroup_schedule_attempts_total" in self._counters:
            return
        for spec in POD_GROUP_SPECS.values():
            self._register(spec)

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        """A pod-group cycle ended: scheduled, unschedulable, waiting_on_preemption or error."""
        key = (result, profile)
        self._counters["scheduler_podgroup_schedule_attempts_total"].inc(key)
        self._histograms["scheduler_podgroup_scheduling_attempt_duration_seconds"].observe(key, seconds)

    def pod_group_algorithm(self, seconds: float) -> None:
        self._histograms["scheduler_podgroup_scheduling_algorithm_duration_seconds"].observe((), seconds)

    def algorithm(self, seconds: float) -> None:
        self._algorithm.observe((), seconds)

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        """All plugins of one extension point ran; ``status`` is the Code name (Success...)."""
        self._extension_points.observe((point, status, profile), seconds)

    def extension_point_observer(self, profile: str) -> Callable[[str, str, float], None]:
        """``extension_point`` for one profile, as a framework's point observer: one call
        per extension point of every cycle, so it goes to the histogram directly."""
        observe = self._extension_points.observe

        def observe_point(point: str, status: str, seconds: float) -> None:
            observe((point, status, profile), seconds)

        return observe_point

    def plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """One plugin ran; call it only in cycles ``should_sample_plugins`` picked."""
        self._plugins.observe((plugin, point, status), seconds)

    def queueing_hint(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        """``hint`` is Queue, QueueSkip or Error."""
        self._hints.observe((plugin, event, hint), seconds)

    def event_handling(self, event: str, seconds: float) -> None:
        self._events.observe((event,), seconds)

    def pod_scheduled(self, attempts: int, sli_seconds: float | None) -> None:
        """A pod was bound after ``attempts`` attempts; ``sli_seconds`` runs from its first
        entry into the queue (None when unknown, as upstream skips the observation)."""
        self._pod_attempts.observe((), attempts)
        if sli_seconds is not None:
            self._sli.observe((attempts_label(attempts),), sli_seconds)

    def scheduled_after_flush(self) -> None:
        self._after_flush.inc()

    def incoming(self, queue: str, event: str) -> None:
        """A pod entered ``queue`` (active, backoff, unschedulable, gated) because of ``event``."""
        self._incoming.inc((queue, event))

    def permit_wait(self, result: str, seconds: float) -> None:
        self._permit.observe((result,), seconds)

    def preemption(self, victims: int | None) -> None:
        """A preemption attempt; ``victims`` is the chosen candidate's victim count, None
        when no candidate was found (upstream then observes no victims)."""
        self._preemptions.inc()
        if victims is not None:
            self._victims.observe((), victims)

    def preemption_victims(self, victims: int) -> None:
        """A preemption carried out (a pod's or a pod group's): its victims, as upstream's
        executor observes them when it acts."""
        self._victims.observe((), victims)

    def batch_attempt(self, profile: str, result: str) -> None:
        """OpportunisticBatching's answer for one pod: no_hint, hint_used or hint_not_used."""
        self._batch_attempts.inc((profile, result))

    def batch_flushed(self, profile: str, reason: str) -> None:
        """The stored batch state was dropped (pod_failed, pod_skipped, node_missing, ...)."""
        self._batch_flushes.inc((profile, reason))

    def node_hint(self, hinted: bool, profile: str, seconds: float) -> None:
        self._node_hints.observe(("hint" if hinted else "no_hint", profile), seconds)

    def store_schedule_results(self, profile: str, seconds: float) -> None:
        self._store_results.observe((profile,), seconds)

    def goroutines(self, operation: str, delta: int) -> None:
        """Concurrent work in flight (``binding``, ``prioritizing_extender``...)."""
        self._goroutines.inc((operation,), delta)

    # -- values read at scrape time -----------------------------------------------
    def set_pending_source(self, source: PendingSource) -> None:
        """``source()`` maps queue (active, backoff, unschedulable, gated) to pod count."""
        self._pulled["scheduler_pending_pods"].source = source

    def set_unschedulable_source(self, source: UnschedulableSource) -> None:
        """``source()`` maps (plugin, profile) to the unschedulable pods that plugin rejected."""
        self._pulled["scheduler_unschedulable_pods"].source = source

    def set_plugin_evaluation_source(self, source: EvaluationSource) -> None:
        """``source()`` maps (plugin, extension_point, profile) to evaluations so far (a
        counter: never decreasing)."""
        self._evaluations.source = source

    def set_cache_size_source(self, source: PendingSource) -> None:
        """``source()`` maps nodes, pods and assumed_pods to their count in the cache."""
        self._pulled["scheduler_cache_size"].source = source

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format (``CONTENT_TYPE``)."""
        return prometheus_client.generate_latest(self.registry)

    def families(self) -> Iterator[Metric]:
        """The collected families (tests and the simulator read values from these)."""
        return iter(self.registry.collect())
