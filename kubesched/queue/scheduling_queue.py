"""The scheduling queue: activeQ, backoffQ and unschedulable pods (upstream's ``PriorityQueue``).

* **activeQ** holds pods ready for a scheduling attempt, ordered by the profile's
  QueueSort plugin (PrioritySort: priority, then queue timestamp, then arrival).
* **backoffQ** holds pods that failed and wait out an exponential backoff
  (``podInitialBackoffSeconds`` doubling up to ``podMaxBackoffSeconds``). Every
  second the completed ones move to activeQ; when activeQ is empty, Pop takes
  the first backing-off pod that failed as unschedulable (``SchedulerPopFromBackoffQ``).
* **unschedulable pods** wait for a cluster event that one of the plugins that
  rejected them registered (and whose queueing hint says QUEUE), or for
  ``podMaxInUnschedulablePodsDuration`` (checked every 30 s). They are filed under
  those plugins (``unschedulable.py``), so an event looks only at the pods it may wake.
* Pods gated by a PreEnqueue plugin (scheduling gates) wait among the
  unschedulable pods until an event un-gates them.
* Events that arrive while a pod is *in flight* (popped, not yet done) are kept
  (``in_flight.py``) and replayed against it if its attempt fails, so no wake-up is lost.
* Which way an event sends a pod is the queueing hints' answer (``hints.py``); the
  incoming-pods metric's labels are in ``labels.py``, the heaps in ``heaps.py``, their
  order in ``ordering.py``, backoff and flush arithmetic in ``timing.py``; how a pod moves
  between sub-queues in ``moves.py``, the answers to cluster events in
  ``cluster_events.py``, the periodic flushes in ``flushes.py``, the read-only views in
  ``reading.py``.

Time comes only from the injected clock, so the simulator's virtual clock drives
backoffs and flushes exactly as the wall clock does live.
"""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any, Callable

from ..clock import Clock
from ..framework.events import FORCE_ACTIVATE
from ..framework.interfaces import QueueSortPlugin
from ..framework.queued_pod import QueuedPodInfo
from ..framework.status import Code
from ..objects.pod import PodInfo
from .cluster_events import ClusterEventMoves
from .flushes import PeriodicFlushes
from .heaps import BackoffQueue, PodHeap
from .hints import AFTER_BACKOFF, HintObserver, HintRegistration, Hints
from .in_flight import InFlight
from .labels import ACTIVE_Q, POP_FROM_BACKOFF_Q, SCHEDULE_ATTEMPT_FAILURE, UNSCHEDULED_POD_ADD
from .labels import FORCE_ACTIVATE as FORCE_ACTIVATE_LABEL
from .moves import ACTIVE, BACKOFF, UNSCHEDULABLE, IncomingObserver
from .ordering import sort_key
from .reading import QueueReading
from .timing import QueueConfig, record_failure
from .unschedulable import UnschedulablePods

__all__ = ["SchedulingQueue", "QueueConfig", "HintRegistration", "IncomingObserver", "ACTIVE", "BACKOFF", "UNSCHEDULABLE"]


