"""What the pods on each node row add up to, and the log of rows whose totals changed.

Its own module because it is the one writer of the requested columns after a row is
made, and because of what the log enables: ``row_cached`` keeps per-row values (free
resources, scores of a pod shape) current across cycles by recomputing only the rows
the log names since the last answer, instead of every row every cycle.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

import numpy as np

from ..objects.pod import PodInfo
from .node_columns import NodeColumns

__all__ = ["PodAccounting"]

_ROW_LOG_LIMIT = 1 << 16  # account_pod calls remembered for row_cached()
_ROW_CACHE_PATCH_LIMIT = 256  # more changed rows than this: recompute every row at once
# More changed rows than this: patch them with one array computation, not row by row in
# Python (a row costs several microseconds in Python; an array call a few, whatever its
# length). A pod shape seen every few dozen pods finds dozens of rows changed.
_ROW_CACHE_SCALAR_LIMIT = 8
_ROW_CACHE_KEYS = 256  # row_cached() keys kept (each holds one value per row) ...
_ROW_CACHE_VALUES = 1 << 20  # ... and fewer on big tables: about this many values (8 MiB) in all


class PodAccounting(NodeColumns):
    """Requested totals and host ports per row, the row log and ``row_cached``; see ``NodeTable``."""

    node_generation: int  # NodeTable's: bumps on any node change

    def __init__(self, capacity: int = 64) -> None:
        super().__init__(capacity)
        # (protocol, port) -> row -> ip -> number of pods using it; for NodePorts
        self.ports: dict[tuple[str, int], dict[int, dict[str, int]]] = {}
        # Pod accounting changes, for row_cached(): pod_generation counts account_pod
        # calls; _row_log[i] is the row of call _row_log_base + i (the recent ones).
        self.pod_generation = 0
        self._row_log: list[int] = []
        self._row_log_base = 0
        self._row_cache: dict[Hashable, list[Any]] = {}  # key -> [node_generation, pod_generation, values]
        self._row_cache_asked: dict[Hashable, bool] = {}  # keys asked for once, not cached yet

    def account_pod(self, row: int, pod: PodInfo, sign: int) -> None:
        req = pod.requests
        r = req.requests
        self.req_cpu[row] += sign * r.milli_cpu
        self.req_mem[row] += sign * r.memory
        self.req_eph[row] += sign * r.ephemeral_storage
        self.nz_cpu[row] += sign * req.non_zero_milli_cpu
        self.nz_mem[row] += sign * req.non_zero_memory
        self.pod_count[row] += sign
        for name, amount in r.scalar.items():
            self._scalar(name)[1][row] += sign * amount
        for port in pod.host_ports:
            by_row = self.ports.setdefault((port.protocol, port.port), {})
            ips = by_row.setdefault(row, {})
            # Upstream's HostPortInfo is a set: a port two pods declare is freed when
            # either of them leaves (kept as a quirk: decisions must be upstream's).
            if sign > 0:
                ips[port.ip] = 1
            else:
                ips.pop(port.ip, None)
                if not ips:
                    del by_row[row]
                    if not by_row:
                        del self.ports[(port.protocol, port.port)]
        # Logged once the columns hold the new totals, so that a reader who sees this
        # generation also sees them.
        log = self._row_log
        log.append(row)
        if len(log) > _ROW_LOG_LIMIT:
            half = len(log) // 2
            del log[:half]
            self._row_log_base += half
        self.pod_generation += 1

    def _forget_ports(self, row: int) -> None:
        """The row's node is gone: no port is in use on it any more."""
        for key in list(self.ports):
            by_row = self.ports[key]
            by_row.pop(row, None)
            if not by_row:
                del self.ports[key]

    def rows_changed_since(self, pod_generation: int) -> list[int] | None:
        """Rows whose pod totals changed since ``pod_generation`` (repeats possible), or
        None when that is too long ago to tell."""
        if pod_generation < self._row_log_base:
            return None
        return self._row_log[pod_generation - self._row_log_base :]

    def row_cached(
        self,
        key: Hashable,
        compute: Callable[[np.ndarray], np.ndarray],
        compute_row: Callable[[int], Any] | None = None,
        eager: bool = False,
    ) -> np.ndarray | None:
        """Per-row values for ``key``, kept current across cycles; None the first time a key is asked.

        ``compute(rows)`` returns the values at ``rows``; they must depend only on what
        ``key`` holds and on this table's columns at those rows (allocatable, requested,
        pod counts: what nodes and ``account_pod`` change). The first request for a key
        answers None (compute just the rows you need: a pod shape seen once is not worth
        caching; ``eager`` caches from the first request, for callers that need every
        row anyway); from the second on, the values of every row are computed once and then
        brought up to date by recomputing only the rows whose pods changed since, with
        ``compute_row(row)`` (a scalar, cheaper than array operations for a row or two)
        when given. The array is valid until the table next changes: read it, index it,
        do not keep or modify it.
        """
        node_generation, pod_generation = self.node_generation, self.pod_generation  # before reading rows
        entry = self._row_cache.get(key)
        if entry is not None and entry[0] == node_generation:
            if entry[1] == pod_generation:
                cached: np.ndarray = entry[2]
                return cached
            changed = self.rows_changed_since(entry[1])
            if changed is not None:
                changed = changed[: pod_generation - entry[1]]
            if changed is not None and len(changed) <= _ROW_CACHE_PATCH_LIMIT:
                values = entry[2]
                distinct = set(changed)
                if compute_row is not None and len(distinct) <= _ROW_CACHE_SCALAR_LIMIT:
                    for row in distinct:
                        values[row] = compute_row(row)
                elif distinct:
                    rows = np.fromiter(distinct, dtype=np.int64, count=len(distinct))
                    values[rows] = compute(rows)
                entry[1] = pod_generation
                patched: np.ndarray = values
                return patched
        elif entry is None and not eager and key not in self._row_cache_asked:
            if len(self._row_cache_asked) >= _ROW_CACHE_KEYS:
                self._row_cache_asked.clear()
            self._row_cache_asked[key] = True
            return None
        values = compute(np.arange(self.size))
        cache = self._row_cache
        cache.pop(key, None)
        while cache and len(cache) >= max(16, min(_ROW_CACHE_KEYS, _ROW_CACHE_VALUES // max(self.size, 1))):
            del cache[next(iter(cache))]  # the oldest
        cache[key] = [node_generation, pod_generation, values]
        return values
