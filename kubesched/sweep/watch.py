"""Watching the cluster while a sweep runs: which workers ran tasks, which were lost, which
tasks had to start again, and whether any worker is left at all.

Dask reschedules the tasks of a worker that dies on the others (up to its
``allowed-failures``, then the task fails with ``KilledWorker``), so a lost worker costs
time, not results; the sweep reports it. When the *last* worker is gone, Dask waits for
one to join, silently and for ever: the sweep instead warns at once and, if none has
joined within ``no_worker_timeout`` seconds, gives up on the tasks left.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from dask.distributed import Client

from .outcome import NO_WORKER_TIMEOUT

__all__ = ["ClusterWatch", "NO_WORKER_TIMEOUT", "POLL_SECONDS"]

POLL_SECONDS = 0.5


@dataclass(slots=True)
class ClusterWatch:
    """Polled by the sweep between results; ``warn`` gets one line when no worker is left."""

    client: Client
    keys: frozenset[str]
    no_worker_timeout: float = NO_WORKER_TIMEOUT
    warn: Callable[[str], None] | None = None
    used: set[str] = field(default_factory=set)  # workers that ran (or hold the result of) a task
    lost: set[str] = field(default_factory=set)  # workers that left while the sweep ran
    recomputed: set[str] = field(default_factory=set)  # keys that were running on a lost worker
    _alive: set[str] = field(default_factory=set)
    _running: dict[str, set[str]] = field(default_factory=dict)  # worker -> keys it was running, last poll
    _alone_since: float | None = None  # when the last worker left
    _warned: bool = False

    def poll(self, unfinished: Collection[str]) -> None:
        """Look at the workers and what they run now."""
        workers = set(self.client.scheduler_info().get("workers", {}))
        for worker in self._alive - workers:
            self.lost.add(worker)
            self.recomputed.update(k for k in self._running.get(worker, ()) if k in unfinished)
        self._alive = workers
        processing = self.client.processing()
        self._running = {w: {str(k) for k in keys if str(k) in self.keys} for w, keys in processing.items()}
        # A task can start on a worker and lose it between two polls: the scheduler's own count
        # of the workers that died running each task (what ``allowed-failures`` is checked
        # against) sees those too.
        self.recomputed.update(k for k, deaths in self.client.run_on_scheduler(_suspicious_counter(self.keys)).items()
                               if deaths)
        self.used.update(w for w, keys in self._running.items() if keys)
        if workers:
            if self._alone_since is not None and self.warn is not None and self._warned:
                self.warn(f"{len(workers)} worker(s) joined: the sweep goes on")
            self._alone_since, self._warned = None, False
        elif unfinished:
            if self._alone_since is None:
                self._alone_since = time.monotonic()
            if not self._warned and self.warn is not None:
                self.warn(f"no Dask worker is left ({len(self.lost)} lost): {len(unfinished)} task(s) wait for one to "
                          f"join; giving up in {self.no_worker_timeout:g}s")
                self._warned = True

    def ran(self, holders: Collection[str]) -> None:
        """Workers that hold a finished task's result ran it."""
        self.used.update(holders)

    @property
    def stranded(self) -> bool:
        """No worker for longer than the timeout: the tasks left will not run."""
        return self._alone_since is not None and time.monotonic() - self._alone_since >= self.no_worker_timeout


def _suspicious_counter(keys: frozenset[str]) -> Callable[..., dict[str, int]]:
    """A function for ``Client.run_on_scheduler``: each of ``keys``' count of workers that died
    while running it. Built here, as a closure, so that it is sent by value and the scheduler
    needs nothing of kubesched installed."""

    def suspicious(dask_scheduler: Any) -> dict[str, int]:
        return {str(k): ts.suspicious for k, ts in dask_scheduler.tasks.items() if str(k) in keys}

    return suspicious
