"""Go's ``sort.Slice`` (pattern-defeating quicksort, Go 1.19+), step for step.

Preemption sorts victims with ``sort.Slice``, which is not stable: pods equally
important (same priority, same start time) end up in an order that depends on the
algorithm's exact swaps, and that order decides which of them a dry run reprieves.
Python's stable sort would pick other victims, so the sort is redone as Go does it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["go_sort_slice"]

T = TypeVar("T")
Less = Callable[[int, int], bool]
Swap = Callable[[int, int], None]

_MASK = (1 << 64) - 1
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def go_sort_slice(items: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``items`` in place exactly as ``sort.Slice(items, less)`` would."""
    n = len(items)

    def lt(i: int, j: int) -> bool:
        return less(items[i], items[j])

    def swap(i: int, j: int) -> None:
        items[i], items[j] = items[j], items[i]

    _pdqsort(lt, swap, 0, n, n.bit_length())


def _insertion_sort(lt: Less, swap: Swap, a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and lt(j, j - 1):
            swap(j, j - 1)
            j -= 1


def _sift_down(lt: Less, swap: Swap, lo: int, hi: int, first: int) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and lt(first + child, first + child + 1):
            child += 1
        if not lt(first + root, first + child):
            return
        swap(first + root, first + child)
        root = child


def _heap_sort(lt: Less, swap: Swap, a: int, b: int) -> None:
    first, lo, hi = a, 0, b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(lt, swap, i, hi, first)
    for i in range(hi - 1, -1, -1):
        swap(first, first + i)
        _sift_down(lt, swap, lo, i, first)


def _pdqsort(lt: Less, swap: Swap, a: int, b: int, limit: int) -> None:
    was_balanced = was_partitioned = True
    while True:
        length = b - a
        if length <= 12:
            _insertion_sort(lt, swap, a, b)
            return
        if limit == 0:
            _heap_sort(lt, swap, a, b)
            return
        if not was_balanced:
            _break_patterns(swap, a, b)
            limit -= 1
        pivot, hint = _choose_pivot(lt, a, b)
        if hint == _DECREASING:
            _reverse_range(swap, a, b)
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING
        if was_balanced and was_partitioned and hint == _INCREASING:
            if _partial_insertion_sort(lt, swap, a, b):
                return
        if a > 0 and not lt(a - 1, pivot):
            a = _partition_equal(lt, swap, a, b, pivot)
            continue
        mid, already = _partition(lt, swap, a, b, pivot)
        was_partitioned = already
        left, right = mid - a, b - mid
        threshold = length // 8
        if left < right:
            was_balanced = left >= threshold
            _pdqsort(lt, swap, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right >= threshold
            _pdqsort(lt, swap, mid + 1, b, limit)
            b = mid


def _partition(lt: Less, swap: Swap, a: int, b: int, pivot: int) -> tuple[int, bool]:
    swap(a, pivot)
    i, j = a + 1, b - 1
    while i <= j and lt(i, a):
        i += 1
    while i <= j and not lt(j, a):
        j -= 1
    if i > j:
        swap(j, a)
        return j, True
    swap(i, j)
    i += 1
    j -= 1
    while True:
        while i <= j and lt(i, a):
            i += 1
        while i <= j and not lt(j, a):
            j -= 1
        if i > j:
            break
        swap(i, j)
        i += 1
        j -= 1
    swap(j, a)
    return j, False


def _partition_equal(lt: Less, swap: Swap, a: int, b: int, pivot: int) -> int:
    swap(a, pivot)
    i, j = a + 1, b - 1
    while True:
        while i <= j and not lt(a, i):
            i += 1
        while i <= j and lt(a, j):
            j -= 1
        if i > j:
            break
        swap(i, j)
        i += 1
        j -= 1
    return i


def _partial_insertion_sort(lt: Less, swap: Swap, a: int, b: int) -> bool:
    max_steps, shortest_shifting = 5, 50
    i = a + 1
    for _ in range(max_steps):
        while i < b and not lt(i, i - 1):
            i += 1
        if i == b:
            return True
        if b - a < shortest_shifting:
            return False
        swap(i, i - 1)
        if i - a >= 2:
            for j in range(i - 1, 0, -1):
                if not lt(j, j - 1):
                    break
                swap(j, j - 1)
        if b - i >= 2:
            for j in range(i + 1, b):
                if not lt(j, j - 1):
                    break
                swap(j, j - 1)
    return False


def _break_patterns(swap: Swap, a: int, b: int) -> None:
    length = b - a
    if length >= 8:
        state = length
        modulus = 1 << length.bit_length()
        for idx in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
            state ^= (state << 13) & _MASK
            state ^= state >> 7
            state ^= (state << 17) & _MASK
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            swap(idx, a + other)


def _choose_pivot(lt: Less, a: int, b: int) -> tuple[int, int]:
    shortest_ninther, max_swaps = 50, 4 * 3
    length = b - a
    swaps = [0]
    i, j, k = a + length // 4 * 1, a + length // 4 * 2, a + length // 4 * 3
    if length >= 8:
        if length >= shortest_ninther:
            i = _median(lt, i - 1, i, i + 1, swaps)
            j = _median(lt, j - 1, j, j + 1, swaps)
            k = _median(lt, k - 1, k, k + 1, swaps)
        j = _median(lt, i, j, k, swaps)
    if swaps[0] == 0:
        return j, _INCREASING
    if swaps[0] == max_swaps:
        return j, _DECREASING
    return j, _UNKNOWN


def _order2(lt: Less, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
    if lt(b, a):
        swaps[0] += 1
        return b, a
    return a, b


def _median(lt: Less, a: int, b: int, c: int, swaps: list[int]) -> int:
    a, b = _order2(lt, a, b, swaps)
    b, c = _order2(lt, b, c, swaps)
    a, b = _order2(lt, a, b, swaps)
    return b


def _reverse_range(swap: Swap, a: int, b: int) -> None:
    i, j = a, b - 1
    while i < j:
        swap(i, j)
        i += 1
        j -= 1
