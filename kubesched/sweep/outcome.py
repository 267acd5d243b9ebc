"""What a sweep gives back: every spec with its result or its failure, in grid order.

Plain data, free of Dask: the tables and reports read it without the cluster's modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["Done", "NO_WORKER_TIMEOUT", "SweepOutcome", "TaskFailure"]

NO_WORKER_TIMEOUT = 300.0
"""Seconds a sweep waits, once no Dask worker is left, for one to join before it fails the tasks left."""

S = TypeVar("S")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class TaskFailure:
    """A task that raised (or was lost with its worker): which spec, and the error."""

    index: int  # in the grid's order
    task: str  # the spec, described
    error: str  # "TraceError: pods.csv:3: gpu_milli: ..." on one line


@dataclass(slots=True)
class SweepOutcome(Generic[S, R]):
    """Every spec with its result (None when it failed or was cancelled), in grid order."""

    specs: list[S]
    results: list[R | None]
    failures: list[TaskFailure] = field(default_factory=list)
    interrupted: bool = False  # Ctrl-C: the tasks not finished were cancelled
    seconds: float = 0.0  # wall-clock time from submitting to the last result
    workers: int = 0  # workers when the sweep started
    workers_used: int = 0  # workers that ran a task of it
    workers_lost: int = 0  # workers that left (died) while it ran
    recomputed: int = 0  # tasks that were running on a lost worker and started again elsewhere
    stranded: bool = False  # the last worker left and none joined in time: the tasks left failed

    @property
    def finished(self) -> list[R]:
        """The results of the tasks that succeeded, in grid order."""
        return [r for r in self.results if r is not None]

    @property
    def cancelled(self) -> int:
        failed = {f.index for f in self.failures}
        return sum(1 for i, r in enumerate(self.results) if r is None and i not in failed)


@dataclass(frozen=True, slots=True)
class Done(Generic[S, R]):
    """One finished task, as the progress callback sees it."""

    index: int
    spec: S
    result: R | None
    failure: TaskFailure | None
    completed: int  # tasks finished so far, this one included
    total: int
