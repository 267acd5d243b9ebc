"""Pods being scheduled (popped, not yet done) and the cluster events seen meanwhile.

Upstream's ``inFlightPods`` / ``inFlightEvents``: an event that arrives while a pod is
in flight may be what makes it schedulable, so if its attempt fails the queue replays
the events seen since it was popped against it before filing it as unschedulable. The
log keeps only the events some in-flight pod has not yet passed: it is emptied when no
pod is in flight, and trimmed to the oldest in-flight pod's start when one is done.

Pods are popped in order, so their start indices never decrease: an ``OrderedDict``
in pop order has the oldest start first, found in constant time (a minimum over every
pod in flight on each completion was quadratic over a burst). The log's head is cut
only once it is at least half the log, so trimming costs amortised constant time too.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..framework.events import ClusterEvent

__all__ = ["InFlight", "EventRecord"]

EventRecord = tuple[ClusterEvent, Any, Any]
"""(event, old object, new object) as the queue received it."""


class InFlight:
    __slots__ = ("_since", "_events", "_base")

    def __init__(self) -> None:
        # uid -> absolute index of the first event it has not seen, in pop order (so by index)
        self._since: OrderedDict[str, int] = OrderedDict()
        self._events: list[EventRecord] = []
        self._base = 0  # absolute index of _events[0]

    def popped(self, uid: str) -> None:
        self._since.pop(uid, None)  # popped again: its new start is the newest
        self._since[uid] = self._base + len(self._events)

    def record(self, event: ClusterEvent, old: Any, new: Any) -> None:
        """Keep an event for the pods in flight (none: nothing to keep)."""
        if self._since:
            self._events.append((event, old, new))

    def seen_by(self, uid: str) -> list[EventRecord] | None:
        """The events since the pod was popped; None if it is not in flight."""
        start = self._since.get(uid)
        if start is None:
            return None
        return self._events[start - self._base :]

    def done(self, uid: str) -> bool:
        """The pod's attempt is over; False if it was not in flight."""
        if self._since.pop(uid, None) is None:
            return False
        if not self._since:
            self._base += len(self._events)
            self._events.clear()
        elif self._events:
            oldest = next(iter(self._since.values()))
            drop = oldest - self._base
            if drop > 0 and 2 * drop >= len(self._events):
                del self._events[:drop]
                self._base += drop
        return True

    def __contains__(self, uid: object) -> bool:
        return uid in self._since

    def __bool__(self) -> bool:
        return bool(self._since)

    def __len__(self) -> int:
        return len(self._since)
