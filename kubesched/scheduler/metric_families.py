"""Counter, gauge and histogram families whose hot-path update is a plain dict/list
operation, exposed through prometheus_client at scrape time.

prometheus_client's ``Counter.inc`` and ``Histogram.observe`` take a lock per call and
``labels(...)`` resolves a child per call; the scheduler records about 80 samples per
pod, which made the library about a tenth of the live process's CPU (issue 20). These
families keep one cell per label tuple (an int, a float, or a list of per-bucket counts
plus the sum) and a registered ``Collector`` turns them into the same families
prometheus_client's own metrics would yield: the same names, help, types, sample names,
label order, ``le`` strings and float values, so ``/metrics`` reads byte for byte as
before. Exposition (text format, content negotiation) stays prometheus_client's.

Each family takes one lock per update (the binding cycles' PreBind and Bind record from
worker threads while the loop records the rest: an unlocked ``+=`` could lose a count);
an uncontended lock costs a fraction of a microsecond, the library's layers several. A
scrape copies each family's cells under the lock before reading them.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

__all__ = ["CounterFamily", "GaugeFamily", "HistogramFamily"]

LabelValues = tuple[str, ...]


class _SummedFamily(Collector):
    """One number per label tuple, moved by ``inc``; the family type says how it is exposed."""

    _exposed_as: type[CounterMetricFamily] | type[GaugeMetricFamily]

    def __init__(self, name: str, help_text: str, labels: Sequence[str] = (),
                 registry: CollectorRegistry | None = None) -> None:
        self.name = name
        self.help = help_text
        self.labels = tuple(labels)
        self.cells: dict[LabelValues, float] = {}
        self._lock = threading.Lock()
        if not self.labels:  # an unlabelled series is exposed (at 0) from the start
            self.cells[()] = 0
        if registry is not None:
            registry.register(self)

    def inc(self, key: LabelValues = (), amount: float = 1) -> None:
        cells = self.cells
        self._lock.acquire()  # not ``with``: cheaper (try is free in 3.11, the context manager is not)
        try:
            cells[key] = cells.get(key, 0) + amount
        finally:
            self._lock.release()

    def describe(self) -> Iterable[Metric]:
        return [self._exposed_as(self.name, self.help, labels=self.labels)]

    def collect(self) -> Iterable[Metric]:
        family = self._exposed_as(self.name, self.help, labels=self.labels)
        with self._lock:
            cells = list(self.cells.items())
        for key, value in cells:
            family.add_metric([str(v) for v in key], float(value))
        return [family]


class CounterFamily(_SummedFamily):
    """A counter: ``cells[label values] += 1``. ``name`` is the exposed name (with
    ``_total``), as upstream spells it."""

    _exposed_as = CounterMetricFamily


class GaugeFamily(_SummedFamily):
    """A gauge moved up and down by deltas (``inc``) per label tuple."""

    _exposed_as = GaugeMetricFamily


class HistogramFamily(Collector):
    """A histogram: per label tuple a list of per-bucket counts (the last bucket is
    ``+Inf``) followed by the sum. An observation lands in the first bucket whose upper
    bound is at least the value, as prometheus_client places it."""

    def __init__(self, name: str, help_text: str, labels: Sequence[str], buckets: Sequence[float],
                 registry: CollectorRegistry | None = None) -> None:
        self.name = name
        self.help = help_text
        self.labels = tuple(labels)
        bounds = [float(b) for b in buckets]
        if not bounds or bounds[-1] != float("inf"):
            bounds.append(float("inf"))
        self.bounds: tuple[float, ...] = tuple(bounds)
        self._le: tuple[str, ...] = tuple(floatToGoString(b) for b in self.bounds)  # type: ignore[no-untyped-call]
        self._width = len(self.bounds)
        self.cells: dict[LabelValues, list[float]] = {}
        self._lock = threading.Lock()
        if not self.labels:
            self.cells[()] = self._new_cell()
        if registry is not None:
            registry.register(self)

    def _new_cell(self) -> list[float]:
        return [0] * self._width + [0.0]

    def observe(self, key: LabelValues, amount: float) -> None:
        index = bisect_left(self.bounds, amount)
        self._lock.acquire()  # not ``with``: cheaper (try is free in 3.11, the context manager is not)
        try:
            cell = self.cells.get(key)
            if cell is None:
                cell = self.cells[key] = self._new_cell()
            cell[index] += 1
            cell[-1] += amount
        finally:
            self._lock.release()

    def describe(self) -> Iterable[Metric]:
        return [HistogramMetricFamily(self.name, self.help, labels=self.labels)]

    def collect(self) -> Iterable[Metric]:
        family = HistogramMetricFamily(self.name, self.help, labels=self.labels)
        width = self._width
        with self._lock:
            cells = [(key, cell[:]) for key, cell in self.cells.items()]
        for key, counts in cells:
            buckets: list[tuple[str, float]] = []
            total = 0.0
            for i in range(width):
                total += counts[i]
                buckets.append((self._le[i], total))
            family.add_metric([str(v) for v in key], buckets, float(counts[width]))
        return [family]
