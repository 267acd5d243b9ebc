"""Whether a pool is exhausted for a request: no device of it can be taken whatever else the
allocation holds, so that the search may skip it (see ``pool_versions`` for how verdicts are
kept, and docs/dra-allocator.md)."""

from __future__ import annotations

from .attempt_records import RequestData, SearchState
from .capacity import MissingCapacity, request_fits_capacity
from .pool_records import Pool
from .types import AllocationError

__all__ = ["pool_exhausted"]


def pool_exhausted(attempt: SearchState, key: tuple[int, int, int], data: RequestData, pool: Pool, pool_index: int) -> bool | None:
    """Whether the search cannot take any device of the pool for this (non-admin, ExactCount)
    request, whatever else the allocation holds, so that it may skip the pool. Judged without
    the allocation's own choices: each device must fail a check that only ever gets stricter
    as the allocation takes devices, and fail it before the search changes any state (in use
    by an allocated claim; not selected; capacity left too small; counters left too small even
    for the device alone). A device that passes those is reached by the search, which may
    leave counters consumed (upstream's quirk) or fail a constraint: the pool is not
    exhausted. None when the pool cannot be judged apart from the search: a selector fails to
    evaluate (the search raises that only if it gets there), or the counters of a pool whose
    name another driver also uses (upstream keys counters by pool name). The verdict depends
    only on the pool's allocated devices (its version), the request shape and the node's
    pools (for per-device selection, the node), which is what it is kept by."""
    features = attempt.features
    state = attempt.a.allocated_state
    allocated = state.allocated_devices
    aggregated = state.aggregated_capacity
    request = data.request
    counters = attempt.counters
    device_ids = attempt.a.index.device_ids
    node_pools = attempt.node_pools
    name_unique = node_pools is not None and node_pools.name_unique[pool_index]
    for slice_ in pool.slices_targeting_node:
        ids = device_ids(slice_)
        for position, device in enumerate(slice_.devices):
            device_id = ids[position]
            if device_id in allocated:
                continue
            try:
                if not attempt.is_selectable(key, data, slice_, device):
                    continue
            except AllocationError:
                return None
            if features.consumable_capacity:
                try:
                    if not request_fits_capacity(aggregated.get(device_id), request.capacity_requests, device.capacity, None):
                        continue
                except MissingCapacity:
                    continue
            if device.consumes_counters:
                if not features.partitionable_devices:
                    continue
                multi = features.consumable_capacity and bool(device.allow_multiple_allocations)
                # A shared device skips counters once it holds a share (even one this
                # allocation just took): its counters alone never rule it out.
                if not multi:
                    if not name_unique:
                        return None
                    if counters.exceeds_alone(pool, device):
                        continue
            return False
    return True
