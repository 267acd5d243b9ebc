"""The binding workers' threads: a bounded pool in which a parked thread does not count.

Upstream binds each pod in its own goroutine, without a bound; a goroutine blocked in
DynamicResources' PreBind, waiting up to the 10-minute bindingTimeout for a device's
binding conditions, holds up nobody else. Here binding work runs on threads, at most
``workers`` at once (32 by default: the API calls and plugin code of binding cycles).
A thread that parks (``parked()``: the binding-condition wait between two polls) stops
counting toward that bound, and a new thread starts if work is queued, as Go's runtime
starts another thread when one blocks. A thread back from parking finishes its work
and then leaves if the pool is over its bound. Threads waiting for work leave on
``shutdown``; parked ones are ended by their own wait (the client's stop).
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

__all__ = ["ParkingPool", "parked"]

T = TypeVar("T")

_current = threading.local()  # .pool: the ParkingPool whose thread this is


class ParkingPool:
    def __init__(self, workers: int, thread_name_prefix: str = "binding") -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self._workers = workers
        self._prefix = thread_name_prefix
        self._cond = threading.Condition()
        self._queue: collections.deque[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = collections.deque()
        self._threads = 0  # alive
        self._idle = 0  # waiting for work
        self._parked = 0
        self._names = itertools.count()
        self._shutdown = False

    @property
    def parked_threads(self) -> int:
        return self._parked

    @property
    def threads(self) -> int:
        return self._threads

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._cond:
            if self._shutdown:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._queue.append((fn, future))
            self._wake_or_start()
        return future

    def _running(self) -> int:
        return self._threads - self._parked

    def _wake_or_start(self) -> None:
        """With the lock held and work queued: wake an idle thread, or start one under the bound."""
        if self._idle > 0:
            self._idle -= 1  # counted down here: a second submit before it runs wakes another
            self._cond.notify()
        elif self._running() < self._workers:
            self._threads += 1
            threading.Thread(target=self._work, name=f"{self._prefix}_{next(self._names)}", daemon=True).start()

    def _work(self) -> None:
        _current.pool = self
        while True:
            with self._cond:
                while True:
                    if self._running() > self._workers:  # over the bound since a parked thread came back
                        self._threads -= 1
                        if self._queue:
                            self._wake_or_start()  # the queued work goes to an idle thread, if any
                        return
                    if self._queue or self._shutdown:
                        break
                    self._idle += 1
                    self._cond.wait()
                if not self._queue:  # shut down
                    self._threads -= 1
                    return
                fn, future = self._queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as err:  # noqa: BLE001 - the future carries it to the caller
                future.set_exception(err)
            else:
                future.set_result(result)

    @contextlib.contextmanager
    def _park(self) -> Iterator[None]:
        with self._cond:
            self._parked += 1
            if self._queue and not self._shutdown:
                self._wake_or_start()
        try:
            yield
        finally:
            with self._cond:
                self._parked -= 1

    def shutdown(self, cancel_futures: bool = True) -> None:
        """No new work; threads waiting for work leave; queued work is cancelled."""
        with self._cond:
            self._shutdown = True
            if cancel_futures:
                while self._queue:
                    _, future = self._queue.popleft()
                    future.cancel()
            self._idle = 0
            self._cond.notify_all()


def parked() -> contextlib.AbstractContextManager[None]:
    """Around a long wait on a pool's thread: the thread stops counting toward the pool's bound
    meanwhile (elsewhere, nothing happens)."""
    pool: ParkingPool | None = getattr(_current, "pool", None)
    return pool._park() if pool is not None else contextlib.nullcontext()
