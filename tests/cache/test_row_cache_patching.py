"""NodeTable.row_cached brings a cached key up to date by recomputing the rows whose pods
changed: row by row (``compute_row``) when they are a handful, with one array call on
just those rows when there are more (a pod shape seen again after dozens of bindings).
Either way the answer equals computing every row from scratch."""

from __future__ import annotations

import random

import numpy as np

from kubesched.cache import pod_accounting as node_table_module
from kubesched.cache.node_table import NodeTable
from tests.helpers import make_node, make_pod


def _table(nodes: int = 60) -> NodeTable:
    table = NodeTable(capacity=8)
    for i in range(nodes):
        table.add_node(make_node(f"n{i}", cpu="4", memory="8Gi"))
    return table


class _Counting:
    """A per-row value (requested cpu times 3) and counts of how each form was called."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.array_rows: list[int] = []
        self.scalar_rows = 0

    def compute(self, rows: np.ndarray) -> np.ndarray:
        self.array_rows.append(len(rows))
        return self.table.req_cpu[rows] * 3

    def compute_row(self, row: int) -> int:
        self.scalar_rows += 1
        return int(self.table.req_cpu[row]) * 3

    def ask(self) -> np.ndarray | None:
        return self.table.row_cached("k", self.compute, self.compute_row, eager=True)


def _bind(table: NodeTable, rows: list[int]) -> None:
    for row in rows:
        table.account_pod(row, make_pod(f"p{row}-{random.random()}", cpu="100m"), 1)


def test_a_few_changed_rows_are_patched_row_by_row():
    table = _table()
    counting = _Counting(table)
    counting.ask()
    _bind(table, [1, 2, 3])
    values = counting.ask()
    assert counting.scalar_rows == 3 and counting.array_rows == [60]
    assert np.array_equal(values, table.req_cpu[: table.size] * 3)


def test_many_changed_rows_are_patched_with_one_array_call_on_those_rows():
    table = _table()
    counting = _Counting(table)
    counting.ask()
    changed = list(range(0, 60, 2))  # 30 rows, more than the scalar limit
    assert len(changed) > node_table_module._ROW_CACHE_SCALAR_LIMIT
    _bind(table, changed + changed[:5])  # repeats count once
    values = counting.ask()
    assert counting.scalar_rows == 0 and counting.array_rows == [60, 30]
    assert np.array_equal(values, table.req_cpu[: table.size] * 3)


def test_patched_values_equal_a_fresh_computation_over_random_histories():
    rng = random.Random(3)
    table = _table()
    counting = _Counting(table)
    counting.ask()
    for _ in range(40):
        _bind(table, [rng.randrange(60) for _ in range(rng.choice([0, 1, 5, 20, 50]))])
        assert np.array_equal(counting.ask(), table.req_cpu[: table.size] * 3)
