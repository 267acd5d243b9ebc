"""Running a grid on Dask: a local cluster of processes, or an existing cluster by address.

Nothing here distributes work by itself: each spec is one task submitted through
``dask.distributed.Client.map`` (the function is ``run_replay`` or ``run_compare``,
pickled by reference, so the workers need kubesched installed), and results come back
as they finish (polled, so that the cluster can be watched between results: see
``watch``). A task that raises is recorded with its
spec and error and the sweep goes on; Ctrl-C cancels the tasks still queued or running
and returns what finished. This module needs the ``research`` extra (dask[distributed]).
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TypeVar

from dask.distributed import Client, Future, LocalCluster, wait

from .describe import describe
from .outcome import NO_WORKER_TIMEOUT, Done, SweepOutcome, TaskFailure
from .watch import POLL_SECONDS, ClusterWatch

__all__ = ["NO_WORKER_TIMEOUT", "connect", "default_workers", "run_sweep", "worker_count"]

S = TypeVar("S")
R = TypeVar("R")
CONNECT_TIMEOUT = 10.0  # seconds to reach a remote scheduler


def default_workers() -> int:
    """One worker process per CPU."""
    return os.cpu_count() or 1


@contextmanager
def connect(address: str | None = None, workers: int | None = None, timeout: float | None = None) -> Iterator[Client]:
    """A client of the Dask scheduler at ``address``, or of a ``LocalCluster`` of
    ``workers`` single-threaded processes (default: one per CPU) started here and closed
    on the way out, however the block ends. Raises ``OSError`` when the scheduler at
    ``address`` cannot be reached within ``timeout`` seconds (default ``CONNECT_TIMEOUT``)."""
    with ExitStack() as stack:
        if address is None:
            # No dashboard; the scheduler's HTTP routes on a free port (8787 may be taken).
            cluster = stack.enter_context(LocalCluster(
                n_workers=workers or default_workers(), threads_per_worker=1, processes=True, dashboard_address=None,
                scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = stack.enter_context(Client(address, timeout=timeout or CONNECT_TIMEOUT))
            except (OSError, TimeoutError, ValueError) as err:
                raise OSError(f"cannot reach the Dask scheduler at {address}: {_one_line(err)}") from None
        yield client


def worker_count(client: Client) -> int:
    info: dict[str, dict[str, object]] = client.scheduler_info()
    return len(info.get("workers", {}))


def run_sweep(client: Client, function: Callable[[S], R], specs: Sequence[S],
              on_done: Callable[[Done[S, R]], None] | None = None, no_worker_timeout: float = NO_WORKER_TIMEOUT,
              warn: Callable[[str], None] | None = None) -> SweepOutcome[S, R]:
    """Run ``function(spec)`` for every spec on ``client``'s cluster; see the module docstring.

    Each task gets a key of its own (``kubesched-<sweep>-<index>``), so equal specs still
    run once each and sweeps sharing a cluster do not share results. The cluster is
    watched as results come (``watch.ClusterWatch``): when no worker is left, ``warn``
    gets one line, and after ``no_worker_timeout`` seconds without one the tasks left
    fail ("no Dask worker left") instead of waiting for ever.
    """
    outcome: SweepOutcome[S, R] = SweepOutcome(list(specs), [None] * len(specs), workers=worker_count(client))
    sweep = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    keys = [f"kubesched-{sweep}-{i}" for i in range(len(specs))]
    futures: list[Future[R]] = client.map(function, outcome.specs, key=keys, pure=False)
    index = {future.key: i for i, future in enumerate(futures)}
    watch = ClusterWatch(client, frozenset(keys), no_worker_timeout, warn)
    pending = set(futures)
    completed = 0

    def finish(future: Future[R], failure: TaskFailure | None = None) -> None:
        nonlocal completed
        i = index[future.key]
        result: R | None = None
        if failure is None and future.status == "finished":
            result = future.result()
            outcome.results[i] = result
        else:
            failure = failure or TaskFailure(i, describe(outcome.specs[i]), _error(future))
            outcome.failures.append(failure)
        completed += 1
        pending.discard(future)
        if on_done is not None:
            on_done(Done(i, outcome.specs[i], result, failure, completed, len(specs)))

    try:
        watch.poll(keys)
        while pending:
            done = _first_done(pending)
            finished = [f for f in done if f.status == "finished"]
            if finished:
                for holders in client.who_has(finished).values():
                    watch.ran(holders)
            for future in sorted(done, key=lambda f: index[f.key]):
                finish(future)
            watch.poll({str(f.key) for f in pending})
            if pending and watch.stranded:
                outcome.stranded = True
                client.cancel(list(pending))
                for future in sorted(pending, key=lambda f: index[f.key]):
                    i = index[future.key]
                    finish(future, TaskFailure(i, describe(outcome.specs[i]),
                                               f"no Dask worker left for {no_worker_timeout:g}s: not run"))
    except KeyboardInterrupt:
        outcome.interrupted = True
        client.cancel([f for f in futures if not f.done()])
    outcome.seconds = time.perf_counter() - started
    outcome.failures.sort(key=lambda f: f.index)
    outcome.workers_used, outcome.workers_lost = len(watch.used), len(watch.lost)
    outcome.recomputed = len(watch.recomputed)
    return outcome


def _first_done(pending: set[Future[R]]) -> set[Future[R]]:
    """The futures done within a poll interval (maybe none)."""
    try:
        done: set[Future[R]] = wait(list(pending), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED").done
    except TimeoutError:
        return set()
    return done


def _error(future: Future[R]) -> str:
    if future.status == "cancelled":
        return "cancelled by the cluster"
    error: BaseException = future.exception()
    return f"{type(error).__name__}: {_one_line(error)}"


def _one_line(error: BaseException) -> str:
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip()) or repr(error)