class SchedulingQueue(ClusterEventMoves, PeriodicFlushes, QueueReading):
    """One queue shared by all profiles; per-profile PreEnqueue plugins and queueing hints.

    Adding, failed attempts and popping are here; the moves between sub-queues, the
    answers to cluster events, the flushes and the read-only views are inherited."""

    def __init__(
        self,
        clock: Clock,
        less: QueueSortPlugin | None = None,
        config: QueueConfig | None = None,
        pre_enqueue: Callable[[PodInfo], Any] | None = None,
        hints: dict[str, list[HintRegistration]] | None = None,
    ) -> None:
        """``less`` is the QueueSort plugin; ``hints`` maps a scheduler name to
        ``(event, plugin name, hint function or None)`` registrations."""
        self.clock = clock
        self.config = config or QueueConfig()
        self._pre_enqueue = pre_enqueue
        self._hints = Hints(hints or {})
        key = sort_key(less)
        self._active = PodHeap(key)
        self._backoff = BackoffQueue(lambda qp: (qp.backoff_expiry, key(qp)))
        self._unschedulable = UnschedulablePods(self._hints.profiles())
        self._in_flight = InFlight()  # popped, not done; the events they have seen since
        self._seq = itertools.count()
        self._activations = itertools.count(1)  # the order pods first enter activeQ
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._closed = False
        self.scheduling_cycle = 0
        self._move_request_cycle = -1
        self._last_backoff_flush = clock.now()
        self._last_unschedulable_flush = clock.now()
        self._start = float(math.floor(clock.now()))  # flush ticks fall on whole seconds, as the windows do
        self.on_incoming: IncomingObserver | None = None
        self.popped_from_backoff = 0  # pods Pop took from backoffQ, activeQ being empty (SchedulerPopFromBackoffQ)
        self.last_pop_from_backoff = False  # whether the last pod popped came from there
        """Called as each pod enters a sub-queue (the incoming-pods metric); None costs nothing."""

    def observe_hints(self, observer: HintObserver | None) -> None:
        """Report each queueing hint run (plugin, event label, outcome, seconds); None: nothing."""
        self._hints.observer = observer

    # -- adding ---------------------------------------------------------------
    def add(self, pod: PodInfo) -> str:
        """A new pending pod. Returns the queue it went to."""
        with self._lock:
            return self._add(pod, UNSCHEDULED_POD_ADD)

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, failure_code: Code | None = None) -> str:
        """Return a pod whose attempt failed. Unschedulable pods wait for an event;
        pods that failed with an error back off and retry."""
        with self._lock:
            uid = info.uid
            if uid in self._active or uid in self._backoff or uid in self._unschedulable:
                self._done_locked(uid)
                return ""
            error = failure_code == Code.ERROR or not (info.unschedulable_plugins or info.pending_plugins)
            record_failure(info, self.clock.now(), error, self.config)
            if self.config.pod_groups and info.pod.pod_group_name is not None:
                strategy = AFTER_BACKOFF  # a pod group's member: after backoff, whatever happened meanwhile
            else:
                strategy = self._hints.replay(info, self._in_flight.seen_by(info.uid))
            where = self._requeue(info, strategy, SCHEDULE_ATTEMPT_FAILURE)
            self._done_locked(uid)
            self._cond.notify()
            return where

    # -- popping ------------------------------------------------------------
    def pop(self, block: bool = False, timeout: float | None = None) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when none is ready (after ``timeout`` if blocking)."""
        with self._lock:
            info = self._pop_locked()
            if info is None and block:
                self._cond.wait_for(lambda: self._closed or len(self._active) > 0 or self._backoff_poppable(), timeout)
                info = self._pop_locked()
            return info

    def _pop_locked(self) -> QueuedPodInfo | None:
        info = self._active.pop()
        self.last_pop_from_backoff = False
        if info is None and self._backoff_poppable():
            info = self._backoff.pop_unschedulable()
            if info is not None:
                self.popped_from_backoff += 1
                self.last_pop_from_backoff = True
                if self.on_incoming is not None:
                    self.on_incoming(ACTIVE_Q, POP_FROM_BACKOFF_Q)
        if info is None:
            return None
        return self._take(info)

    def pop_specific_pod(self, pod: PodInfo) -> QueuedPodInfo | None:
        """Take this pod out of the queue as if popped (upstream's ``PopSpecificPod``: a pod
        group's cycle takes every unscheduled member): from the unschedulable pods or
        backoffQ it is activated first (a still-gated pod stays); None when it is not
        waiting in the queue (in flight, gated, or unknown)."""
        with self._lock:
            uid = pod.uid
            waiting = self._unschedulable.get(uid)  # left there: a pod still gated stays as it was filed
            if waiting is not None:
                self._move_to_active(waiting, FORCE_ACTIVATE_LABEL)
            elif (waiting := self._backoff.remove(uid)) is not None:
                self._move_to_active(waiting, FORCE_ACTIVATE_LABEL, from_backoff=True)
            info = self._active.remove(uid)
            if info is None:
                return None
            return self._take(info)

    def _take(self, info: QueuedPodInfo) -> QueuedPodInfo:
        """A pod leaves the queue for a scheduling attempt: counted, in flight."""
        info.attempts += 1
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.clock.now()
        info.unschedulable_plugins = set()
        info.pending_plugins = set()
        self.scheduling_cycle += 1
        self._in_flight.popped(info.uid)
        return info

    def done(self, uid: str) -> None:
        """The pod's attempt is over (bound, or returned to the queue)."""
        with self._lock:
            self._done_locked(uid)

    def _done_locked(self, uid: str) -> None:
        self._in_flight.done(uid)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._cond.notify_all()


__all__ += ["FORCE_ACTIVATE"]
