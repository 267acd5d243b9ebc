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
  order in ``ordering.py``, backoff and flush arithmetic in ``timing.py``.

Time comes only from the injected clock, so the simulator's virtual clock drives
backoffs and flushes exactly as the wall clock does live.
"""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any, Callable, Iterable

from ..clock import Clock
from ..framework.status import Code
from ..objects.pod import PodInfo
from ..framework.events import (
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    EventResource,
)
from ..framework.interfaces import QueueSortPlugin
from ..framework.queued_pod import QueuedPodInfo
from .heaps import BackoffQueue, MembershipObserver, PodHeap
from .hints import AFTER_BACKOFF, IMMEDIATELY, SKIP, HintRegistration, Hints
from .in_flight import InFlight
from .labels import (
    ACTIVE_Q,
    BACKOFF_COMPLETE,
    BACKOFF_Q,
    POP_FROM_BACKOFF_Q,
    SCHEDULE_ATTEMPT_FAILURE,
    UNSCHEDULABLE_Q,
    UNSCHEDULED_POD_ADD,
    UNSCHEDULED_POD_UPDATE,
    event_label,
    pod_update_label,
)
from .labels import FORCE_ACTIVATE as FORCE_ACTIVATE_LABEL
from .labels import UNSCHEDULABLE_TIMEOUT as UNSCHEDULABLE_TIMEOUT_LABEL
from .ordering import sort_key
from .timing import (
    BACKOFF_FLUSH_PERIOD,
    UNSCHEDULABLE_FLUSH_PERIOD,
    QueueConfig,
    backoff_done_at,
    is_backing_off,
    next_tick,
    record_failure,
    tick_at_or_before,
)
from .unschedulable import UnschedulablePods

__all__ = ["SchedulingQueue", "QueueConfig", "HintRegistration", "IncomingObserver", "ACTIVE", "BACKOFF", "UNSCHEDULABLE"]


IncomingObserver = Callable[[str, str], None]
"""``on_incoming(queue, event)``: a pod entered ``queue`` (``active``, ``backoff``,
``unschedulable``) because of ``event``, as upstream labels ``scheduler_queue_incoming_pods_total``."""

ACTIVE = "activeQ"
BACKOFF = "backoffQ"
UNSCHEDULABLE = "unschedulablePods"


class SchedulingQueue:
    """One queue shared by all profiles; per-profile PreEnqueue plugins and queueing hints."""

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
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._closed = False
        self.scheduling_cycle = 0
        self._move_request_cycle = -1
        self._last_backoff_flush = clock.now()
        self._last_unschedulable_flush = clock.now()
        self._start = float(math.floor(clock.now()))  # flush ticks fall on whole seconds, as the windows do
        self.on_incoming: IncomingObserver | None = None
        """Called as each pod enters a sub-queue (the incoming-pods metric); None costs nothing."""

    # -- adding ---------------------------------------------------------------
    def add(self, pod: PodInfo) -> str:
        """A new pending pod. Returns the queue it went to."""
        with self._lock:
            return self._add(pod, UNSCHEDULED_POD_ADD)

    def _add(self, pod: PodInfo, event: str) -> str:
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
        self._active.push(info)
        if self.on_incoming is not None:
            self.on_incoming(ACTIVE_Q, event)
        return ACTIVE

    def _file_unschedulable(self, info: QueuedPodInfo, event: str) -> None:
        """File the pod among the unschedulable ones (anew if it is there: its gate or
        rejectors may have changed); counted as incoming only if it was not there."""
        if self._unschedulable.put(info.uid, info) and self.on_incoming is not None:
            self.on_incoming(UNSCHEDULABLE_Q, event)

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
            strategy = self._hints.replay(info, self._in_flight.seen_by(info.uid))
            where = self._requeue(info, strategy, SCHEDULE_ATTEMPT_FAILURE)
            self._done_locked(uid)
            self._cond.notify()
            return where

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

    # -- events -------------------------------------------------------------
    def move_all_to_active_or_backoff(
        self, event: ClusterEvent, old: Any = None, new: Any = None, pre_check: Callable[[PodInfo], bool] | None = None
    ) -> int:
        """A cluster event: wake the unschedulable pods it may help. Returns how many moved."""
        with self._lock:
            moved = 0
            if not len(self._unschedulable):  # nothing waits (an informer's first sync): nothing to wake
                waiting = []
            elif event.resource == EventResource.WILDCARD:
                # Every pod, but gated pods only if their gate registered a wildcard event
                # (upstream skips a gated pod whose GatingPluginEvents do not match).
                hears = set(self._hints.interested(event))
                waiting = [i for i in self._unschedulable.values()
                           if not i.gated or (i.pod.scheduler_name, i.gating_plugin) in hears]
            else:  # only the pods whose rejecting plugins registered this event (or nothing)
                waiting = self._unschedulable.candidates(self._hints.interested(event))
            label = event_label(event) if waiting and self.on_incoming is not None else ""
            for info in waiting:
                if pre_check is not None and not pre_check(info.pod):
                    continue
                strategy = self._hints.strategy(info, event, old, new)
                if strategy == SKIP:
                    continue
                if info.gated and self._run_pre_enqueue(info) is False:
                    # Still gated, perhaps by another plugin now: filed anew. Upstream takes
                    # it out and puts it back, so it counts as incoming again.
                    self._unschedulable[info.uid] = info
                    if self.on_incoming is not None:
                        self.on_incoming(UNSCHEDULABLE_Q, label)
                    continue
                del self._unschedulable[info.uid]
                where = self._requeue(info, strategy, label)
                moved += where != UNSCHEDULABLE
            self._in_flight.record(event, old, new)
            self._move_request_cycle = self.scheduling_cycle
            if moved:
                self._cond.notify()
            return moved

    def activate(self, pods: Iterable[PodInfo]) -> None:
        """Move these pods to activeQ now, wherever they wait (``podsToActivate``).

        A pod being scheduled right now gets upstream's ForceActivate event instead,
        aimed at it alone: if its attempt fails, it is requeued rather than left to wait
        for a cluster event."""
        with self._lock:
            for pod in pods:
                info = self._unschedulable.pop(pod.uid, None)
                if info is not None:
                    self._move_to_active(info, FORCE_ACTIVATE_LABEL)
                elif (info := self._backoff.remove(pod.uid)) is not None:
                    self._move_to_active(info, FORCE_ACTIVATE_LABEL, from_backoff=True)
                elif pod.uid in self._in_flight:
                    self._in_flight.record(FORCE_ACTIVATE, None, pod)
                    self._move_request_cycle = self.scheduling_cycle
            self._cond.notify()

    # -- popping ------------------------------------------------------------
    def pop(self, block: bool = False, timeout: float | None = None) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when none is ready (after ``timeout`` if blocking)."""
        with self._lock:
            info = self._pop_locked()
            if info is None and block:
                self._cond.wait_for(lambda: self._closed or len(self._active) > 0 or self._backoff_poppable(), timeout)
                info = self._pop_locked()
            return info

    def _backoff_poppable(self) -> bool:
        """Whether Pop may take a pod from backoffQ (never one that failed with an error)."""
        return self.config.pop_from_backoff_q and len(self._backoff.unschedulable) > 0

    def _pop_locked(self) -> QueuedPodInfo | None:
        info = self._active.pop()
        if info is None and self._backoff_poppable():
            info = self._backoff.pop_unschedulable()
            if info is not None and self.on_incoming is not None:
                self.on_incoming(ACTIVE_Q, POP_FROM_BACKOFF_Q)
        if info is None:
            return None
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

    # -- updates from informers --------------------------------------------
    def update(self, old: PodInfo | None, new: PodInfo) -> None:
        with self._lock:
            uid = new.uid
            for heap in (self._active, self._backoff):
                info = heap.get(uid)
                if info is not None:
                    info.pod = new
                    heap.push(info)  # re-ordered: the new pod may sort differently
                    return
            info = self._unschedulable.get(uid)
            if info is not None:
                info.pod = new
                event = ClusterEvent(EventResource.POD, ActionType.UPDATE, "UpdatePod")
                label = pod_update_label(old, new) if self.on_incoming is not None else ""
                if info.gated and self._run_pre_enqueue(info):
                    del self._unschedulable[uid]
                    self._requeue(info, IMMEDIATELY, label)
                elif info.gated:
                    self._unschedulable[uid] = info  # still gated, perhaps by another plugin: file it anew
                else:
                    strategy = self._hints.strategy(info, event, old, new)
                    if strategy != SKIP:
                        del self._unschedulable[uid]
                        self._requeue(info, strategy, label)
                self._cond.notify()
                return
            if uid in self._in_flight:
                # Replayed if this attempt fails: the update may be what makes the pod schedulable.
                self._in_flight.record(ClusterEvent(EventResource.POD, ActionType.UPDATE, "UpdatePod"), old, new)
                return
            self._add(new, UNSCHEDULED_POD_UPDATE)

    def delete(self, pod: PodInfo) -> None:
        with self._lock:
            self._active.remove(pod.uid)
            self._backoff.remove(pod.uid)
            self._unschedulable.pop(pod.uid, None)

    # -- periodic flushes ---------------------------------------------------
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

    # -- reading ------------------------------------------------------------
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


__all__ += ["FORCE_ACTIVATE"]
