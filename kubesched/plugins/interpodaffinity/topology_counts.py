"""``TopologyCounts``: upstream's ``map[topologyPair]int64`` as arrays over the node table.

PreFilter's three maps and PreScore's topology scores are all this: per topology key,
one int64 array over the key's value ids (the node table's label column) with a zero
pad at the end, so that ``array[ids]`` reads 0 for nodes without the label (id -1).
Its own module because Filter and Score both hold them and neither owns them.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ...framework.views import IntArray, NodeTableView

__all__ = ["TopologyCounts"]


class TopologyCounts:
    """Upstream's ``map[topologyPair]int64`` over the node table: one int64 array per
    topology key, indexed by the key's value ids (``label_column``), plus a zero pad."""

    __slots__ = ("table", "arrays", "vocabs")

    def __init__(self, table: NodeTableView) -> None:
        self.table = table
        self.arrays: dict[str, IntArray] = {}
        self.vocabs: dict[str, Mapping[str, int]] = {}

    def array(self, key: str) -> IntArray:
        arr = self.arrays.get(key)
        if arr is None:
            vocab = self.table.label_column(key)[1]
            arr = np.zeros(len(vocab) + 1, dtype=np.int64)
            self.arrays[key] = arr
            self.vocabs[key] = vocab
        return arr

    def is_empty(self) -> bool:
        """``len(map) == 0``: no pair holds a count."""
        for arr in self.arrays.values():
            if arr.any():
                return False
        return True

    def get(self, key: str, value: str) -> int:
        arr = self.arrays.get(key)
        if arr is None:
            return 0
        vid = self.vocabs[key].get(value)
        return 0 if vid is None else int(arr[vid])

    def add(self, key: str, value: str, delta: int) -> None:
        arr = self.array(key)
        vid = self.vocabs[key].get(value)
        if vid is not None:
            arr[vid] += delta

    def per_row(self, key: str) -> IntArray:
        """Every table row's count at its own value of ``key`` (0 without the label)."""
        return self.array(key)[self.table.label_column(key)[0]]

    def clone(self) -> "TopologyCounts":
        out = TopologyCounts(self.table)
        out.arrays = {k: a.copy() for k, a in self.arrays.items()}
        out.vocabs = dict(self.vocabs)
        return out
