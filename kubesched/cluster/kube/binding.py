"""Binding cycles beside the scheduling loop.

Upstream runs each binding cycle in its own goroutine, so the next scheduling cycle
starts while the API server answers the last bind. Here the binding *work* (PreBind
and Bind: plugin code that may wait on the API server) runs on a bounded pool of
worker threads (``ParkingPool``: a thread parked in a long wait, such as PreBind's for
device binding conditions, does not count toward the bound), and its completion (confirm or forget the assumed pod, requeue on
failure) is handed back to the event loop, the one thread that touches the cache and
the queue, so neither needs a lock.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections import deque
from typing import Awaitable, Callable, Protocol

from ...framework.status import Code, Status
from ...objects.pod import PodInfo
from ...scheduler.metrics import SchedulerMetrics
from ...scheduler.scheduler import BindingDone, BindingWork, DirectBinder
from .concurrency import ConcurrencyLimit
from .errors import ApiError
from .parking_pool import ParkingPool

__all__ = ["BindingPool", "EventRoom"]

log = logging.getLogger("kubesched.binding")

class EventRoom(Protocol):
    """The event writer's back-pressure: producers of events wait while its queue is full."""

    def has_room(self) -> bool: ...

    async def room(self) -> None: ...


# The direct binder stands in for DefaultBinder only (a profile with another Bind plugin runs the framework).
_DEFAULT_BINDER = "DefaultBinder"


def _api_message(err: Exception) -> str:
    """What client-go's error says: a refusal is the Status's message alone
    (``Operation cannot be fulfilled on pods/binding ...``), not our code and reason; no answer
    is Go's ``url.Error`` (``Post "https://...": EOF``, see ``transport_errors``)."""
    return err.message if isinstance(err, ApiError) else str(err)


