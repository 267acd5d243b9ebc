"""PrioritySort: higher ``spec.priority`` first, then the earlier queue timestamp."""

from __future__ import annotations

from ..framework import Handle, QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, queued: QueuedPodInfo) -> tuple[int, float]:
        """A key ordering pods as ``less`` does, for the queue's heap."""
        return (-queued.pod.priority, queued.timestamp)


def new(args: None, handle: Handle) -> PrioritySort:
    return PrioritySort()
