"""When CPython's cyclic garbage collector runs in ``kubesched run``, and over what.

The scheduler holds the cluster in memory (every node and pod, parsed) for as long as it
runs, and almost none of it is garbage. Left to its defaults, the collector walks all of it
again on every full collection: at 5,000 nodes with 10,000 pods to place, nine full
collections took 1.3 s, a tenth of the process's CPU. So:

* The informers' first sync runs with the collector off (it creates the cluster's objects
  and no garbage), and what it built is frozen: moved to the permanent generation, which no
  collection walks.
* After each full collection its survivors are frozen too, so a long-lived object is walked
  by one full collection, not by every one after it.
* Young collections run every ``young_threshold`` net allocations rather than CPython's
  700: more of a scheduling cycle's temporaries are freed by reference counting first, and
  are then never walked at all. 2,000 used the least CPU per pod at 5,000 nodes among 700,
  2,000, 5,000 and 10,000 (fewer, larger young collections walk memory no longer cached).

A frozen object that later becomes part of unreachable cycle is not reclaimed by the
collections above. So each time the frozen set has doubled since the last time, one full
collection of everything runs (unfreeze, collect, freeze) from the event loop: memory held by
such garbage stays within the size of the live set, and the collector's total work stays
linear in what the process allocates.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["CollectorSchedule", "YOUNG_THRESHOLD"]

log = logging.getLogger(__name__)

YOUNG_THRESHOLD = 2_000  # net allocations between young collections (CPython's default: 700)

T = TypeVar("T")


@dataclass(slots=True)
class CollectorSchedule:
    """The collector's schedule for one run: ``sync`` around the first sync, then ``start``;
    ``stop`` restores what the process had (tests run several schedulers in one process)."""

    loop: asyncio.AbstractEventLoop
    young_threshold: int = YOUNG_THRESHOLD
    growth: float = 2.0  # the frozen set's growth that calls for a collection of everything
    min_frozen: int = 1_000_000  # ... and the size below which it never does
    deep_collections: int = 0  # full collections of everything (frozen objects included)
    # The frozen set's size when last counted (counting walks it all: done at the first full
    # collection after start and after each collection of everything, not on every one),
    # and the survivors frozen since.
    _frozen_counted: int | None = None
    _frozen_since: int = 0
    _deep_scheduled: bool = False
    _collecting_everything: bool = False
    _saved_threshold: tuple[int, int, int] | None = None
    _was_enabled: bool = True
    _started: bool = False

    async def sync(self, work: Awaitable[T]) -> T:
        """Await ``work`` (the informers' first sync) with the collector off, then freeze what
        it built. The sync creates the cluster's objects, none of them garbage: each
        collection during it would walk them all again (a third of the sync's CPU)."""
        self._was_enabled = gc.isenabled()
        gc.disable()
        try:
            return await work
        finally:
            if self._was_enabled:
                gc.freeze()
                gc.enable()

    def start(self) -> None:
        """From now on: rarer young collections, survivors of full ones frozen."""
        if self._started or not gc.isenabled():
            return  # a process that turned the collector off keeps it off
        self._started = True
        self._saved_threshold = gc.get_threshold()
        gc.set_threshold(self.young_threshold, *self._saved_threshold[1:])
        gc.freeze()
        gc.callbacks.append(self._after_collection)

    def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        if self._after_collection in gc.callbacks:
            gc.callbacks.remove(self._after_collection)
        if self._saved_threshold is not None:
            gc.set_threshold(*self._saved_threshold)

    def _after_collection(self, phase: str, info: dict[str, int]) -> None:
        """A gc callback: after a full collection, freeze its survivors. It runs in whichever
        thread triggered the collection; the full collection of everything is left to the
        event loop, since a collection cannot start inside another."""
        if phase != "stop" or info["generation"] != 2 or not self._started or self._collecting_everything:
            return
        survivors = len(gc.get_objects(generation=2))  # what this collection walked, no more
        if self._frozen_counted is None:
            self._frozen_counted = gc.get_freeze_count()
        gc.freeze()
        self._frozen_since += survivors
        frozen = self._frozen_counted + self._frozen_since
        if frozen >= max(self.min_frozen, self.growth * self._frozen_counted) and not self._deep_scheduled:
            self._deep_scheduled = True
            try:
                self.loop.call_soon_threadsafe(self._collect_everything)
            except RuntimeError:  # the loop has closed: the process is ending
                self._deep_scheduled = False

    def _collect_everything(self) -> None:
        self._deep_scheduled = False
        if not self._started:
            return
        started, frozen = time.perf_counter(), gc.get_freeze_count()
        self._collecting_everything = True
        try:
            gc.unfreeze()
            collected = gc.collect()
            gc.freeze()
        finally:
            self._collecting_everything = False
        self.deep_collections += 1
        self._frozen_counted, self._frozen_since = gc.get_freeze_count(), 0
        log.info("full garbage collection", extra={
            "frozenBefore": frozen, "collected": collected, "frozenAfter": self._frozen_counted,
            "seconds": round(time.perf_counter() - started, 3)})
