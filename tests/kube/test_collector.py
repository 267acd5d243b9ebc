"""Specs of the live mode's garbage-collector schedule (kubesched/cluster/kube/collector.py)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from kubesched.cluster.kube.collector import YOUNG_THRESHOLD, CollectorSchedule


class Node:
    """A container object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: object = None


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    """Each spec leaves the test process's collector as it found it."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    gc.enable()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()
    else:
        gc.disable()


def _cycle() -> weakref.ref[Node]:
    """An unreachable reference cycle that only the cyclic collector can free."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_the_first_sync_runs_with_the_collector_off_and_its_objects_are_frozen() -> None:
    schedule = CollectorSchedule(asyncio.new_event_loop())
    seen: list[bool] = []
    built: list[Node] = []

    async def sync() -> int:
        seen.append(gc.isenabled())
        built.extend(Node() for _ in range(1000))
        return len(built)

    frozen_before = gc.get_freeze_count()
    assert asyncio.run(schedule.sync(sync())) == 1000
    assert seen == [False]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen_before + 1000


def test_a_process_with_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    schedule = CollectorSchedule(asyncio.new_event_loop())

    async def sync() -> None:
        return None

    asyncio.run(schedule.sync(sync()))
    schedule.start()
    assert not gc.isenabled()
    assert schedule._after_collection not in gc.callbacks


def test_start_makes_young_collections_rarer_and_stop_restores_the_thresholds() -> None:
    gc.set_threshold(700, 10, 10)
    schedule = CollectorSchedule(asyncio.new_event_loop())
    schedule.start()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert YOUNG_THRESHOLD > 700  # rarer than CPython's default
    schedule.stop()
    assert gc.get_threshold() == (700, 10, 10)
    assert schedule._after_collection not in gc.callbacks


def test_the_survivors_of_a_full_collection_are_frozen() -> None:
    schedule = CollectorSchedule(asyncio.new_event_loop())
    schedule.start()
    try:
        kept = [Node() for _ in range(1000)]
        frozen_before = gc.get_freeze_count()
        gc.collect()
        assert gc.get_freeze_count() >= frozen_before + len(kept)
    finally:
        schedule.stop()


def test_a_full_collection_still_frees_unreachable_cycles_that_are_not_frozen() -> None:
    schedule = CollectorSchedule(asyncio.new_event_loop())
    schedule.start()
    try:
        dead = _cycle()
        gc.collect()
        assert dead() is None
    finally:
        schedule.stop()


def test_a_frozen_cycle_that_became_garbage_is_freed_once_the_frozen_set_doubles() -> None:
    async def scenario() -> tuple[bool, bool, int]:
        schedule = CollectorSchedule(asyncio.get_running_loop(), growth=1.0, min_frozen=0)
        schedule.start()
        try:
            a, b = Node(), Node()
            a.other, b.other = b, a
            alive = weakref.ref(a)
            gc.collect()  # the cycle survives, and is frozen with the rest
            del a, b  # now garbage, but frozen: no ordinary collection walks it
            gc.collect()
            survived_ordinary = alive() is not None
            await asyncio.sleep(0)  # the full collection of everything, scheduled on the loop
            await asyncio.sleep(0)
            return survived_ordinary, alive() is None, schedule.deep_collections
        finally:
            schedule.stop()

    survived_ordinary, freed, deep = asyncio.run(scenario())
    assert survived_ordinary
    assert freed
    assert deep >= 1


def test_the_full_collection_of_everything_waits_until_the_frozen_set_has_doubled() -> None:
    async def scenario() -> int:
        schedule = CollectorSchedule(asyncio.get_running_loop())
        schedule.start()
        try:
            gc.collect()
            await asyncio.sleep(0)
            return schedule.deep_collections
        finally:
            schedule.stop()

    assert asyncio.run(scenario()) == 0
