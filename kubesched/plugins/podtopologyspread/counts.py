"""Incremental counts of matching pods per node row, one column per (namespace, selector).

``MatchCounts`` is a cache observer (``Cache.add_observer``): every pod placed on or
removed from a node (assume, forget, bind, delete, node removal) updates the
column of each tracked (namespace, selector) the pod matches, so a scheduling
cycle reads "how many pods in namespace N matching S sit on each node" as one
numpy array instead of walking the pods (upstream's ``countPodsMatchSelector``).

A column is built on first request with one pass over the pods in the cache, and
kept current from then on. Columns not read for a long time are dropped (least
recently used first) once more than ``max_columns`` exist, which bounds both the
memory (one int32 per node row per column) and the work per pod event.
Terminating pods (with a deletion timestamp) never count, as upstream.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from ...framework.handle import Handle
from ...framework.views import IntArray
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ...objects.selectors import LabelSelector


__all__ = ["Counts", "DomainMap", "MatchCounts"]

Counts = npt.NDArray[np.int32]
"""Matching pods per node-table row."""
DomainMap = npt.NDArray[np.int32]
"""Per row, a domain id in ``0 .. slots-1``."""


class _Column:
    __slots__ = ("counts", "selector", "totals")

    def __init__(self, selector: LabelSelector, size: int) -> None:
        self.selector = selector
        self.counts: Counts = np.zeros(size, dtype=np.int32)
        # id(domain map) -> (domain map, totals per domain): see ``MatchCounts.domain_totals``
        self.totals: dict[int, tuple[DomainMap, IntArray]] = {}


class MatchCounts:
    """Per (namespace, selector): an int32 count of matching, non-terminating pods per table row."""

    def __init__(self, handle: Handle, max_columns: int = 1024) -> None:
        self._snapshot = handle.snapshot()
        self.max_columns = max_columns
        self._columns: OrderedDict[tuple[str, LabelSelector], _Column] = OrderedDict()
        self._by_namespace: dict[str, dict[LabelSelector, _Column]] = {}
        self.builds = 0  # columns built by a full pass (for tests and benchmarks)
        handle.add_pod_observer(self)

    # -- reading ------------------------------------------------------------
    def column(self, namespace: str, selector: LabelSelector, size: int) -> Counts:
        """Counts for rows ``0 .. size-1`` (a view: do not modify)."""
        key = (namespace, selector)
        col = self._columns.get(key)
        if col is None:
            col = self._build(namespace, selector, size)
        else:
            self._columns.move_to_end(key)
            if len(col.counts) < size:
                col.counts = _widen(col.counts, size)
        return col.counts[:size]

    def domain_totals(self, namespace: str, selector: LabelSelector, domain_of_row: DomainMap, slots: int) -> IntArray:
        """Matching pods per domain, for a map ``domain_of_row`` (row -> domain in ``0..slots-1``).

        Kept current pod by pod like the counts themselves, so reading it costs nothing
        per node. The map must not change while in use; every map is forgotten when a
        node changes (the caller's maps follow the node table). Read-only for callers.
        """
        size = len(domain_of_row)
        self.column(namespace, selector, size)
        col = self._columns[(namespace, selector)]
        found = col.totals.get(id(domain_of_row))
        if found is None or found[0] is not domain_of_row:
            totals = np.bincount(domain_of_row, weights=col.counts[:size], minlength=slots).astype(np.int64)
            if len(col.totals) >= 8:
                col.totals.clear()
            col.totals[id(domain_of_row)] = (domain_of_row, totals)
            return totals
        return found[1]

    def __len__(self) -> int:
        return len(self._columns)

    def _build(self, namespace: str, selector: LabelSelector, size: int) -> _Column:
        size = max(size, self._snapshot.table.size)
        col = _Column(selector, size)
        counts = col.counts
        for info in self._snapshot.node_infos:
            if info is None:
                continue
            row = info.row
            n = 0
            for pod in info.pods.values():
                if pod.namespace == namespace and not pod.terminating and selector.matches(pod.labels):
                    n += 1
            if n:
                if row >= len(counts):
                    counts = col.counts = _widen(counts, row + 1)
                counts[row] = n
        key = (namespace, selector)
        self._columns[key] = col
        self._by_namespace.setdefault(namespace, {})[selector] = col
        self.builds += 1
        while len(self._columns) > self.max_columns:
            (ns, sel), _ = self._columns.popitem(last=False)
            by_sel = self._by_namespace.get(ns)
            if by_sel is not None:
                by_sel.pop(sel, None)
                if not by_sel:
                    del self._by_namespace[ns]
        return col

    # -- PodObserver ----------------------------------------------------------
    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None:
        self._account(pod, node.row, 1)

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None:
        self._account(pod, node.row, -1)

    def nodes_changed(self) -> None:
        """Counts stay (rows keep their meaning; a removed node's pods were removed first);
        per-domain totals are dropped, their domain maps are out of date."""
        for col in self._columns.values():
            col.totals.clear()

    def _account(self, pod: PodInfo, row: int, delta: int) -> None:
        if pod.terminating:
            return
        by_sel = self._by_namespace.get(pod.namespace)
        if not by_sel:
            return
        labels = pod.labels
        for selector, col in by_sel.items():
            if selector.matches(labels):
                counts = col.counts
                if row >= len(counts):
                    counts = col.counts = _widen(counts, row + 1)
                counts[row] += delta
                for domain_of_row, totals in col.totals.values():
                    if row < len(domain_of_row):
                        totals[domain_of_row[row]] += delta


def _widen(arr: Counts, size: int) -> Counts:
    out = np.zeros(max(size, 2 * len(arr), 64), dtype=arr.dtype)
    out[: len(arr)] = arr
    return out
