"""The scheduling queue's arithmetic of time: backoffs, and the ticks of the periodic flushes.

Pure functions of a pod's counters, the configuration and a clock reading, kept apart
from the queue's bookkeeping so that upstream's rules (the doubling backoff capped at
``podMaxBackoffSeconds``; with ``SchedulerPopFromBackoffQ``, expiries truncated to whole
seconds and ordering windows; flushes every second and every 30 s, on whole-second
ticks from the queue's start) read in one place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..framework.queued_pod import QueuedPodInfo

__all__ = [
    "BACKOFF_FLUSH_PERIOD",
    "UNSCHEDULABLE_FLUSH_PERIOD",
    "QueueConfig",
    "backoff_done_at",
    "is_backing_off",
    "next_tick",
    "record_failure",
    "tick_at_or_before",
]

BACKOFF_FLUSH_PERIOD = 1.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0


@dataclass(slots=True)
class QueueConfig:
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    pod_max_in_unschedulable: float = 300.0
    pop_from_backoff_q: bool = True
    # GenericWorkload: a pod of a pod group that failed retries after its backoff whatever
    # rejected it (upstream has no event-driven requeueing for groups yet).
    pod_groups: bool = False


def _backoff_duration(info: QueuedPodInfo, config: QueueConfig) -> float:
    count = info.consecutive_errors_count or info.unschedulable_count or info.attempts
    if count <= 0:
        return 0.0
    duration = config.pod_initial_backoff
    for _ in range(1, count):
        if duration > config.pod_max_backoff - duration:
            return config.pod_max_backoff
        duration += duration
    return duration


def record_failure(info: QueuedPodInfo, now: float, error: bool, config: QueueConfig) -> None:
    """The pod's attempt failed at ``now``, with an error or as unschedulable: count it
    (errors in a row; an unschedulable attempt ends such a run) and set when its backoff ends."""
    info.timestamp = now
    if error:
        info.consecutive_errors_count += 1
    else:
        info.consecutive_errors_count = 0
        info.unschedulable_count += 1
    expiry = info.timestamp + _backoff_duration(info, config)
    info.backoff_expiry = float(math.floor(expiry)) if config.pop_from_backoff_q else expiry


def is_backing_off(info: QueuedPodInfo, now: float, config: QueueConfig) -> bool:
    """Whether the pod still waits out its backoff. With ordering windows (upstream's
    ``SchedulerPopFromBackoffQ``) the expiry is truncated to a whole second, and the
    pod is done once the clock is in a later window."""
    if not (info.consecutive_errors_count or info.unschedulable_count):
        return False  # never failed: no backoff
    if config.pop_from_backoff_q:
        return info.backoff_expiry >= math.floor(now)
    return info.backoff_expiry > now


def backoff_done_at(info: QueuedPodInfo, config: QueueConfig) -> float:
    """The first moment the pod is no longer backing off."""
    if config.pop_from_backoff_q:
        return info.backoff_expiry + BACKOFF_FLUSH_PERIOD
    return info.backoff_expiry


def next_tick(start: float, when: float, period: float) -> float:
    """The first periodic flush tick at or after ``when`` (ticks every ``period`` from ``start``)."""
    ticks = math.ceil((when - start) / period)
    return start + ticks * period


def tick_at_or_before(start: float, when: float, period: float) -> float:
    """The periodic flush tick at or before ``when``: flushes stay on their ticks."""
    ticks = math.floor((when - start) / period)
    return start + ticks * period
