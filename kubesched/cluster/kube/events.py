"""The ``events.k8s.io/v1`` event broadcaster kube-scheduler reports through
(client-go tools/events: event_recorder.go, event_broadcaster.go).

``record`` is called from the scheduling loop and never waits: it builds the Event,
folds it into the cache of isomorphic events at once (as ``recordToSink`` does when the
event arrives) and, when there is something to write, queues the write. Nothing is
dropped for lack of room: upstream starts one goroutine per event, each waiting for the
events client's rate limiter, so every event is written however far behind the writes
fall. The queue here is that crowd of goroutines; once it holds ``high_water`` writes,
``room()`` makes the scheduling loop wait (back-pressure) instead of letting memory
grow without bound. ``run`` drains the queue and writes to the API server:

* An event *isomorphic* to a cached one (same type, action, reason, reporting
  controller and instance, regarding and related) does not make a new object. The
  second occurrence turns the cached event into a series (count 2) and patches it;
  later ones only bump the cached count and last-observed time. Every 6 minutes series
  idle for 6 minutes get their final count written and leave the cache, as do single
  events older than that; every 30 minutes every live series is written (its TTL
  refresh). So 10,000 identical failures cost a handful of requests.
* Writes go through a token bucket (kube-scheduler's event client has its own:
  clientConnection qps 50, burst 100), ``max_in_flight`` at once, more when the server is
  far (``concurrency``: upstream starts a goroutine per event).
* A write failing for a transport reason (status 0, or an error that is not an API
  status) is retried up to 12 times, 10 s apart (+25 % jitter); a rejection by the
  server is given up with a log line, as upstream's sink does. (429s and 5xx with
  Retry-After were already retried by the API client, as client-go's REST client does.)
  Those, and what is still queued when the writer stops, are the only events lost, all
  counted in ``stats.dropped`` (``kubesched_events_dropped_total``).

Writes start as soon as an event is recorded (the events client has connections of its
own, so binds never hold them up): a process killed outright loses only what the last
moments recorded. On a graceful stop ``shutdown`` writes what is queued for a bounded
grace period, as client-go's broadcaster flushes on ``Shutdown`` (writes waiting to be
retried are retried at once); what is left then is counted as dropped and logged in one
line.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from .concurrency import MOST, ConcurrencyLimit
from .leader import micro_time, status_of

__all__ = [
    "ACTION_BINDING",
    "ACTION_PREEMPTING",
    "ACTION_SCHEDULING",
    "EVENT_WRITERS",
    "EventBroadcaster",
    "EventRequester",
    "NOTE_LENGTH_LIMIT",
    "ObjectRef",
    "truncate_note",
]

log = logging.getLogger(__name__)

#: Upstream's actions for kube-scheduler's events: FailedScheduling is "Scheduling",
#: Scheduled is "Binding", a victim's Preempted is "Preempting".
ACTION_SCHEDULING = "Scheduling"
ACTION_BINDING = "Binding"
ACTION_PREEMPTING = "Preempting"

#: Events' note limit in bytes (NoteLengthLimit, pkg/apis/core/validation/events.go).
NOTE_LENGTH_LIMIT = 1024
_TRUNCATED = " ..."

#: Writes under way at once to start with (as many as the binds that make them); more when the
#: API server is far, up to ``concurrency.MOST`` (the events client's connections: one each).
EVENT_WRITERS = 32
#: Writes queued before ``room()`` holds the scheduling loop back (a few MiB of events;
#: upstream's crowd of goroutines has no bound at all).
HIGH_WATER = 10_000
MAX_TRIES_PER_EVENT = 12
RETRY_SLEEP = 10.0
FINISH_TIME = 6 * 60.0
REFRESH_TIME = 30 * 60.0
_HURRIED_RETRY = 0.05  # seconds between retries while stopping

_EVENT_TYPES = ("Normal", "Warning")
_PATCH = "application/strategic-merge-patch+json"


def truncate_note(note: str) -> str:
    """Cut a note to the API's limit the way kube-scheduler's truncateMessage does:
    keep the first bytes and end with `` ...`` (never splitting a UTF-8 character)."""
    raw = note.encode()
    if len(raw) <= NOTE_LENGTH_LIMIT:
        return note
    head = raw[: NOTE_LENGTH_LIMIT - len(_TRUNCATED)].decode(errors="ignore")
    return head + _TRUNCATED


class ObjectRef(NamedTuple):
    """A core/v1 ObjectReference to the object an event is about (a tuple: one is made for
    every event, and it is part of the key events are folded by)."""

    kind: str
    namespace: str
    name: str
    uid: str = ""
    api_version: str = "v1"
    resource_version: str = ""
    field_path: str = ""

    def to_json(self) -> dict[str, str]:
        pairs = (("kind", self.kind), ("namespace", self.namespace), ("name", self.name), ("uid", self.uid),
                 ("apiVersion", self.api_version), ("resourceVersion", self.resource_version),
                 ("fieldPath", self.field_path))
        return {key: value for key, value in pairs if value}  # omitempty


class _Key(NamedTuple):
    """What makes two events isomorphic (client-go's eventKey)."""

    event_type: str
    action: str
    reason: str
    reporting_controller: str
    reporting_instance: str
    regarding: ObjectRef
    related: ObjectRef | None


@dataclass(slots=True)
class _Event:
    key: _Key
    name: str
    namespace: str
    event_time: float  # wall seconds
    note: str
    series_count: int = 0  # 0: no series yet
    last_observed: float = 0.0

    def body(self) -> dict[str, object]:
        key = self.key
        body: dict[str, object] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "eventTime": micro_time(self.event_time),
            "reportingController": key.reporting_controller,
            "reportingInstance": key.reporting_instance,
            "action": key.action,
            "reason": key.reason,
            "regarding": key.regarding.to_json(),
            "note": self.note,
            "type": key.event_type,
        }
        if key.related is not None:
            body["related"] = key.related.to_json()
        if self.series_count:
            body["series"] = self.series()
        return body

    def series(self) -> dict[str, object]:
        return {"count": self.series_count, "lastObservedTime": micro_time(self.last_observed)}

    def snapshot(self) -> _Event:
        return _Event(self.key, self.name, self.namespace, self.event_time, self.note, self.series_count,
                      self.last_observed)


