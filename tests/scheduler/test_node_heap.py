"""The heap tie-break: Go's ``container/heap`` over the scored nodes in walk order, with
``Less(i, j) = total_i > total_j`` (upstream's ``nodeScoreHeap`` without extenders)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.scheduler.node_heap import SortedScoredNodes, heap_top


def go_heap_order(totals: list[int]) -> list[int]:
    """Indices in the order ``heap.Init`` then repeated ``heap.Pop`` return them, written
    out from Go's container/heap (``down`` takes the right child only when strictly greater)."""
    h = list(range(len(totals)))

    def greater(i: int, j: int) -> bool:
        return totals[h[i]] > totals[h[j]]

    def down(i: int, n: int) -> None:
        while 2 * i + 1 < n:
            j = 2 * i + 1
            if j + 1 < n and greater(j + 1, j):
                j += 1
            if not greater(j, i):
                break
            h[i], h[j] = h[j], h[i]
            i = j

    for i in range(len(h) // 2 - 1, -1, -1):
        down(i, len(h))
    out = []
    while h:
        h[0], h[-1] = h[-1], h[0]
        down(0, len(h) - 1)
        out.append(h.pop())
    return out


@pytest.mark.parametrize("totals, order", [
    pytest.param([5, 7, 7, 3, 7], [1, 4, 2, 0, 3], id="b, e, c, a, d"),
    pytest.param([1, 1, 1, 1, 1], [0, 4, 3, 2, 1], id="five equal totals: 1st, 5th, 4th, 3rd, 2nd"),
    pytest.param([1, 2, 3, 4, 5, 6, 7, 7], [7], id="the 8th of two 7s"),
    pytest.param([3], [0], id="one node"),
])
def test_pop_order_is_go_heap_order(totals: list[int], order: list[int]) -> None:
    assert go_heap_order(totals)[: len(order)] == order
    assert heap_top(np.array(totals)) == order[0]
    rest = SortedScoredNodes(np.array(totals), np.arange(len(totals)))
    assert [rest.pop() for _ in range(len(rest))] == go_heap_order(totals)[1:]


def test_the_first_pop_is_the_first_top_total_in_pre_order() -> None:
    rng = random.Random(7)
    for _ in range(500):
        totals = [rng.randint(0, 3) for _ in range(rng.randint(1, 300))]
        assert heap_top(np.array(totals)) == go_heap_order(totals)[0]


def test_stored_nodes_pop_by_name_after_the_chosen_one() -> None:
    names = ["n0", "n1", "n2", "n3"]
    rest = SortedScoredNodes(np.array([10, 30, 20, 30]), np.array([3, 2, 1, 0]), names)
    assert len(rest) == 3
    assert [rest.pop_name() for _ in range(3)] == ["n0", "n1", "n3"]  # rows 0, 1 (20), 3 (10)
