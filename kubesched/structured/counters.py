"""Shared counters of partitionable devices (DRAPartitionableDevices), as upstream's allocator
tracks them: per pool, the counters left after the allocated devices (computed once per
allocator, keyed by pool *name* as upstream keys it), and the counters the devices chosen in
this allocation consume. A device fits while no counter of its pool goes below zero.

``exceeds_alone`` tells the search when a device could not fit even if this allocation had
consumed nothing yet: consumption only grows during an allocation, so such a device is out of
reach for the whole allocation (``exhausted.pool_exhausted``)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

from kubesched.objects.dra import Device, ResourceSlice

from .pool_records import Pool
from .types import DeviceID

__all__ = ["CounterSets", "CounterTracker"]

# Counter values: plain ints when whole (nearly always; much faster than Fraction arithmetic).
Number = int | Fraction
# counter set name -> counter name -> value
CounterSets = dict[str, dict[str, Number]]

@lru_cache(maxsize=1 << 16)
def _consumption(device: Device) -> tuple[tuple[str, tuple[tuple[str, Number], ...]], ...]:
    """The device's ``consumesCounters`` as (counter set, ((counter, value), ...)) (devices
    hash by identity)."""
    return tuple(
        (c.counter_set, tuple((name, q.number) for name, q in c.counters.items())) for c in device.consumes_counters
    )


@lru_cache(maxsize=1 << 16)
def _demand(device: Device) -> dict[str, dict[str, Number]]:
    """The device's consumption per counter set and counter, summed as ``take`` sums it."""
    demand: dict[str, dict[str, Number]] = {}
    for counter_set, values in _consumption(device):
        counters = demand.setdefault(counter_set, {})
        for name, value in values:
            counters[name] = counters.get(name, 0) + value
    return demand


@lru_cache(maxsize=1 << 12)
def _consumption_only_grows(pool: Pool) -> bool:
    """Whether no device of the pool consumes a negative amount (the API server does not forbid
    it): then what an allocation has consumed of the pool never drops below zero."""
    return all(value >= 0 for s in pool.slices_targeting_node for d in s.devices for _, values in _consumption(d) for _, value in values)


class CounterTracker:
    """The counters of one ``Allocate`` call."""

    __slots__ = ("_available", "_is_allocated", "_consumed", "_across", "_version", "_device_ids", "_negative")

    def __init__(
        self,
        available: dict[str, CounterSets],
        is_allocated: Callable[[DeviceID], bool],
        across: dict[tuple[int, int], tuple[Pool, CounterSets]] | None = None,
        version: Callable[[Pool], int] | None = None,
        device_ids: Callable[[ResourceSlice], tuple[DeviceID, ...]] | None = None,
    ) -> None:
        self._available = available  # the allocator's cache, shared by its calls
        self._is_allocated = is_allocated
        self._consumed: dict[str, CounterSets] = {}
        # Optionally, counters left per (pool, version of the pool in the allocated state),
        # kept across allocators: the same pool with the same allocations leaves the same.
        self._across = across
        self._version = version
        self._device_ids = device_ids
        # Per counters-left table (by id; they stay in ``_available``): whether a counter is
        # below zero already.
        self._negative: dict[int, bool] = {}

    def _available_for(self, pool: Pool) -> CounterSets:
        found = self._available.get(pool.pool)
        if found is not None:
            return found
        key = (id(pool), self._version(pool)) if self._across is not None and self._version is not None else None
        if key is not None and self._across is not None:
            remembered = self._across.get(key)
            if remembered is not None and remembered[0] is pool:
                self._available[pool.pool] = remembered[1]
                return remembered[1]
        available: CounterSets = {name: {c: q.number for c, q in cs.counters.items()} for name, cs in pool.counter_sets.items()}
        for slices in (pool.slices_targeting_node, pool.slices_not_targeting_node):
            for slice_ in slices:
                ids = self._device_ids(slice_) if self._device_ids is not None else None
                for position, device in enumerate(slice_.devices):
                    if not device.consumes_counters:
                        continue
                    device_id = ids[position] if ids is not None else DeviceID(slice_.driver, slice_.pool.name, device.name)
                    if not self._is_allocated(device_id):
                        continue
                    for counter_set, values in _consumption(device):
                        counters = available.get(counter_set, {})
                        for name, value in values:
                            if name in counters:
                                counters[name] -= value
        self._available[pool.pool] = available
        if key is not None and self._across is not None:
            if len(self._across) >= 1 << 16:
                self._across.clear()
            self._across[key] = (pool, available)
        return available

    def exceeds_alone(self, pool: Pool, device: Device) -> bool:
        """Whether ``take`` fails for the device even with nothing consumed in this allocation
        (then it fails whatever this allocation consumes). False when that cannot be told:
        a device of the pool consumes a negative amount."""
        if not _consumption_only_grows(pool):
            return False
        available = self._available_for(pool)
        negative = self._negative.get(id(available))
        if negative is None:
            negative = self._negative[id(available)] = any(v < 0 for counters in available.values() for v in counters.values())
        if negative:
            return True  # ``take`` compares every counter of the pool, consumed or not
        # Every counter is at least zero, so only those the device consumes can fall short.
        for set_name, wanted in _demand(device).items():
            counters_available = available.get(set_name)
            if counters_available is None:
                continue
            for name, value in wanted.items():
                left = counters_available.get(name)
                if left is not None and left < value:
                    return True
        return False

    def take(self, pool: Pool, device: Device) -> bool:
        """``checkAvailableCounters``: add the device's consumption; False (and nothing taken)
        when some counter of the pool would go below zero."""
        available = self._available_for(pool)
        consumed = self._consumed.setdefault(pool.pool, {})
        for counter_set, values in _consumption(device):
            counters = consumed.setdefault(counter_set, {})
            for name, value in values:
                counters[name] = counters.get(name, 0) + value
        for set_name, counters_available in available.items():
            used = consumed.get(set_name, {})
            for name, value in counters_available.items():
                if value < used.get(name, 0):
                    self.release(pool, device)
                    return False
        return True

    def release(self, pool: Pool, device: Device) -> None:
        """``deallocateCountersForDevice``."""
        consumed = self._consumed.get(pool.pool, {})
        for counter_set, values in _consumption(device):
            counters = consumed.setdefault(counter_set, {})
            for name, value in values:
                counters[name] = counters.get(name, 0) - value
