"""How a pod moves between the scheduling queue's sub-queues, and their names.

To activeQ unless a PreEnqueue plugin gates it (then among the unschedulable pods), to
backoffQ while its backoff runs, or filed among the unschedulable pods; each move told
to the incoming-pods observer. Adding, failures, cluster events and the periodic
flushes all move pods this way, so the moves are one base class that
``SchedulingQueue``'s parts (``cluster_events.py``, ``flushes.py``, ``reading.py``)
share, with the queue's state they read.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

from ..clock import Clock
from ..framework.queued_pod import QueuedPodInfo
from ..objects.pod import PodInfo
from .heaps import BackoffQueue, PodHeap
from .hints import AFTER_BACKOFF, SKIP, Hints
from .in_flight import InFlight
from .labels import ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_Q
from .timing import QueueConfig, is_backing_off
from .unschedulable import UnschedulablePods

__all__ = ["PodMoves", "IncomingObserver", "ACTIVE", "BACKOFF", "UNSCHEDULABLE"]

IncomingObserver = Callable[[str, str], None]
"""``on_incoming(queue, event)``: a pod entered ``queue`` (``active``, ``backoff``,
``unschedulable``) because of ``event``, as upstream labels ``scheduler_queue_incoming_pods_total``."""

ACTIVE = "activeQ"
BACKOFF = "backoffQ"
UNSCHEDULABLE = "unschedulablePods"


class PodMoves:
    """The queue's state and the moves of one pod between its sub-queues (``SchedulingQueue``'s base)."""

    clock: Clock
    config: QueueConfig
    _pre_enqueue: Callable[[PodInfo], Any] | None
    _hints: Hints
    _active: PodHeap
    _backoff: BackoffQueue
    _unschedulable: UnschedulablePods
    _in_flight: InFlight
    _lock: threading.RLock
    _cond: threading.Condition
    _seq: Iterator[int]
    _activations: Iterator[int]
    scheduling_cycle: int
    _move_request_cycle: int
    on_incoming: IncomingObserver | None

    def _add(self, pod: PodInfo, event: str) -> str:
        """A pod the queue has not seen: to activeQ (or gated among the unschedulable pods)."""
        info = QueuedPodInfo(pod=pod, timestamp=self.clock.now(), seq=next(self._seq))
        where = self._move_to_active(info, event)
        self._cond.notify()
        return where

    def _run_pre_enqueue(self, info: QueuedPodInfo) -> bool:
        if self._pre_enqueue is None:
            info.gating_plugin = ""
            return True
        status = self._pre_enqueue(info.pod)
        if status is None or status.is_success():
            info.gating_plugin = ""
            return True
        info.gating_plugin = status.plugin or "PreEnqueue"
        return False

    def _move_to_active(self, info: QueuedPodInfo, event: str, from_backoff: bool = False) -> str:
        """To activeQ, or among the unschedulable pods if a PreEnqueue plugin gates it.

        With ``SchedulerPopFromBackoffQ`` PreEnqueue ran when the pod entered backoffQ, so a
        pod coming straight from there is not asked again (upstream's ``moveToActiveQ``)."""
        skip = from_backoff and self.config.pop_from_backoff_q
        if not skip and not self._run_pre_enqueue(info):
            self._backoff.remove(info.uid)
            self._file_unschedulable(info, event)
            return UNSCHEDULABLE
        self._unschedulable.pop(info.uid, None)
        self._backoff.remove(info.uid)
        if info.initial_attempt_timestamp is None:  # upstream stamps a pod as it first enters activeQ
            info.initial_attempt_timestamp = self.clock.now()
            info.initial_attempt_order = next(self._activations)
        self._active.push(info)
        if self.on_incoming is not None:
            self.on_incoming(ACTIVE_Q, event)
        return ACTIVE

    def _file_unschedulable(self, info: QueuedPodInfo, event: str) -> None:
        """File the pod among the unschedulable ones (anew if it is there: its gate or
        rejectors may have changed); counted as incoming only if it was not there."""
        if self._unschedulable.put(info.uid, info) and self.on_incoming is not None:
            self.on_incoming(UNSCHEDULABLE_Q, event)

    def _requeue(self, info: QueuedPodInfo, strategy: int, event: str) -> str:
        if strategy == SKIP:
            self._file_unschedulable(info, event)
            return UNSCHEDULABLE
        if strategy == AFTER_BACKOFF and is_backing_off(info, self.clock.now(), self.config):
            if self.config.pop_from_backoff_q and not self._run_pre_enqueue(info):
                # Pop may take it from backoffQ without asking again: gated, it waits instead.
                self._backoff.remove(info.uid)
                self._file_unschedulable(info, event)
                return UNSCHEDULABLE
            self._unschedulable.pop(info.uid, None)
            self._backoff.push(info)
            if self.on_incoming is not None:
                self.on_incoming(BACKOFF_Q, event)
            return BACKOFF
        return self._move_to_active(info, event)

    def _backoff_poppable(self) -> bool:
        """Whether Pop may take a pod from backoffQ (never one that failed with an error)."""
        return self.config.pop_from_backoff_q and len(self._backoff.unschedulable) > 0
