"""Clocks: the core reads time only through one of these."""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["Clock", "RealClock", "VirtualClock"]


class Clock(Protocol):
    def now(self) -> float: ...


class RealClock:
    """Wall-clock seconds (monotonic, so backoffs survive clock steps)."""

    def now(self) -> float:
        return time.monotonic()


class VirtualClock:
    """Simulated seconds; moves only when the simulator advances it."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance_to(self, when: float) -> None:
        if when > self._now:
            self._now = when

    def advance(self, seconds: float) -> None:
        self._now += max(0.0, seconds)
