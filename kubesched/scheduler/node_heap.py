"""Upstream's choice among scored nodes: Go's ``container/heap`` over the walk order.

``prioritizeNodes`` lists the scored nodes in the order the filter walk found them;
``newSortedNodeScores`` runs ``heap.Init`` on them with ``Less(i, j) = total_i >
total_j`` (upstream's random key is only set when extenders score), and
``selectHost`` is one ``heap.Pop``. Among equal top totals the node taken is neither
the first nor the smallest-named in general: ``heap.Init`` leaves at the root the
first top-scored node in *pre-order* of the implicit binary tree (node ``i`` has
children ``2i+1`` and ``2i+2``), since a subtree's root moves up only past strictly
smaller parents, and a left child wins over an equal right one. ``heap_top`` finds it
with array operations over the pre-order rank of each position; ``SortedScoredNodes`` keeps the rest of the heap for
OpportunisticBatching, which pops further nodes as hints.
"""

from __future__ import annotations

import numpy as np

__all__ = ["heap_top", "SortedScoredNodes"]


def heap_top(totals: np.ndarray, is_top: np.ndarray | None = None) -> int:
    """The index (into ``totals``) ``heap.Init`` then ``heap.Pop`` would return;
    ``is_top``, if given, is ``totals == totals.max()``."""
    if is_top is None:
        is_top = totals == totals.max()
    n = len(totals)
    return int(np.where(is_top, _preorder_rank(n), n).argmin())


_RANKS: dict[int, np.ndarray] = {}


def _preorder_rank(n: int) -> np.ndarray:
    """Each heap position's place in the pre-order walk of a heap of ``n`` (node ``i`` has
    children ``2i+1`` and ``2i+2``); cached per size, as a cycle's count of scored nodes
    repeats from pod to pod."""
    found = _RANKS.get(n)
    if found is None:
        found = np.empty(n, dtype=np.int64)
        stack, k = [0] if n else [], 0
        while stack:
            i = stack.pop()
            found[i] = k
            k += 1
            right = 2 * i + 2
            if right < n:
                stack.append(right)
            if right - 1 < n:
                stack.append(right - 1)
        if len(_RANKS) >= 256:
            _RANKS.clear()
        found.flags.writeable = False
        _RANKS[n] = found
    return found


class SortedScoredNodes:
    """The scored nodes as upstream's ``sortedNodeScores`` after its first ``Pop``.

    Built from the totals and rows in walk order; the heap itself is made only when a
    hint asks for the next node (most stored states are never read).
    """

    __slots__ = ("_totals", "_rows", "_names", "_heap")

    def __init__(self, totals: np.ndarray, rows: np.ndarray, names: list[str] | None = None) -> None:
        self._totals = totals
        self._rows = rows
        self._names = names  # row -> node name when the nodes were scored
        self._heap: list[tuple[int, int]] | None = None

    def __len__(self) -> int:
        return len(self._heap) if self._heap is not None else len(self._rows) - 1

    def pop(self) -> int:
        """The next node's row (``heap.Pop``)."""
        heap = self._heap
        if heap is None:
            heap = self._heap = list(zip(self._totals.tolist(), self._rows.tolist()))
            for i in range(len(heap) // 2 - 1, -1, -1):
                _down(heap, i, len(heap))
            _pop(heap)  # the node the full cycle chose
        return _pop(heap)[1]

    def pop_name(self) -> str:
        """The next node's name (rows may be reused once a node is gone; names are not)."""
        row = self.pop()
        return self._names[row] if self._names is not None else str(row)


def _down(h: list[tuple[int, int]], i: int, n: int) -> None:
    while True:
        left = 2 * i + 1
        if left >= n:
            return
        j = left
        if left + 1 < n and h[left + 1][0] > h[left][0]:
            j = left + 1
        if not h[j][0] > h[i][0]:
            return
        h[i], h[j] = h[j], h[i]
        i = j


def _pop(h: list[tuple[int, int]]) -> tuple[int, int]:
    n = len(h) - 1
    h[0], h[n] = h[n], h[0]
    _down(h, 0, n)
    return h.pop()
