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
  and replayed against it if its attempt fails, so no wake-up is lost.

Time comes only from the injected clock, so the simulator's virtual clock drives
backoffs and flushes exactly as the wall clock does live.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import threading
from dataclasses import dataclass
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
    QueueingHint,
    QueueingHintFn,
)
from ..framework.interfaces import QueueSortKey, QueueSortPlugin
from ..framework.queued_pod import QueuedPodInfo
from .unschedulable import UnschedulablePods

__all__ = ["SchedulingQueue", "QueueConfig", "HintRegistration", "ACTIVE", "BACKOFF", "UNSCHEDULABLE"]

HintRegistration = tuple[ClusterEvent, str, QueueingHintFn | None]
"""(event of interest, plugin name, the plugin's hint or None for always-queue)."""

ACTIVE = "activeQ"
BACKOFF = "backoffQ"
UNSCHEDULABLE = "unschedulablePods"

BACKOFF_FLUSH_PERIOD = 1.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

_SKIP, _AFTER_BACKOFF, _IMMEDIATELY = 0, 1, 2


@dataclass(slots=True)
class QueueConfig:
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    pod_max_in_unschedulable: float = 300.0
    pop_from_backoff_q: bool = True


class _Heap:
    """A heap with lazy deletion, keyed by pod uid."""

    def __init__(self, key: Callable[[QueuedPodInfo], Any]) -> None:
        self._key = key
        self._heap: list[list] = []
        self._entries: dict[str, list] = {}

    def push(self, info: QueuedPodInfo) -> None:
        self.remove(info.uid)
        entry = [self._key(info), info.seq, info, True]
        self._entries[info.uid] = entry
        heapq.heappush(self._heap, entry)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        entry = self._entries.pop(uid, None)
        if entry is None:
            return None
        entry[3] = False
        return entry[2]

    def peek(self) -> QueuedPodInfo | None:
        heap = self._heap
        while heap and not heap[0][3]:
            heapq.heappop(heap)
        return heap[0][2] if heap else None

    def pop(self) -> QueuedPodInfo | None:
        heap = self._heap
        while heap:
            entry = heapq.heappop(heap)
            if entry[3]:
                del self._entries[entry[2].uid]
                return entry[2]
        return None

    def get(self, uid: str) -> QueuedPodInfo | None:
        entry = self._entries.get(uid)
        return entry[2] if entry else None

    def __contains__(self, uid: str) -> bool:
        return uid in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> list[QueuedPodInfo]:
        return [e[2] for e in self._entries.values()]


