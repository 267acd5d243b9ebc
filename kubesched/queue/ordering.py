"""activeQ's order, from the profile's QueueSort plugin.

A plugin may give a sort key (fast: the heap compares tuples) or only upstream's
``Less`` (wrapped with ``functools.cmp_to_key``); without one, PrioritySort's order.
Apart from the queue so that the heaps' key is chosen in one small place.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..framework.interfaces import QueueSortKey, QueueSortPlugin
from ..framework.queued_pod import QueuedPodInfo

__all__ = ["sort_key"]


def sort_key(less: QueueSortPlugin | None) -> Callable[[QueuedPodInfo], Any]:
    """The heap key that orders pods as ``less`` does."""
    if less is None:
        return lambda qp: (-qp.pod.priority, qp.timestamp)
    if isinstance(less, QueueSortKey):
        return less.sort_key

    def compare(a: QueuedPodInfo, b: QueuedPodInfo) -> int:
        return -1 if less.less(a, b) else (1 if less.less(b, a) else 0)

    return functools.cmp_to_key(compare)
