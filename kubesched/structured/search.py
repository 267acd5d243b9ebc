"""The search of upstream's structured allocator (``allocateOne`` and what it calls) for one
``Allocate`` call: depth-first first fit over claims, requests, subrequests and candidate
devices, with constraints, admin access, partitionable devices, consumable capacity and taints."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kubesched.objects import Node
from kubesched.objects.dra import (
    ALL,
    EXACT_COUNT,
    Device,
    DeviceClass,
    Quantity,
    RequestSpec,
    ResourceClaim,
    ResourceSlice,
)

from kubesched.cel import CelError, CompilationResult

from .attempt_records import AllocatorState, Candidate, RequestData
from .capacity import MissingCapacity, as_consumed, consumed_capacity_from_request, request_fits_capacity
from .constraints import Constraint, DistinctAttributeConstraint, MatchAttributeConstraint
from .counters import CounterTracker
from .exhausted import pool_exhausted
from .picks import ClaimPicks, PickedDevice
from .pool_versions import Positions, Versions, positions_from
from .pool_records import NodePools, Pool
from .pools import node_matches
from .types import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationError,
    AllocationTimeout,
    ConsumedCapacity,
    DeviceID,
    NodeAllocationError,
    add_capacity,
)

__all__ = ["Attempt"]


class _MaxSizeExceeded(Exception):
    """``errAllocationResultMaxSizeExceeded``: this branch would put more than 32 devices in a claim."""


@dataclass(slots=True, eq=False)
class _DeviceResult:
    request: str
    parent_request: str
    id: DeviceID
    device: Device
    slice: ResourceSlice
    spec: RequestSpec
    shared: bool  # allocated as one share of a device with allowMultipleAllocations
    consumed_capacity: dict[str, Quantity] | None
    admin_access: bool | None

    def request_name(self) -> str:
        return f"{self.parent_request}/{self.request}" if self.parent_request else self.request


class Attempt:
    """One ``Allocate`` call (upstream's ``allocator`` struct)."""

    def __init__(self, parent: AllocatorState, node: Node, claims: Sequence[ResourceClaim], deadline: float | None = None) -> None:
        self.a = parent
        self.deadline = deadline
        self.features = parent.features
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.node_pools: NodePools | None = None
        self.stamp: Versions | None = None
        self.visits: dict[int, Positions] = {}  # per PoolVerdicts (kept alive by the index)
        self.device_matches_request: dict[tuple[int, int, int, int], bool] = {}
        self.constraints: list[list[Constraint]] = [[] for _ in claims]
        self.counters = CounterTracker(parent.available_counters, parent.is_allocated, parent.index.counters_left, parent.pool_version, parent.index.device_ids)
        self.request_data: dict[tuple[int, int, int], RequestData] = {}
        self.allocating_devices: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, ConsumedCapacity] = {}
        self.results: list[list[_DeviceResult]] = [[] for _ in claims]

    # --- setup -------------------------------------------------------------------------------

    def run(self, node_pools: NodePools, stamp: Versions | None) -> list[ClaimPicks] | None:
        """The search over the node's pools; ``stamp`` holds each pool's version in the
        allocated state (None: pools are not skipped)."""
        self.node_pools = node_pools
        self.pools = node_pools.pools
        self.stamp = stamp
        for claim_index, claim in enumerate(self.claims):
            min_devices = 0
            for request_index, request in enumerate(claim.spec.requests):
                if request.first_available:
                    if not self.features.prioritized_list:
                        raise AllocationError(f"claim {claim.key}, request {request.name}: has subrequests, but the DRAPrioritizedList feature is disabled")
                    fewest = None
                    for sub_index, sub in enumerate(request.first_available):
                        data = self._validate_request(sub, request.name, (claim_index, request_index, sub_index))
                        self.request_data[(claim_index, request_index, sub_index)] = data
                        fewest = data.num_devices if fewest is None else min(fewest, data.num_devices)
                    min_devices += fewest or 0
                else:
                    assert request.exactly is not None
                    if not self.features.consumable_capacity and request.exactly.capacity_requests is not None:
                        raise AllocationError(f"claim {claim.key}, request {request.name}: has capacity requests, but the DRAConsumableCapacity feature is disabled")
                    data = self._validate_request(request.exactly, None, (claim_index, request_index, 0))
                    self.request_data[(claim_index, request_index, 0)] = data
                    min_devices += data.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {claim.key}: number of requested devices {min_devices} exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            constraints: list[Constraint] = []
            for constraint in claim.spec.constraints:
                if constraint.match_attribute is not None:
                    constraints.append(MatchAttributeConstraint(constraint.requests, constraint.match_attribute))
                elif constraint.distinct_attribute is not None:
                    constraints.append(DistinctAttributeConstraint(constraint.requests, constraint.distinct_attribute))
            self.constraints[claim_index] = constraints
        try:
            done = self._allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except _MaxSizeExceeded:
            raise AllocationError("allocation max size exceeded") from None
        if not done:
            if any(pool.is_invalid for pool in self.pools):
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return [self._picks(i) for i in range(len(self.claims))]

    def _validate_request(self, request: RequestSpec, parent: str | None, key: tuple[int, int, int]) -> RequestData:
        claim = self.claims[key[0]]
        if not self.features.admin_access and request.admin_access is not None:
            raise AllocationError(f"claim {claim.key}, request {request.name}: admin access is requested, but the feature is disabled")
        device_class = self.a.class_lister.get(request.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: could not retrieve device class {request.device_class_name}: "
                f'deviceclass.resource.k8s.io "{request.device_class_name}" not found'
            )
        cache = self.a.cel_cache
        data = RequestData(
            request,
            parent,
            device_class,
            class_selectors=tuple(cache.get_or_compile(s.expression) for s in device_class.selectors),
            request_selectors=tuple(cache.get_or_compile(s.expression) for s in request.selectors),
        )
        if request.allocation_mode == EXACT_COUNT:
            data.num_devices = request.count
            if not request.admin_access and self.node_pools is not None and self.stamp is not None:
                data.verdicts = self.a.index.pool_verdicts(self.node_pools.key, self.a.request_key(claim, key[1], key[2], request, device_class), len(self.pools))
            return data
        if request.allocation_mode != ALL:
            raise AllocationError(f"claim {claim.key}, request {request.name}: unsupported count mode {request.allocation_mode}")
        data.all_devices = []
        for pool in self.pools:
            if pool.is_incomplete:
                raise AllocationError(f"claim {claim.key}, request {request.name}: asks for all devices, but resource pool {pool.pool_id} is currently being updated")
            if pool.is_invalid:
                raise AllocationError(f"claim {claim.key}, request {request.name}: asks for all devices, but resource pool {pool.pool_id} is currently invalid")
            for slice_ in pool.slices_targeting_node:
                for device in slice_.devices:
                    if not self.is_selectable(key, data, slice_, device):
                        continue
                    device_id = DeviceID(slice_.driver, slice_.pool.name, device.name)
                    if self.features.consumable_capacity and not self._fits_capacity(request, device_id, device):
                        continue
                    data.all_devices.append(Candidate(device_id, device, slice_, pool))
        data.num_devices = len(data.all_devices)
        return data

    # --- search ------------------------------------------------------------------------------

    def _allocate_one(self, claim_index: int, request_index: int, sub_index: int, device_index: int, allocate_sub: bool, start: tuple[int, int, int]) -> bool:
        self.a.num_allocate_one_invocations += 1
        if self.deadline is not None and self.a.num_allocate_one_invocations % 256 == 0 and time.monotonic() > self.deadline:
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")
        if claim_index >= len(self.claims):
            return True
        claim = self.claims[claim_index]
        if request_index >= len(claim.spec.requests):
            try:
                return self._allocate_one(claim_index + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False
        key = (claim_index, request_index, sub_index)
        data = self.request_data[key]
        if not allocate_sub and data.parent_name is not None:
            all_exceeded = True
            sub = 0
            while True:
                if (claim_index, request_index, sub) not in self.request_data:
                    if all_exceeded:
                        raise _MaxSizeExceeded()
                    return False
                try:
                    success = self._allocate_one(claim_index, request_index, sub, device_index, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    data.selected_sub_request_index = sub
                    return True
                sub += 1
        request = data.request
        all_devices = request.allocation_mode == ALL
        if all_devices and not data.all_devices:
            return False
        if device_index >= data.num_devices:
            return self._allocate_one(claim_index, request_index + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[claim_index]) + data.num_devices - device_index > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()
        if all_devices:
            assert data.all_devices is not None
            allocated, undo = self._allocate_device(key, data, data.all_devices[device_index], True)
            if not allocated:
                return False
            try:
                done = self._allocate_one(claim_index, request_index, sub_index, device_index + 1, allocate_sub, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = bool(request.admin_access)
        pools = self.pools
        device_ids = self.a.index.device_ids
        verdicts = data.verdicts
        stamp = self.stamp
        visit: Iterable[int]
        if verdicts is not None and stamp is not None:
            marks = verdicts.marks
            if data.visit is None:
                # Requests alike share verdicts, and the positions (a superset once more pools
                # are judged, which the marks below catch).
                data.visit = self.visits.get(id(verdicts))
                if data.visit is None:
                    data.visit = self.visits[id(verdicts)] = verdicts.to_visit(stamp)
            visit = positions_from(data.visit, start[0])
        else:
            marks = None
            visit = range(start[0], len(pools))
        for pool_index in visit:
            pool = pools[pool_index]
            if pool.is_incomplete or pool.is_invalid:
                continue
            if marks is not None and stamp is not None:
                mark = int(marks[pool_index])
                version = int(stamp[pool_index])
                if mark >> 1 != version:
                    exhausted = pool_exhausted(self, key, data, pool, pool_index)
                    if exhausted is not None:
                        mark = version * 2 + exhausted
                        marks[pool_index] = mark
                if mark >> 1 == version and mark & 1:
                    continue
            slices = pool.slices_targeting_node
            for slice_index in range(start[1] if pool_index == start[0] else 0, len(slices)):
                slice_ = slices[slice_index]
                devices = slice_.devices
                ids = device_ids(slice_)
                first = start[2] if pool_index == start[0] and slice_index == start[1] else 0
                for position in range(first, len(devices)):
                    device = devices[position]
                    device_id = ids[position]
                    if admin:
                        if claim_index in self.allocating_devices.get(device_id, ()):
                            continue
                    elif self._device_in_use(device_id):
                        continue
                    if not self.is_selectable(key, data, slice_, device):
                        continue
                    if self.features.consumable_capacity and not self._fits_capacity(request, device_id, device):
                        continue
                    allocated, undo = self._allocate_device(key, data, Candidate(device_id, device, slice_, pool), False)
                    if not allocated:
                        continue
                    try:
                        done = self._allocate_one(claim_index, request_index, sub_index, device_index + 1, allocate_sub, (pool_index, slice_index, position + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _device_in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated_state.allocated_devices or bool(self.allocating_devices.get(device_id))

    def _fits_capacity(self, request: RequestSpec, device_id: DeviceID, device: Device) -> bool:
        """``CmpRequestOverCapacity``; an unknown requested capacity only skips the device."""
        try:
            return request_fits_capacity(
                self.a.allocated_state.aggregated_capacity.get(device_id),
                request.capacity_requests,
                device.capacity,
                self.allocating_capacity.get(device_id),
            )
        except MissingCapacity:
            return False

    def is_selectable(self, key: tuple[int, int, int], data: RequestData, slice_: ResourceSlice, device: Device) -> bool:
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        cache_key = (id(device), *key)  # devices stay alive in the slice index while this runs
        found = self.device_matches_request.get(cache_key)
        if found is not None:
            return found
        result = True
        if data.device_class is not None and not self._selectors_match(key[0], device, slice_.driver, data.device_class, data.class_selectors):
            result = False
        elif not self._selectors_match(key[0], device, slice_.driver, None, data.request_selectors):
            result = False
        elif slice_.per_device_node_selection and not node_matches(self.node, device.node_name, device.all_nodes, device.node_selector):
            result = False
        self.device_matches_request[cache_key] = result
        return result

    def _selectors_match(self, claim_index: int, device: Device, driver: str, device_class: DeviceClass | None, selectors: tuple[CompilationResult, ...]) -> bool:
        for i, compiled in enumerate(selectors):
            if compiled.error is not None:
                raise AllocationError(f"{self._owner(claim_index, device_class)}: selector #{i}: CEL compile error: {compiled.error}")
            try:
                matches = compiled.device_matches(driver, device)
            except CelError as err:
                raise AllocationError(f"{self._owner(claim_index, device_class)}: selector #{i}: CEL runtime error: {err}") from None
            if not matches:
                return False
        return True

    def _owner(self, claim_index: int, device_class: DeviceClass | None) -> str:
        return f"class {device_class.name}" if device_class is not None else f"claim {self.claims[claim_index].key}"

    def _allocate_device(self, key: tuple[int, int, int], data: RequestData, candidate: Candidate, must: bool) -> tuple[bool, Callable[[], None]]:
        """``allocateDevice``: False when the device cannot be added (upstream leaves some state
        behind in a few of those cases, and so does this, so that later choices match)."""
        claim_index = key[0]
        request = data.request
        device = candidate.device
        device_id = candidate.id
        multi = self.features.consumable_capacity and bool(device.allow_multiple_allocations)
        admin = bool(request.admin_access)
        if not multi and admin and claim_index in self.allocating_devices.get(device_id, ()):
            return False, _NOOP
        if not admin and self._device_in_use(device_id):
            return False, _NOOP
        if not self.features.partitionable_devices and device.consumes_counters:
            return False, _NOOP
        skip_counters = multi and (device_id in self.a.allocated_state.aggregated_capacity or device_id in self.allocating_capacity)
        if not skip_counters and device.consumes_counters and not self.counters.take(candidate.pool, device):
            return False, _NOOP
        if data.parent_name is None:
            base, sub = request.name, ""
        else:
            base, sub = data.parent_name, request.name
        if self.features.device_taints and _taint_prevents_allocation(device, request):
            return False, _NOOP
        constraints = self.constraints[claim_index]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, device, candidate.slice.driver):
                if must:
                    raise AllocationError(f"claim {self.claims[claim_index].key}, request {request.name}: cannot add device {device_id} because a claim constraint would not be satisfied")
                for earlier in constraints[:i]:
                    earlier.remove(base, sub)
                return False, _NOOP
        holders = self.allocating_devices.setdefault(device_id, set())
        if not multi:
            holders.add(claim_index)
        consumed: dict[str, Quantity] = {}
        if self.features.consumable_capacity:
            if not self._fits_capacity(request, device_id, device):
                return False, _NOOP
            if multi:
                consumed = consumed_capacity_from_request(request.capacity_requests, device.capacity)
                add_capacity(self.allocating_capacity.setdefault(device_id, {}), as_consumed(consumed))
        result = _DeviceResult(
            request=request.name,
            parent_request=data.parent_name or "",
            id=device_id,
            device=device,
            slice=candidate.slice,
            spec=request,
            shared=multi and self.features.consumable_capacity,
            consumed_capacity=consumed or None,
            admin_access=True if admin else None,
        )
        results = self.results[claim_index]
        previous = len(results)
        results.append(result)

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base, sub)
            holders.discard(claim_index)
            if multi:
                if result.consumed_capacity is not None:
                    self._remove_allocating_capacity(device_id, as_consumed(result.consumed_capacity))
            elif self.features.partitionable_devices and device.consumes_counters:
                self.counters.release(candidate.pool, device)
            del results[previous:]

        return True, undo

    def _remove_allocating_capacity(self, device_id: DeviceID, consumed: ConsumedCapacity) -> None:
        current = self.allocating_capacity.get(device_id)
        if current is None:
            return
        for name, value in consumed.items():
            if name in current:
                current[name] -= value
        if all(v == 0 for v in current.values()):
            del self.allocating_capacity[device_id]

    # --- results -----------------------------------------------------------------------------

    def _picks(self, claim_index: int) -> ClaimPicks:
        claim = self.claims[claim_index]
        chosen: list[tuple[str, DeviceClass | None]] = []
        selected: list[tuple[str, int]] = []
        for request_index, request in enumerate(claim.spec.requests):
            data = self.request_data[(claim_index, request_index, 0)]
            if data.parent_name is not None:
                selected.append((request.name, data.selected_sub_request_index))
                data = self.request_data[(claim_index, request_index, data.selected_sub_request_index)]
            chosen.append((data.request_name(), data.device_class))
        devices = tuple(
            PickedDevice(r.request_name(), r.id, r.device, r.slice, r.spec.tolerations, r.shared, r.consumed_capacity, r.admin_access)
            for r in self.results[claim_index]
        )
        return ClaimPicks(devices, tuple(chosen), tuple(selected))


def _noop() -> None:
    """Nothing to undo: the device was not added."""


_NOOP = _noop


def _taint_prevents_allocation(device: Device, request: RequestSpec) -> bool:
    for taint in device.taints:
        if taint.effect in ("NoExecute", "NoSchedule") and not any(t.tolerates(taint) for t in request.tolerations):
            return True
    return False