class _BackoffQueue:
    """backoffQ as upstream keeps it: pods rejected by plugins (``podBackoffQ``) and pods
    that failed with an error (``podErrorBackoffQ``) in two heaps ordered by backoff
    expiry (then as activeQ); only the first may be popped before its backoff ends."""

    def __init__(self, key: Callable[[QueuedPodInfo], Any]) -> None:
        self.unschedulable = _Heap(key)
        self.errors = _Heap(key)

    def push(self, info: QueuedPodInfo) -> None:
        if info.consecutive_errors_count > 0:
            self.unschedulable.remove(info.uid)
            self.errors.push(info)
        else:
            self.errors.remove(info.uid)
            self.unschedulable.push(info)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        return self.unschedulable.remove(uid) or self.errors.remove(uid)

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
        self._hints = hints or {}
        key = self._sort_key(less)
        self._active = _Heap(key)
        self._backoff = _BackoffQueue(lambda qp: (qp.backoff_expiry, key(qp)))
        self._unschedulable = UnschedulablePods(self._hints)
        self._interest: dict[tuple[str, ActionType], list[tuple[str, str]]] = {}  # event -> (profile, plugin)
        self._in_flight: dict[str, int] = {}  # uid -> index in _events when popped
        self._events: list[tuple[ClusterEvent, Any, Any]] = []
        self._event_base = 0  # absolute index of _events[0]
        self._seq = itertools.count()
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._closed = False
        self.scheduling_cycle = 0
        self._move_request_cycle = -1
        self._last_backoff_flush = clock.now()
        self._last_unschedulable_flush = clock.now()
        self._start = float(math.floor(clock.now()))  # flush ticks fall on whole seconds, as the windows do

    @staticmethod
    def _sort_key(less: QueueSortPlugin | None) -> Callable[[QueuedPodInfo], Any]:
        if less is None:
            return lambda qp: (-qp.pod.priority, qp.timestamp)
        if isinstance(less, QueueSortKey):
            return less.sort_key
        compare = functools.cmp_to_key(lambda a, b: -1 if less.less(a, b) else (1 if less.less(b, a) else 0))
        return compare

    # -- adding ---------------------------------------------------------------
    def add(self, pod: PodInfo) -> str:
        """A new pending pod. Returns the queue it went to."""
        with self._lock:
            info = QueuedPodInfo(pod=pod, timestamp=self.clock.now(), seq=next(self._seq))
            where = self._move_to_active(info)
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

    def _move_to_active(self, info: QueuedPodInfo) -> str:
        if not self._run_pre_enqueue(info):
            self._unschedulable[info.uid] = info
            self._backoff.remove(info.uid)
            return UNSCHEDULABLE
        self._unschedulable.pop(info.uid, None)
        self._backoff.remove(info.uid)
        self._active.push(info)
        return ACTIVE

    def _backoff_duration(self, info: QueuedPodInfo) -> float:
        count = info.consecutive_errors_count or info.unschedulable_count or info.attempts
        if count <= 0:
            return 0.0
        duration = self.config.pod_initial_backoff
        for _ in range(1, count):
            if duration > self.config.pod_max_backoff - duration:
                return self.config.pod_max_backoff
            duration += duration
        return duration

    def _is_backing_off(self, info: QueuedPodInfo, now: float | None = None) -> bool:
        """Whether the pod still waits out its backoff. With ordering windows (upstream's
        ``SchedulerPopFromBackoffQ``) the expiry is truncated to a whole second, and the
        pod is done once the clock is in a later window."""
        if not (info.consecutive_errors_count or info.unschedulable_count):
            return False  # never failed: no backoff
        now = self.clock.now() if now is None else now
        if self.config.pop_from_backoff_q:
            return info.backoff_expiry >= math.floor(now)
        return info.backoff_expiry > now

    def _backoff_done_at(self, info: QueuedPodInfo) -> float:
        """The first moment the pod is no longer backing off."""
        if self.config.pop_from_backoff_q:
            return info.backoff_expiry + BACKOFF_FLUSH_PERIOD
        return info.backoff_expiry

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, failure_code: Code | None = None) -> str:
        """Return a pod whose attempt failed. Unschedulable pods wait for an event;
        pods that failed with an error back off and retry."""
        with self._lock:
            uid = info.uid
            if uid in self._active or uid in self._backoff or uid in self._unschedulable:
                self._done_locked(uid)
                return ""
            info.timestamp = self.clock.now()
            if failure_code == Code.ERROR or not (info.unschedulable_plugins or info.pending_plugins):
                info.consecutive_errors_count += 1
            else:
                info.consecutive_errors_count = 0
                info.unschedulable_count += 1
            expiry = info.timestamp + self._backoff_duration(info)
            info.backoff_expiry = float(math.floor(expiry)) if self.config.pop_from_backoff_q else expiry
            strategy = self._hint_for_in_flight(info)
            where = self._requeue(info, strategy)
            self._done_locked(uid)
            self._cond.notify()
            return where

    def _requeue(self, info: QueuedPodInfo, strategy: int) -> str:
        if strategy == _SKIP:
            self._unschedulable[info.uid] = info
            return UNSCHEDULABLE
        if strategy == _AFTER_BACKOFF and self._is_backing_off(info):
            self._unschedulable.pop(info.uid, None)
            self._backoff.push(info)
            return BACKOFF
        return self._move_to_active(info)

    # -- events -------------------------------------------------------------
    def _worth_requeuing(self, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> int:
        if info.gated:
            rejectors = {info.gating_plugin}
        else:
            rejectors = info.unschedulable_plugins | info.pending_plugins
        if not rejectors:
            return _AFTER_BACKOFF
        if event.resource == EventResource.WILDCARD:
            return _AFTER_BACKOFF
        registrations = self._hints.get(info.pod.scheduler_name)
        if registrations is None:
            return _AFTER_BACKOFF
        strategy = _SKIP
        for interest, plugin, hint in registrations:
            if plugin not in rejectors or not interest.matches(event):
                continue
            if hint is not None:
                try:
                    answer = hint(info.pod, old, new)
                except Exception:  # a failing hint must not strand the pod
                    answer = QueueingHint.QUEUE
                if answer == QueueingHint.SKIP:
                    continue
            if plugin in info.pending_plugins or info.gated:
                return _IMMEDIATELY
            strategy = _AFTER_BACKOFF
        return strategy

    def _hint_for_in_flight(self, info: QueuedPodInfo) -> int:
        if not (info.unschedulable_plugins or info.pending_plugins):
            return _AFTER_BACKOFF
        start = self._in_flight.get(info.uid)
        if start is None:
            return _SKIP
        strategy = _SKIP
        for event, old, new in self._events[start - self._event_base :]:
            if event.resource == EventResource.POD and getattr(new, "uid", info.uid) != info.uid:
                continue  # another pending pod's own update
            answer = self._worth_requeuing(info, event, old, new)
            if answer == _IMMEDIATELY:
                return _IMMEDIATELY
            strategy = max(strategy, answer)
        return strategy

    def move_all_to_active_or_backoff(
        self, event: ClusterEvent, old: Any = None, new: Any = None, pre_check: Callable[[PodInfo], bool] | None = None
    ) -> int:
        """A cluster event: wake the unschedulable pods it may help. Returns how many moved."""
        with self._lock:
            moved = 0
            if event.resource == EventResource.WILDCARD:
                waiting = self._unschedulable.values()
            else:  # only the pods whose rejecting plugins registered this event (or nothing)
                waiting = self._unschedulable.candidates(self._interested(event))
            for info in waiting:
                if pre_check is not None and not pre_check(info.pod):
                    continue
                strategy = self._worth_requeuing(info, event, old, new)
                if strategy == _SKIP:
                    continue
                if info.gated and self._run_pre_enqueue(info) is False:
                    continue
                del self._unschedulable[info.uid]
                where = self._requeue(info, strategy)
                moved += where != UNSCHEDULABLE
            if self._in_flight:
                self._events.append((event, old, new))
            self._move_request_cycle = self.scheduling_cycle
            if moved:
                self._cond.notify()
            return moved

    def _interested(self, event: ClusterEvent) -> list[tuple[str, str]]:
        """The (profile, plugin) pairs with a registration matching ``event``."""
        key = (event.resource, event.action)
        found = self._interest.get(key)
        if found is None:
            found = sorted({(profile, plugin) for profile, registrations in self._hints.items()
                            for interest, plugin, _ in registrations if interest.matches(event)})
            self._interest[key] = found
        return found

    def activate(self, pods: Iterable[PodInfo]) -> None:
        """Move these pods to activeQ now, wherever they wait (``podsToActivate``)."""
        with self._lock:
            for pod in pods:
                info = self._unschedulable.pop(pod.uid, None) or self._backoff.remove(pod.uid)
                if info is not None:
                    self._move_to_active(info)
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
            info = self._backoff.unschedulable.pop()
        if info is None:
            return None
        info.attempts += 1
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.clock.now()
        info.unschedulable_plugins = set()
        info.pending_plugins = set()
        self.scheduling_cycle += 1
        self._in_flight[info.uid] = self._event_base + len(self._events)
        return info

    def done(self, uid: str) -> None:
        """The pod's attempt is over (bound, or returned to the queue)."""
        with self._lock:
            self._done_locked(uid)

    def _done_locked(self, uid: str) -> None:
        if self._in_flight.pop(uid, None) is None:
            return
        if not self._in_flight:
            self._event_base += len(self._events)
            self._events.clear()
        elif self._events:
            oldest = min(self._in_flight.values())
            drop = oldest - self._event_base
            if drop > 0:
                del self._events[:drop]
                self._event_base = oldest

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
                    if heap is self._active:
                        heap.push(info)
                    else:
                        heap.push(info)
                    return
            info = self._unschedulable.get(uid)
            if info is not None:
                info.pod = new
                event = ClusterEvent(EventResource.POD, ActionType.UPDATE, "UpdatePod")
                if info.gated and self._run_pre_enqueue(info):
                    del self._unschedulable[uid]
                    self._requeue(info, _IMMEDIATELY)
                elif info.gated:
                    self._unschedulable[uid] = info  # still gated, perhaps by another plugin: file it anew
                else:
                    strategy = self._worth_requeuing(info, event, old, new)
                    if strategy != _SKIP:
                        del self._unschedulable[uid]
                        self._requeue(info, strategy)
                self._cond.notify()
                return
            if uid in self._in_flight:
                # Replayed if this attempt fails: the update may be what makes the pod schedulable.
                self._events.append((ClusterEvent(EventResource.POD, ActionType.UPDATE, "UpdatePod"), old, new))
                return
            self.add(new)

    def delete(self, pod: PodInfo) -> None:
        with self._lock:
            self._active.remove(pod.uid)
            self._backoff.remove(pod.uid)
            self._unschedulable.pop(pod.uid, None)

    # -- periodic flushes ---------------------------------------------------
    def flush_backoff_completed(self) -> int:
        """Move pods whose backoff has expired to activeQ (runs every second)."""
        with self._lock:
            now = self.clock.now()
            moved = 0
            for heap in (self._backoff.unschedulable, self._backoff.errors):
                while True:
                    head = heap.peek()
                    if head is None or self._is_backing_off(head, now):
                        break
                    heap.pop()
                    self._move_to_active(head)
                    moved += 1
            self._last_backoff_flush = self._tick_at_or_before(now, BACKOFF_FLUSH_PERIOD)
            if moved:
                self._cond.notify()
            return moved

    def flush_unschedulable_leftover(self) -> int:
        """Retry pods unschedulable for longer than podMaxInUnschedulablePodsDuration (runs every 30 s)."""
        with self._lock:
            now = self.clock.now()
            stale = [
                info
                for info in self._unschedulable.values()
                if not info.gated and now - info.timestamp > self.config.pod_max_in_unschedulable
            ]
            for info in stale:
                del self._unschedulable[info.uid]
                self._requeue(info, self._worth_requeuing(info, UNSCHEDULABLE_TIMEOUT, None, None))
            self._last_unschedulable_flush = self._tick_at_or_before(now, UNSCHEDULABLE_FLUSH_PERIOD)
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
                times.append(self._next_tick(max(self._backoff_done_at(head), self.clock.now()), BACKOFF_FLUSH_PERIOD))
            waiting = [i.timestamp for i in self._unschedulable.values() if not i.gated]
            if waiting:
                due = min(waiting) + self.config.pod_max_in_unschedulable
                times.append(self._next_tick(math.nextafter(due, math.inf), UNSCHEDULABLE_FLUSH_PERIOD))
            return min(times) if times else None

    def _next_tick(self, when: float, period: float) -> float:
        ticks = math.ceil((when - self._start) / period)
        return self._start + ticks * period

    def _tick_at_or_before(self, when: float, period: float) -> float:
        """The periodic flush tick at or before ``when``: flushes stay on their ticks."""
        ticks = math.floor((when - self._start) / period)
        return self._start + ticks * period

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