class BindingPool:
    def __init__(self, loop: asyncio.AbstractEventLoop, workers: int, on_done: Callable[[], None],
                 metrics: SchedulerMetrics | None = None) -> None:
        self._loop = loop
        self._metrics = metrics  # scheduler_goroutines{operation="binding"}: binding cycles under way
        self._executor = ParkingPool(workers, thread_name_prefix="binding")
        self._on_done = on_done
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        # The direct binder's queue and its long-lived binding tasks (see ``direct``).
        self._direct_queue: deque[tuple[PodInfo, str, BindingDone]] = deque()
        self._direct_idle: deque[asyncio.Future[None]] = deque()
        self._direct_workers: list[asyncio.Task[None]] = []
        self._direct_limit = ConcurrencyLimit()
        self.sending = 0  # direct binds sent and not answered yet
        self._direct_bind: Callable[[PodInfo, str], Awaitable[None]] | None = None
        # The event writer's back-pressure (set by the driver): a binding completion records an
        # event, so no binding starts while the writer's queue is past its mark.
        self.room: EventRoom | None = None
        self._held: deque[tuple[BindingWork, BindingDone]] = deque()  # thread-pool work waiting for room
        self._holding: asyncio.Task[None] | None = None

    def _started(self) -> None:
        self.in_flight += 1
        self._idle.clear()
        if self._metrics is not None:
            self._metrics.goroutines("binding", 1)

    def _finished(self, status: Status | None, done: BindingDone) -> None:
        """Hand the result to the scheduler's completion, on the loop."""
        self.in_flight -= 1
        if self._metrics is not None:
            self._metrics.goroutines("binding", -1)
        try:
            done(status)
        except Exception:  # pragma: no cover - the completion's own paths catch their failures
            log.exception("completing a binding cycle failed")
        if self.in_flight == 0:
            self._idle.set()
        self._on_done()

    def __call__(self, work: BindingWork, done: BindingDone) -> None:
        self._started()
        room = self.room
        if self._held or (room is not None and not room.has_room()):
            self._held.append((work, done))  # in order, behind those already held
            if self._holding is None:
                self._holding = self._loop.create_task(self._submit_held())
            return
        self._submit(work, done)

    def _submit(self, work: BindingWork, done: BindingDone) -> None:
        future = self._executor.submit(work)
        future.add_done_callback(lambda f: self._hand_back(f, done))

    async def _submit_held(self) -> None:
        """Binding cycles held back while the event writer was far behind, started as room comes."""
        held = self._held
        try:
            while held:
                room = self.room
                if room is not None and not room.has_room():
                    await room.room()
                    continue
                work, done = held.popleft()
                self._submit(work, done)
        finally:
            self._holding = None

    def _hand_back(self, future: concurrent.futures.Future[Status | None], done: BindingDone) -> None:
        try:
            self._loop.call_soon_threadsafe(self._complete, future, done)
        except RuntimeError:  # the loop is closed: the process is exiting, the informers will tell the next one
            log.debug("binding finished after shutdown")

    def _complete(self, future: concurrent.futures.Future[Status | None], done: BindingDone) -> None:
        try:
            status = future.result()
        except BaseException as err:  # noqa: BLE001 - the pod must reach the failure path whatever happened
            status = Status.as_error(err)
        self._finished(status, done)

    def direct(self, bind: Callable[[PodInfo, str], Awaitable[None]],
               limit: ConcurrencyLimit | None = None) -> DirectBinder:
        """A ``DirectBinder`` that awaits ``bind`` on the loop itself: DefaultBinder's API call
        without a worker thread or two thread hand-offs per pod. Binds queue in the order the
        pods were scheduled and up to ``limit.limit`` of them are under way at once (32 near
        the server, more when its answers take long: ``concurrency``), each taken by a
        long-lived task rather than a task per pod."""
        self._direct_limit = limit if limit is not None else ConcurrencyLimit()
        self._direct_bind = bind
        return self._start_direct

    def _start_direct(self, pod: PodInfo, node_name: str, done: BindingDone) -> None:
        self._started()
        self._direct_queue.append((pod, node_name, done))
        self._wake_binders()

    def _wake_binders(self) -> None:
        """Queued binds: wake an idle binding task, else start one under the limit."""
        idle, queue = self._direct_idle, self._direct_queue
        while idle:
            waiter = idle.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        if queue and len(self._direct_workers) < self._direct_limit.limit and self._direct_bind is not None:
            self._direct_workers.append(self._loop.create_task(self._bind_queued(self._direct_bind)))

    async def _bind_queued(self, bind: Callable[[PodInfo, str], Awaitable[None]]) -> None:
        queue, idle, loop, limit = self._direct_queue, self._direct_idle, self._loop, self._direct_limit
        me = asyncio.current_task()
        while True:
            if len(self._direct_workers) > limit.limit:  # the limit came down: one task fewer
                if me in self._direct_workers:
                    self._direct_workers.remove(me)
                if queue:
                    self._wake_binders()
                return
            room = self.room
            if not queue or (room is not None and not room.has_room()):
                if queue and room is not None:
                    await room.room()  # the event writer is far behind: bind (and record) later
                    continue
                waiter: asyncio.Future[None] = loop.create_future()
                idle.append(waiter)
                await waiter
                continue
            pod, node_name, done = queue.popleft()
            started = time.perf_counter()
            self.sending += 1
            try:
                await bind(pod, node_name)
                status = None
            except Exception as err:  # the API's refusal is the binding cycle's error, as RunBindPlugins wraps it
                status = Status(Code.ERROR, f'running Bind plugin "{_DEFAULT_BINDER}": {_api_message(err)}',
                                plugin=_DEFAULT_BINDER, error=err)
            finally:
                self.sending -= 1
            now = time.perf_counter()
            limit.answered(now - started, bool(queue), now)
            self._finished(status, done)
            # The limit went up (on this answer or an event write's: the limit is shared): more at once.
            for _ in range(min(limit.limit - len(self._direct_workers), len(queue))):
                self._direct_workers.append(loop.create_task(self._bind_queued(bind)))

    def drop_unsent(self) -> int:
        """On shutdown, before ``drain``: binds not sent yet are dropped (their pods stay pending
        for the next scheduler; a bind sent after the stop would only race it), so that
        ``drain`` waits only for those under way, whose answers are read and whose events
        recorded. How many were dropped."""
        dropped = len(self._direct_queue) + len(self._held)
        if dropped:
            log.info("stopping: %d binds not sent", dropped)
            self._direct_queue.clear()
            self._held.clear()
            self.in_flight -= dropped
            if self._metrics is not None:
                self._metrics.goroutines("binding", -dropped)
            if self.in_flight == 0:
                self._idle.set()
        return dropped

    async def drain(self, timeout: float) -> bool:
        """Wait for bindings in flight (on shutdown); False if some were still running."""
        try:
            async with asyncio.timeout(timeout):  # not wait_for, which can swallow a cancellation in 3.11
                await self._idle.wait()
            return True
        except TimeoutError:
            return False

    def shutdown(self) -> None:
        self._executor.shutdown(cancel_futures=True)
        for task in self._direct_workers:
            task.cancel()
        self._direct_workers = []
        if self._holding is not None:
            self._holding.cancel()
        self._held.clear()
