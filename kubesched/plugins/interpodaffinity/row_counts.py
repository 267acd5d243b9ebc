"""Counts per node-table row, cheap while few rows have any, projected onto topology domains.

Every watched condition and every distinct term of placed pods keeps one; a cycle reads
them per domain of a topology key. Most of them count a handful of pods, so a count
starts as a dict and becomes an array only when many rows have pods; an array keeps
its sums per domain current on every change, so a cycle does not go over the rows.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import numpy.typing as npt

from ...framework.views import IntArray

__all__ = ["LabelIds", "RowCounts"]

LabelIds = npt.NDArray[np.int32]
"""A label column of the node table: per row, the id of the node's value (-1 where absent)."""


class _Projection:
    """Counts summed per value id of one label column, kept current by ``RowCounts.add``."""

    __slots__ = ("ids", "sums", "labeled")

    def __init__(self, ids: LabelIds, sums: IntArray, labeled: int) -> None:
        self.ids = ids  # the label column it was built against (the table replaces it on node changes)
        self.sums = sums  # per value id, plus the zero pad
        self.labeled = labeled  # counts on rows that have the label


class RowCounts:
    """Non-negative counts per node-table row: a dict while few rows have any, then an array.

    An array also keeps, per topology key asked about, the counts summed per value of
    that key (``_Projection``), updated on every ``add``: a cycle then reads a domain's
    count without going over the rows again.
    """

    __slots__ = ("total", "_map", "_arr", "_proj")
    DENSE_AT = 48

    def __init__(self) -> None:
        self.total = 0
        self._map: dict[int, int] = {}  # the counts while ``_arr`` is None, then ``_DENSE``
        self._arr: IntArray | None = None
        self._proj: dict[str, _Projection] | None = None

    def add(self, row: int, delta: int) -> None:
        self.total += delta
        arr = self._arr
        if arr is None:
            m = self._map
            left = m.get(row, 0) + delta
            if left:
                m[row] = left
                if len(m) > self.DENSE_AT:
                    self._densify(row + 1)
            else:
                m.pop(row, None)
            return
        if row >= len(arr):
            arr = self._densify(row + 1)
        arr[row] += delta
        if self._proj:
            for proj in self._proj.values():
                ids = proj.ids
                if row < len(ids):  # else the column is stale and will be rebuilt
                    value = ids[row]
                    if value >= 0:
                        proj.sums[value] += delta
                        proj.labeled += delta

    def _densify(self, size: int) -> IntArray:
        """Switch to (or grow) the array form, at least ``size`` rows long; the array."""
        arr = self._arr
        current = len(arr) if arr is not None else 0
        if self._map:
            size = max(size, max(self._map) + 1)
        if arr is not None and size <= current:
            return arr
        length = max(64, current)
        while length < size:
            length *= 2
        out = np.zeros(length, dtype=np.int64)
        if arr is not None:
            out[:current] = arr
        else:
            for row, count in self._map.items():
                out[row] = count
            self._map = _DENSE
        self._arr = out
        return out

    def add_from(self, other: "RowCounts") -> None:
        theirs = other._arr
        if theirs is None:
            for row, count in other._map.items():
                self.add(row, count)
            return
        arr = self._densify(len(theirs))
        arr[: len(theirs)] += theirs
        self.total += other.total
        self._proj = None

    def get(self, row: int) -> int:
        if self._arr is None:
            return self._map.get(row, 0)
        return int(self._arr[row]) if row < len(self._arr) else 0

    def items(self) -> Iterable[tuple[int, int]]:
        """(row, count) for every row with a count."""
        if self._arr is None:
            return list(self._map.items())
        rows = np.flatnonzero(self._arr)
        return list(zip(rows.tolist(), self._arr[rows].tolist()))

    def accumulate(self, key: str, ids: LabelIds, out: IntArray, weight: int = 1) -> int:
        """``out[ids[row]] += weight * count`` for each row with a count and a value of the
        topology ``key`` (``ids``: its label column; ``out``: one slot per value id plus the
        pad). Returns the counts that contributed (non-zero when any row did, as upstream's
        maps then get an entry)."""
        if self.total == 0:
            return 0
        arr = self._arr
        if arr is None:
            hit = 0
            n = len(ids)
            for row, count in self._map.items():
                if row < n:
                    value = ids[row]
                    if value >= 0:
                        out[value] += weight * count
                        hit += count
            return hit
        proj = self._proj.get(key) if self._proj is not None else None
        if proj is None or proj.ids is not ids or len(proj.sums) != len(out):
            proj = self._project(arr, ids, len(out))
            if self._proj is None:
                self._proj = {}
            self._proj[key] = proj
        if proj.labeled == 0:
            return 0
        if weight == 1:
            out += proj.sums
        else:
            out += weight * proj.sums
        return proj.labeled

    @staticmethod
    def _project(counts: IntArray, ids: LabelIds, slots: int) -> _Projection:
        arr = counts[: len(ids)]
        values = ids[: len(arr)]
        sel = (arr != 0) & (values >= 0)
        sums = np.bincount(values[sel], weights=arr[sel], minlength=slots).astype(np.int64)
        return _Projection(ids, sums, int(sums.sum()))


_DENSE: dict[int, int] = {}  # ``RowCounts._map`` in the array form: never written
