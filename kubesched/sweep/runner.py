"""Running a grid on Dask: a local cluster of processes, or an existing cluster by address.

Nothing here distributes work by itself: each spec is one task submitted through
``dask.distributed.Client.map`` (the function is ``run_replay`` or ``run_compare``,
pickled by reference, so the workers need kubesched installed), and results come back
through ``as_completed`` in the order they finish. A task that raises is recorded with its
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

from dask.distributed import Client, Future, LocalCluster, as_completed

from .describe import describe
from .outcome import Done, SweepOutcome, TaskFailure

__all__ = ["connect", "default_workers", "run_sweep", "worker_count"]

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
              on_done: Callable[[Done[S, R]], None] | None = None) -> SweepOutcome[S, R]:
    """Run ``function(spec)`` for every spec on ``client``'s cluster; see the module docstring.

    Each task gets a key of its own (``kubesched-<sweep>-<index>``), so equal specs still
    run once each and sweeps sharing a cluster do not share results.
    """
    outcome: SweepOutcome[S, R] = SweepOutcome(list(specs), [None] * len(specs), workers=worker_count(client))
    sweep = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    keys = [f"kubesched-{sweep}-{i}" for i in range(len(specs))]
    futures: list[Future[R]] = client.map(function, outcome.specs, key=keys, pure=False)
    index = {future.key: i for i, future in enumerate(futures)}
    completed = 0
    try:
        for future in as_completed(futures):
            i = index[future.key]
            result: R | None = None
            failure = None
            if future.status == "finished":
                result = future.result()
                outcome.results[i] = result
            else:
                failure = TaskFailure(i, describe(outcome.specs[i]), _error(future))
                outcome.failures.append(failure)
            completed += 1
            if on_done is not None:
                on_done(Done(i, outcome.specs[i], result, failure, completed, len(specs)))
    except KeyboardInterrupt:
        outcome.interrupted = True
        client.cancel([f for f in futures if not f.done()])
    outcome.seconds = time.perf_counter() - started
    outcome.failures.sort(key=lambda f: f.index)
    return outcome


def _error(future: Future[R]) -> str:
    if future.status == "cancelled":
        return "cancelled by the cluster"
    error: BaseException = future.exception()
    return f"{type(error).__name__}: {_one_line(error)}"


def _one_line(error: BaseException) -> str:
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip()) or repr(error)
