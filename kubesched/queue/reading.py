"""Reading the scheduling queue: what waits where, counts for metrics, membership.

``pending_pods`` and ``where`` (explain output, tests), the counts the metrics and the
simulator read, and the backoffQ membership observer. Apart because none of it moves a
pod; ``SchedulingQueue`` inherits it.
"""

from __future__ import annotations

from ..framework.queued_pod import QueuedPodInfo
from .heaps import MembershipObserver
from .moves import ACTIVE, BACKOFF, UNSCHEDULABLE, PodMoves

__all__ = ["QueueReading"]


class QueueReading(PodMoves):
    """``SchedulingQueue``'s read-only views."""

    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]:
        with self._lock:
            return {
                ACTIVE: self._active.items(),
                BACKOFF: self._backoff.items(),
                UNSCHEDULABLE: list(self._unschedulable.values()),
            }

    def where(self, uid: str) -> str:
        with self._lock:
            if uid in self._active:
                return ACTIVE
            if uid in self._backoff:
                return BACKOFF
            if uid in self._unschedulable:
                return UNSCHEDULABLE
            if uid in self._in_flight:
                return "inFlight"
            return ""

    def counts(self) -> dict[str, int]:
        with self._lock:
            gated = self._unschedulable.gated
            return {
                ACTIVE: len(self._active),
                BACKOFF: len(self._backoff),
                UNSCHEDULABLE: len(self._unschedulable) - gated,
                "gated": gated,
            }

    def is_gated(self, uid: str) -> bool:
        """Whether the pod waits for a PreEnqueue plugin (a scheduling gate, a gang short of members)."""
        with self._lock:
            info = self._unschedulable.get(uid)
            return info is not None and info.gated

    def gated_count(self) -> int:
        """Pods held back by a PreEnqueue plugin (``pending_pods{queue="gated"}``)."""
        with self._lock:
            return self._unschedulable.gated

    def unschedulable_by_plugin(self) -> dict[tuple[str, str], int]:
        """(plugin, profile) -> waiting pods that plugin rejected (read at scrape time)."""
        with self._lock:
            return self._unschedulable.rejector_counts()

    def backoff_count(self) -> int:
        """Pods in backoffQ (cheap, unlike ``counts``)."""
        return len(self._backoff)

    def in_backoff(self, uid: str) -> bool:
        with self._lock:
            return uid in self._backoff

    def watch_backoff(self, observer: MembershipObserver | None) -> None:
        """Report every pod entering or leaving backoffQ, as ``observer(uid, entered)``
        (the simulator keeps its facts about backing-off pods this way, without listing them)."""
        with self._lock:
            self._backoff.observer = observer

    def num_active(self) -> int:
        """Pods in activeQ (cheap, unlike ``counts``)."""
        return len(self._active)

    def has_ready(self) -> bool:
        with self._lock:
            return len(self._active) > 0 or self._backoff_poppable()

    def __len__(self) -> int:
        with self._lock:
            return len(self._active) + len(self._backoff) + len(self._unschedulable)
