"""Client-side throttling: client-go's ``flowcontrol.NewTokenBucketRateLimiter``.

A bucket of ``burst`` tokens, full at the start, refilled at ``qps`` tokens a second; every
request takes one. Like ``golang.org/x/time/rate``'s ``Wait`` (which client-go uses), a
caller *reserves* its token at once -- the balance may go negative -- and sleeps until the
reservation matures, so concurrent callers are served in arrival order and never spin.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """``qps`` tokens a second, at most ``burst`` banked; ``qps <= 0`` disables throttling."""

    __slots__ = ("qps", "burst", "_tokens", "_last", "_now")

    def __init__(self, qps: float, burst: int, *, now: Callable[[], float] = time.monotonic) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._now = now
        self._last = now()

    def reserve(self) -> float:
        """Take one token; the seconds to wait before using it (0 when one was banked)."""
        if self.qps <= 0:
            return 0.0
        now = self._now()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        if self._tokens >= 0.0:
            return 0.0
        return -self._tokens / self.qps

    async def acquire(self) -> None:
        delay = self.reserve()
        if delay > 0.0:
            await asyncio.sleep(delay)
