"""``FrameworkHandle``: what plugins may reach beyond their arguments."""

from __future__ import annotations

from typing import Any, Callable

from ..cache.cache import Cache, Snapshot
from ..clock import Clock
from .waiting_pods import WaitingPod, WaitingPods

__all__ = ["FrameworkHandle"]


class FrameworkHandle:
    """The cache and its snapshot, the clock, the binder, pods waiting at Permit, the informers (live only)."""

    def __init__(self, cache: Cache, clock: Clock, binder: Callable | None = None, informers: Any = None,
                 waiting_pods: WaitingPods | None = None) -> None:
        self._cache = cache
        self._clock = clock
        self._binder = binder
        self._informers = informers
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods()

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """A pod held at Permit, for a plugin to ``allow`` or ``reject``."""
        return self.waiting_pods.get(uid)

    @property
    def cache(self) -> Cache:
        return self._cache

    def snapshot(self) -> Snapshot:
        return self._cache.snapshot()

    def now(self) -> float:
        return self._clock.now()

    @property
    def binder(self) -> Callable | None:
        return self._binder

    @property
    def informers(self) -> Any:
        return self._informers
