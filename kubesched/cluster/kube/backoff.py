"""The reflector's reconnection backoff: client-go's ``wait.NewExponentialBackoffManager``.

The reflector waits between attempts with an exponential backoff starting at 800 ms,
doubling up to a cap of 30 s, each step jittered by up to 100 % (``wait.Jitter(d, 1.0)``
draws from ``[d, 2d)``, so a capped wait lies between 30 and 60 s, as upstream). After two
minutes without a backoff, the next one starts from the initial delay again, so a watch
that ran fine for a while reconnects quickly.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

__all__ = ["Backoff", "INITIAL_BACKOFF", "MAX_BACKOFF", "RESET_AFTER"]

INITIAL_BACKOFF = 0.8
MAX_BACKOFF = 30.0
RESET_AFTER = 120.0
FACTOR = 2.0
JITTER = 1.0


class Backoff:
    """Successive waits; ``next()`` is the delay before the next attempt."""

    __slots__ = ("initial", "cap", "reset_after", "_duration", "_last", "_random", "_now")

    def __init__(self, initial: float = INITIAL_BACKOFF, cap: float = MAX_BACKOFF, *,
                 reset_after: float = RESET_AFTER, rng: random.Random | None = None,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.initial = initial
        self.cap = cap
        self.reset_after = reset_after
        self._duration = initial
        self._last: float | None = None
        self._random = rng or random.Random()
        self._now = now

    def next(self) -> float:
        now = self._now()
        if self._last is None or now - self._last > self.reset_after:
            self._duration = self.initial
        self._last = now
        base = self._duration
        self._duration = min(base * FACTOR, self.cap)
        return base + self._random.random() * JITTER * base
