"""PrioritySort: higher ``spec.priority`` first, then the earlier queue timestamp."""

from __future__ import annotations

from typing import Any

NAME = "PrioritySort"


class PrioritySort:
    name = NAME

    def less(self, a: Any, b: Any) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, queued: Any) -> tuple:
        """A key ordering pods as ``less`` does, for the queue's heap."""
        return (-queued.pod.priority, queued.timestamp)


def new(args: Any, handle: Any) -> PrioritySort:
    return PrioritySort()
