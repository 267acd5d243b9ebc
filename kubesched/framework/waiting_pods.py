"""Pods held at Permit: ``WaitingPod`` and the profile's map of them (upstream's ``waitingPodsMap``).

A Permit plugin that answers Wait keeps the pod assumed on its node while the binding
cycle waits for every such plugin to ``allow`` it; any ``reject``, or the end of a
plugin's timeout, fails the attempt. Time is the scheduler's clock, so the simulator
expires waits on its virtual clock.
"""

from __future__ import annotations

import threading
from typing import Callable

from ..objects.pod import PodInfo
from .config_go import NANOS_PER_SECOND, format_duration
from .status import Code, Status

__all__ = ["WaitingPod", "WaitingPods", "timeout_message"]


class WaitingPod:
    """One pod waiting at Permit; ``on_done(status)`` runs once, when it is decided."""

    def __init__(self, pod: PodInfo, node_name: str, deadlines: dict[str, float],
                 on_done: Callable[[Status | None], None], waits: dict[str, float] | None = None) -> None:
        self.pod = pod
        self.node_name = node_name
        self._deadlines = dict(deadlines)  # plugin -> when its wait times out
        self._waits = dict(waits or {})  # plugin -> how long it waits (seconds), for the timeout message
        self._on_done = on_done
        self._lock = threading.Lock()
        self._done = False

    @property
    def pending_plugins(self) -> list[str]:
        with self._lock:
            return sorted(self._deadlines)

    def next_deadline(self) -> float | None:
        with self._lock:
            return min(self._deadlines.values()) if self._deadlines else None

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; it binds once no plugin is left waiting."""
        with self._lock:
            if self._done:
                return
            self._deadlines.pop(plugin, None)
            if self._deadlines:
                return
            self._done = True
        self._on_done(None)

    def reject(self, plugin: str, message: str) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        self._on_done(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def expire(self, now: float) -> bool:
        """Reject the pod if a plugin's wait has timed out; True if it did."""
        with self._lock:
            late = sorted(p for p, when in self._deadlines.items() if when <= now)
        if not late:
            return False
        self.reject(late[0], timeout_message(late[0], self._waits.get(late[0])))
        return True


def timeout_message(plugin: str, wait_seconds: float | None) -> str:
    """upstream's ``rejected due to timeout after waiting 2m0s at plugin X``: the wait the
    plugin asked for (capped), as Go prints a ``time.Duration``."""
    if wait_seconds is None:
        return f"rejected due to timeout after waiting at plugin {plugin}"
    waited = format_duration(round(wait_seconds * NANOS_PER_SECOND))
    return f"rejected due to timeout after waiting {waited} at plugin {plugin}"


class WaitingPods:
    """The waiting pods of every profile, by pod uid."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()

    def add(self, uid: str, waiting: WaitingPod) -> None:
        with self._lock:
            self._pods[uid] = waiting

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def all(self) -> list[WaitingPod]:
        with self._lock:
            return list(self._pods.values())

    def next_deadline(self) -> float | None:
        times = [t for t in (w.next_deadline() for w in self.all()) if t is not None]
        return min(times) if times else None

    def expire(self, now: float) -> int:
        return sum(w.expire(now) for w in self.all())

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)