class EventRequester(Protocol):
    """The part of ``client.ApiClient`` the writer uses: a write whose answer is not read,
    raising an error that carries the HTTP ``status`` (0 for a transport failure)."""

    async def write(self, method: str, path: str, *, body: object | bytes | None = None,
                    content_type: str = "application/json", timeout: float | None = None) -> int: ...


class _TokenBucket:
    """client-go's token-bucket rate limiter: ``burst`` tokens, refilled at ``qps``."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._qps = qps
        self._burst = float(max(1, burst))
        self._tokens = self._burst
        self._clock = clock
        self._last = clock()

    async def take(self) -> None:
        if self._qps <= 0:
            return
        while True:
            now = self._clock()
            self._tokens = min(self._burst, self._tokens + (now - self._last) * self._qps)
            self._last = now
            if self._tokens >= 1:
                self._tokens -= 1
                return
            await asyncio.sleep((1 - self._tokens) / self._qps)


@dataclass(slots=True)
class BroadcasterStats:
    """What happened to recorded events (logs, tests, ``kubesched_events_*`` metrics)."""

    recorded: int = 0
    aggregated: int = 0  # folded into a running series without a request
    written: int = 0  # successful creates and patches
    dropped: int = 0  # writes given up: rejected by the server, out of retries, or left at exit
    waits: int = 0  # times a producer waited for room (back-pressure)
    lost_at_exit: int = 0  # of ``dropped``: writes queued or under way when the writer stopped

    @property
    def abandoned(self) -> int:
        """The name this count had before every event was written: writes given up."""
        return self.dropped


class EventBroadcaster:
    """Queues events from the scheduler and writes them, aggregated and rate limited."""

    def __init__(self, requester: EventRequester, *, reporting_controller: str = "default-scheduler",
                 reporting_instance: str | None = None, clock: Callable[[], float] = time.time,
                 high_water: int = HIGH_WATER, qps: float = 50.0, burst: int = 100,
                 max_in_flight: int = EVENT_WRITERS, most_in_flight: int | None = None,
                 concurrency: ConcurrencyLimit | None = None, max_tries: int = MAX_TRIES_PER_EVENT, retry_sleep: float = RETRY_SLEEP,
                 rng: Callable[[], float] = random.random) -> None:
        self._requester = requester
        self.reporting_controller = reporting_controller
        self._hostname = socket.gethostname()
        self._instance = reporting_instance
        self.reporting_instance = self._instance_for(reporting_controller)
        self._clock = clock
        self._queue: deque[_Event] = deque()  # writes not started yet
        self._high_water = max(1, high_water)
        self._idle: deque[asyncio.Future[None]] = deque()  # writers waiting for the queue to fill
        self._room = asyncio.Event()
        self._room.set()
        self._bucket = _TokenBucket(qps, burst)
        self._throttled = qps > 0  # run's events client throttles instead (qps 0 here)
        # Writers under way: ``max_in_flight`` scaled by ``concurrency`` (run's is the binding
        # tasks' own: more while work waits and the answers take long for the network's sake only).
        self._writers_limit = concurrency or ConcurrencyLimit(least=max_in_flight, most=most_in_flight or MOST,
                                                              what="event writes")
        self._writers_base = max_in_flight
        self._writers: list[asyncio.Task[None]] = []
        self._writing = 0  # writes under way
        self._max_tries = max_tries
        self._retry_sleep = retry_sleep
        self._rng = rng
        self._cache: dict[_Key, _Event] = {}
        self._stopped = False  # the writers are gone: what is recorded now is lost
        self._hurry = asyncio.Event()  # stopping: retries wait no longer
        self.stats = BroadcasterStats()

    def _instance_for(self, controller: str) -> str:
        # NewRecorder: reportingInstance = reportingController + "-" + hostname.
        return self._instance or f"{controller}-{self._hostname}"

    @property
    def dropped(self) -> int:
        return self.stats.dropped

    def record(self, regarding: ObjectRef, related: ObjectRef | None, event_type: str, reason: str, action: str,
               note: str, *, reporting_controller: str | None = None) -> None:
        """Queue one event; never blocks (call it from the event loop's thread).
        ``reporting_controller`` overrides the broadcaster's for a profile with
        another scheduler name, as kube-scheduler has one recorder per profile."""
        if event_type not in _EVENT_TYPES:
            log.error("Unsupported event type: %r", event_type)
            return
        now = self._clock()
        controller = reporting_controller or self.reporting_controller
        key = _Key(event_type, action, reason, controller, self._instance_for(controller), regarding, related)
        name = f"{regarding.name}.{int(now * 1e9):x}"
        self.stats.recorded += 1
        to_write = self._aggregate(_Event(key, name, regarding.namespace or "default", now, truncate_note(note)))
        if to_write is None:
            return
        if self._stopped:
            self.stats.dropped += 1
            self.stats.lost_at_exit += 1
            log.warning("event recorded after the event writer stopped, not written", extra={"event": name})
            return
        queue = self._queue
        queue.append(to_write)
        if len(queue) >= self._high_water:
            self._room.clear()
        idle = self._idle
        while idle:  # wake one idle writer (a busy one takes the next write when it is done)
            waiter = idle.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break

    # -- back-pressure ---------------------------------------------------------------
    @property
    def backlog(self) -> int:
        """Writes queued and not started."""
        return len(self._queue)

    def has_room(self) -> bool:
        return self._room.is_set()

    async def room(self) -> None:
        """Wait until fewer than ``high_water`` writes are queued (the scheduling loop
        calls this between cycles: it slows down rather than losing events)."""
        if not self._room.is_set():
            self.stats.waits += 1
            await self._room.wait()

    # -- the writer ----------------------------------------------------------------
    async def run(self) -> None:
        """Write queued events until cancelled, with upstream's series heartbeats: up to
        ``max_in_flight`` writers, each taking the oldest queued write when it is free (no
        task per event)."""
        heartbeats = [asyncio.create_task(self._every(FINISH_TIME, self.finish_series)),
                      asyncio.create_task(self._every(REFRESH_TIME, self.refresh_series))]
        self._writers = [asyncio.create_task(self._writer())
                         for _ in range(self._writers_limit.share(self._writers_base))]
        try:
            await asyncio.get_running_loop().create_future()  # until cancelled (writers never end on failures)
        finally:
            writers, self._writers = self._writers, []
            for task in [*heartbeats, *writers]:
                task.cancel()
            await asyncio.gather(*heartbeats, *writers, return_exceptions=True)
            self._stopped = True
            self._count_left()

    def _count_left(self) -> None:
        """The writers are gone: what was queued, and writes cut off (their answer never
        read), is lost; counted as dropped and said in one line."""
        left = len(self._queue) + self._writing
        self._queue.clear()
        self._writing = 0
        self._room.set()  # nobody waits for room that will never come
        stats = self.stats
        stats.dropped += left
        stats.lost_at_exit += left
        if left:
            log.error("event writer stopped: %d events written, %d dropped (%d not written at exit)",
                      stats.written, stats.dropped, left)
        else:
            log.info("event writer stopped: %d events written, %d dropped", stats.written, stats.dropped)

    async def shutdown(self, grace: float) -> bool:
        """Write what is queued, for at most ``grace`` seconds (as the writer stops, the caller
        then cancels ``run``); whether everything was written in time. Events recorded
        meanwhile are written too. Retries of transport failures are not waited for past the
        grace period: those writes count as dropped."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, grace)
        self._hurry.set()
        queued = len(self._queue) + self._writing
        if queued:
            log.info("writing the %d queued events before exit (at most %.0fs)", queued, grace)
        while self._queue or self._writing:
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    async def _writer(self) -> None:
        queue, room, limit, base = self._queue, self._room, self._writers_limit, self._writers_base
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()
        while True:
            if len(self._writers) > limit.share(base):  # the limit came down: one writer fewer
                if me in self._writers:
                    self._writers.remove(me)
                return
            if not queue:
                waiter: asyncio.Future[None] = loop.create_future()
                self._idle.append(waiter)
                await waiter
                continue
            event = queue.popleft()
            if not room.is_set() and len(queue) < self._high_water:
                room.set()
            self._writing += 1  # a write cut off at exit stays counted: it is lost (``_count_left``)
            started = time.perf_counter()
            try:
                await self._write(event)
            except Exception:  # noqa: BLE001 - a writer must survive any failure
                log.exception("writing event %s/%s failed", event.namespace, event.name)
            self._writing -= 1
            now = time.perf_counter()
            limit.answered(now - started, None, now)
            while len(self._writers) < limit.share(base) and me in self._writers:  # the limit went up
                self._writers.append(loop.create_task(self._writer()))

    async def drain(self) -> None:
        """Wait until the queue is empty and no write is in flight (tests, shutdown)."""
        while self._queue or self._writing:
            await asyncio.sleep(0.005)

    async def _every(self, period: float, job: Callable[[], object]) -> None:
        while True:
            await asyncio.sleep(period)
            result = job()
            if asyncio.iscoroutine(result):
                await result

    def _aggregate(self, event: _Event) -> _Event | None:
        """recordToSink's cache step, as the event arrives: the event to write, or None
        when it only bumped a running series."""
        cached = self._cache.get(event.key)
        if cached is None:
            self._cache[event.key] = event
            return event.snapshot()
        cached.last_observed = event.event_time
        if cached.series_count:
            cached.series_count += 1
            self.stats.aggregated += 1
            return None
        cached.series_count = 2
        return cached.snapshot()

    async def _write(self, event: _Event) -> None:
        """attemptRecording: retry transport failures a bounded number of times."""
        tries = 0
        while True:
            retry = await self._record(event)
            if not retry:
                return
            tries += 1
            if tries >= self._max_tries:
                self.stats.dropped += 1
                log.error("Unable to write event %s/%s (retry limit exceeded!)", event.namespace, event.name)
                return
            await self._pause(self._retry_sleep * (1 + self._rng() * 0.25))

    async def _pause(self, seconds: float) -> None:
        """The sleep before a retry, cut short once the writer is stopping: within the grace
        period a retry is better than a loss."""
        hurry = self._hurry
        if hurry.is_set():
            await asyncio.sleep(_HURRIED_RETRY)
            return
        try:
            async with asyncio.timeout(seconds):
                await hurry.wait()
        except TimeoutError:
            pass

    async def _record(self, event: _Event) -> bool:
        """recordEvent: patch a series (create it if the event is gone), create a single
        event; whether to retry. The server's answer (the event written) is not read."""
        base = f"/apis/events.k8s.io/v1/namespaces/{event.namespace}/events"
        try:
            if self._throttled:
                await self._bucket.take()
            if event.series_count:
                try:
                    await self._requester.write("PATCH", f"{base}/{event.name}", body={"series": event.series()},
                                                content_type=_PATCH)
                except Exception as error:  # noqa: BLE001
                    if status_of(error) != 404:
                        raise
                    if self._throttled:
                        await self._bucket.take()
                    await self._requester.write("POST", base, body=event.body())
            else:
                await self._requester.write("POST", base, body=event.body())
        except Exception as error:  # noqa: BLE001 - sorted below as upstream does
            status = status_of(error)
            if status is None or status == 0:
                log.error("Unable to write event %s/%s (may retry after sleeping): %s", event.namespace,
                          event.name, error)
                return True
            if status == 409 and event.series_count:
                return True  # created concurrently: patch it on the next try
            if status != 409:
                log.error("Server rejected event %s/%s (will not retry!): %s", event.namespace, event.name, error)
                self.stats.dropped += 1
            return False
        self.stats.written += 1
        return False

    # -- heartbeats ----------------------------------------------------------------
    async def finish_series(self) -> None:
        """Write the final count of series idle for FINISH_TIME and forget them; forget
        single events older than that."""
        horizon = self._clock() - FINISH_TIME
        for key, event in list(self._cache.items()):
            if event.series_count:
                if event.last_observed < horizon:
                    retry = await self._record(event.snapshot())
                    if not retry:
                        self._cache.pop(key, None)
            elif event.event_time < horizon:
                self._cache.pop(key, None)

    async def refresh_series(self) -> None:
        """Write every live series again so the API server's TTL does not expire it."""
        for event in list(self._cache.values()):
            if event.series_count:
                await self._record(event.snapshot())
