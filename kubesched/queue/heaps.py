"""The heaps behind activeQ and backoffQ.

``PodHeap`` is a binary heap with lazy deletion keyed by pod uid: push, remove and
membership are O(log n) / O(1), and the head is found by discarding dead entries.
``BackoffQueue`` is upstream's backoffQ: two such heaps ordered by backoff expiry, one
for pods rejected by plugins (``podBackoffQ``) and one for pods that failed with an
error (``podErrorBackoffQ``); only the first may be popped before its backoff ends.
Every change of its membership can be reported to an observer, so that a caller (the
simulator) can keep facts about the backing-off pods without listing them.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable

from ..framework.queued_pod import QueuedPodInfo

__all__ = ["PodHeap", "BackoffQueue", "MembershipObserver"]

MembershipObserver = Callable[[str, bool], None]
"""``observer(uid, entered)``: the pod entered (True) or left (False) backoffQ."""


class PodHeap:
    """A heap with lazy deletion, keyed by pod uid.

    An entry is a flat tuple, the sort key's fields then the pod's arrival number then the
    pod (``(-priority, timestamp, seq, info)`` for PrioritySort): tuples of plain values
    compare in one C call, where nested keys cost a comparison per level at every step of
    the heap. ``seq`` is unique, so the pod itself is never compared. An entry is live while
    ``_entries`` holds that very tuple for its uid; a removed or replaced one is dropped
    when it reaches the top.
    """

    __slots__ = ("_key", "_heap", "_entries")

    def __init__(self, key: Callable[[QueuedPodInfo], Any]) -> None:
        self._key = key
        self._heap: list[tuple[Any, ...]] = []
        self._entries: dict[str, tuple[Any, ...]] = {}

    def push(self, info: QueuedPodInfo) -> None:
        key = self._key(info)
        entry = (*key, info.seq, info) if type(key) is tuple else (key, info.seq, info)
        self._entries[info.uid] = entry  # any earlier entry of the pod is dead from now on
        heapq.heappush(self._heap, entry)
        if len(self._heap) > 2 * len(self._entries) + 64:
            self._compact()

    def _compact(self) -> None:
        """Drop dead entries once they outnumber the live ones (removals deep in the heap)."""
        self._heap = list(self._entries.values())
        heapq.heapify(self._heap)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        entry = self._entries.pop(uid, None)
        if entry is None:
            return None
        info: QueuedPodInfo = entry[-1]
        return info

    def _live(self, entry: tuple[Any, ...]) -> bool:
        return self._entries.get(entry[-1].uid) is entry

    def peek(self) -> QueuedPodInfo | None:
        heap = self._heap
        while heap and not self._live(heap[0]):
            heapq.heappop(heap)
        return heap[0][-1] if heap else None

    def pop(self) -> QueuedPodInfo | None:
        heap, entries = self._heap, self._entries
        while heap:
            entry = heapq.heappop(heap)
            info: QueuedPodInfo = entry[-1]
            uid = info.pod.uid
            if entries.get(uid) is entry:
                del entries[uid]
                return info
        return None

    def get(self, uid: str) -> QueuedPodInfo | None:
        entry = self._entries.get(uid)
        return entry[-1] if entry else None

    def __contains__(self, uid: str) -> bool:
        return uid in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> list[QueuedPodInfo]:
        return [e[-1] for e in self._entries.values()]


class BackoffQueue:
    """backoffQ: pods rejected by plugins and pods that failed with an error, in two heaps
    ordered by backoff expiry (then as activeQ)."""

    __slots__ = ("unschedulable", "errors", "observer")

    def __init__(self, key: Callable[[QueuedPodInfo], Any]) -> None:
        self.unschedulable = PodHeap(key)
        self.errors = PodHeap(key)
        self.observer: MembershipObserver | None = None

    def push(self, info: QueuedPodInfo) -> None:
        """Add the pod, or re-order it if it is already here (its pod object changed)."""
        uid = info.uid
        present = uid in self.unschedulable or uid in self.errors
        if info.consecutive_errors_count > 0:
            self.unschedulable.remove(uid)
            self.errors.push(info)
        else:
            self.errors.remove(uid)
            self.unschedulable.push(info)
        if not present and self.observer is not None:
            self.observer(uid, True)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        info = self.unschedulable.remove(uid) or self.errors.remove(uid)
        if info is not None and self.observer is not None:
            self.observer(uid, False)
        return info

    def pop_unschedulable(self) -> QueuedPodInfo | None:
        """The first pod rejected by plugins, backing off or not (``SchedulerPopFromBackoffQ``)."""
        return self._left(self.unschedulable.pop())

    def pop_completed(self, backing_off: Callable[[QueuedPodInfo], bool]) -> list[QueuedPodInfo]:
        """Every pod, of either heap, whose backoff is over, heap by heap in expiry order."""
        done: list[QueuedPodInfo] = []
        for heap in (self.unschedulable, self.errors):
            while True:
                head = heap.peek()
                if head is None or backing_off(head):
                    break
                heap.pop()
                done.append(head)
                self._left(head)
        return done

    def _left(self, info: QueuedPodInfo | None) -> QueuedPodInfo | None:
        if info is not None and self.observer is not None:
            self.observer(info.uid, False)
        return info

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self.unschedulable.get(uid) or self.errors.get(uid)

    def peek(self) -> QueuedPodInfo | None:
        """The pod whose backoff ends first, of either heap."""
        a, b = self.unschedulable.peek(), self.errors.peek()
        if a is None or b is None:
            return a or b
        return a if a.backoff_expiry <= b.backoff_expiry else b

    def __contains__(self, uid: str) -> bool:
        return uid in self.unschedulable or uid in self.errors

    def __len__(self) -> int:
        return len(self.unschedulable) + len(self.errors)

    def items(self) -> list[QueuedPodInfo]:
        return self.unschedulable.items() + self.errors.items()
