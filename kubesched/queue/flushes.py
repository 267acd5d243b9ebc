"""The scheduling queue's periodic flushes: backoffs completed, unschedulable pods timed out.

Every second the pods whose backoff expired move to activeQ; every 30 s the pods
unschedulable for longer than ``podMaxInUnschedulablePodsDuration`` are retried.
``next_wakeup`` tells the simulator when the next flush could make a pod ready, so its
virtual clock can jump there. Apart because it is the queue's own clock-driven work;
``SchedulingQueue`` inherits it.
"""

from __future__ import annotations

import math

from ..framework.events import UNSCHEDULABLE_TIMEOUT
from .labels import BACKOFF_COMPLETE
from .labels import UNSCHEDULABLE_TIMEOUT as UNSCHEDULABLE_TIMEOUT_LABEL
from .moves import PodMoves
from .timing import (
    BACKOFF_FLUSH_PERIOD,
    UNSCHEDULABLE_FLUSH_PERIOD,
    backoff_done_at,
    is_backing_off,
    next_tick,
    tick_at_or_before,
)

__all__ = ["PeriodicFlushes"]


class PeriodicFlushes(PodMoves):
    """``SchedulingQueue``'s flushes and the time of the next one."""

    _last_backoff_flush: float
    _last_unschedulable_flush: float
    _start: float

    def flush_backoff_completed(self) -> int:
        """Move pods whose backoff has expired to activeQ (runs every second)."""
        with self._lock:
            now, config = self.clock.now(), self.config
            completed = self._backoff.pop_completed(lambda info: is_backing_off(info, now, config))
            for info in completed:
                self._move_to_active(info, BACKOFF_COMPLETE, from_backoff=True)
            moved = len(completed)
            self._last_backoff_flush = tick_at_or_before(self._start, now, BACKOFF_FLUSH_PERIOD)
            if moved:
                self._cond.notify()
            return moved

    def flush_unschedulable_leftover(self) -> int:
        """Retry pods unschedulable for longer than podMaxInUnschedulablePodsDuration (runs every 30 s)."""
        with self._lock:
            now = self.clock.now()
            stale = self._unschedulable.timed_out(now, self.config.pod_max_in_unschedulable)
            for info in stale:
                del self._unschedulable[info.uid]
                strategy = self._hints.strategy(info, UNSCHEDULABLE_TIMEOUT, None, None)
                self._requeue(info, strategy, UNSCHEDULABLE_TIMEOUT_LABEL)
            self._last_unschedulable_flush = tick_at_or_before(self._start, now, UNSCHEDULABLE_FLUSH_PERIOD)
            if stale:
                self._cond.notify()
            return len(stale)

    def run_due_flushes(self) -> None:
        """Run the periodic flushes whose period has come (the simulator calls this after advancing time)."""
        now = self.clock.now()
        if now - self._last_backoff_flush >= BACKOFF_FLUSH_PERIOD or not self._backoff:
            self.flush_backoff_completed()
        if now - self._last_unschedulable_flush >= UNSCHEDULABLE_FLUSH_PERIOD:
            self.flush_unschedulable_leftover()

    def next_wakeup(self) -> float | None:
        """When the next periodic flush could make a pod ready (None: nothing ever will)."""
        with self._lock:
            times = []
            head = self._backoff.peek()
            if head is not None:
                done = max(backoff_done_at(head, self.config), self.clock.now())
                times.append(next_tick(self._start, done, BACKOFF_FLUSH_PERIOD))
            earliest = self._unschedulable.earliest_timestamp()
            if earliest is not None:
                due = earliest + self.config.pod_max_in_unschedulable
                times.append(next_tick(self._start, math.nextafter(due, math.inf), UNSCHEDULABLE_FLUSH_PERIOD))
            return min(times) if times else None
