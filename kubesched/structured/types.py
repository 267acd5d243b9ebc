"""The allocator's inputs besides claims and slices: features, device ids, the devices already
allocated (``AllocatedState``), the class lister, and its errors."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple, Protocol

from kubesched.objects.dra import AllocationResult, DeviceClass, ResourceClaim

__all__ = [
    "Features",
    "DeviceID",
    "ConsumedCapacity",
    "AllocatedState",
    "DeviceClassLister",
    "AllocationError",
    "NodeAllocationError",
    "AllocationTimeout",
    "ALLOCATION_RESULTS_MAX_SIZE",
]

# resourceapi.AllocationResultsMaxSize: devices in one claim's allocation.
ALLOCATION_RESULTS_MAX_SIZE = 32


@dataclass(slots=True, frozen=True)
class Features:
    """``structured.Features``; the defaults are v1.36's feature gates."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    list_type_attributes: bool = False

    @staticmethod
    def from_gates(gates: Mapping[str, bool]) -> "Features":
        """What the scheduler's DynamicResources plugin derives from the feature gates."""
        return Features(
            admin_access=gates.get("DRAAdminAccess", True),
            prioritized_list=gates.get("DRAPrioritizedList", True),
            partitionable_devices=gates.get("DRAPartitionableDevices", True),
            device_taints=gates.get("DRADeviceTaints", True),
            device_binding_and_status=gates.get("DRADeviceBindingConditions", True) and gates.get("DRAResourceClaimDeviceStatus", True),
            consumable_capacity=gates.get("DRAConsumableCapacity", True),
            # The scheduler never passes ListTypeAttributes to its allocator (v1.36).
        )


class DeviceID(NamedTuple):
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


# Capacity consumed on one device, by capacity name.
ConsumedCapacity = dict[str, int | Fraction]


def add_capacity(into: ConsumedCapacity, added: Mapping[str, int | Fraction]) -> None:
    for name, value in added.items():
        into[name] = into.get(name, 0) + value


# Numbers for AllocatedState versions: unique across all states, so that two states that show
# the same number for a pool saw the same last change of it.
_VERSIONS = itertools.count(1)
_CHANGES_KEPT = 1 << 16


@dataclass(slots=True)
class AllocatedState:
    """Devices held by allocated claims (``schedulerapi.AllocatedState``): dedicated devices,
    shares of devices with ``allowMultipleAllocations`` and the capacity those consumed.
    Admin-access allocations hold nothing.

    Change it through ``add_allocation`` / ``remove_allocation`` (or build a new one): they
    give each (driver, pool) they touch a new version, which the allocator's memo compares.
    A state built with its sets filled in directly is fine; changing the sets afterwards
    without those methods is not."""

    allocated_devices: set[DeviceID] = field(default_factory=set)
    allocated_shared_device_ids: set[tuple[DeviceID, str]] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, ConsumedCapacity] = field(default_factory=dict)
    # Last change per (driver, pool); ``origin`` for pools this state (and what it was copied
    # from) never changed.
    versions: dict[tuple[str, str], int] = field(default_factory=dict)
    origin: int = field(default_factory=lambda: next(_VERSIONS))
    # The changes of ``versions`` in this object, in order, so that a reader who saw the first
    # ``n`` catches up on the rest (``pool_versions.PoolStamps``); ``changes_dropped`` counts
    # those forgotten to keep it short. A copy starts its own.
    changes: list[tuple[tuple[str, str], int]] = field(default_factory=list)
    changes_dropped: int = 0

    def pool_version(self, driver: str, pool: str) -> int:
        return self.versions.get((driver, pool), self.origin)

    def _touch(self, driver: str, pool: str, version: int) -> None:
        key = (driver, pool)
        if self.versions.get(key) == version:
            return
        self.versions[key] = version
        if len(self.changes) >= _CHANGES_KEPT:
            # The count first, then a new list: a reader that sees the old list with the new
            # count finds it has not seen the dropped ones, or re-reads entries in order.
            self.changes_dropped += len(self.changes)
            self.changes = [(key, version)]
            return
        self.changes.append((key, version))

    @staticmethod
    def from_claims(claims: Iterable[ResourceClaim], features: Features = Features()) -> "AllocatedState":
        state = AllocatedState()
        for claim in claims:
            if claim.allocation is not None:
                state.add_allocation(claim.allocation, features)
        return state

    def add_allocation(self, allocation: AllocationResult, features: Features = Features()) -> None:
        """``foreachAllocatedDevice`` with the callbacks that add."""
        version = next(_VERSIONS)
        for result in allocation.devices:
            if result.admin_access:
                continue
            device_id = DeviceID(result.driver, result.pool, result.device)
            self._touch(result.driver, result.pool, version)
            if features.consumable_capacity and result.share_id is not None:
                self.allocated_shared_device_ids.add((device_id, result.share_id))
                if result.consumed_capacity is not None:
                    add_capacity(self.aggregated_capacity.setdefault(device_id, {}), {k: q.number for k, q in result.consumed_capacity.items()})
                continue
            self.allocated_devices.add(device_id)

    def remove_allocation(self, allocation: AllocationResult, features: Features = Features()) -> None:
        """The inverse of ``add_allocation`` (a device another claim also holds is the caller's
        to re-add: rebuild with ``from_claims`` when claims overlap)."""
        version = next(_VERSIONS)
        for result in allocation.devices:
            if result.admin_access:
                continue
            device_id = DeviceID(result.driver, result.pool, result.device)
            self._touch(result.driver, result.pool, version)
            if features.consumable_capacity and result.share_id is not None:
                self.allocated_shared_device_ids.discard((device_id, result.share_id))
                consumed = self.aggregated_capacity.get(device_id)
                if consumed is not None and result.consumed_capacity is not None:
                    for name, quantity in result.consumed_capacity.items():
                        if name in consumed:
                            consumed[name] -= quantity.number
                    if all(v == 0 for v in consumed.values()):
                        del self.aggregated_capacity[device_id]
                continue
            self.allocated_devices.discard(device_id)

    def copy(self) -> "AllocatedState":
        return AllocatedState(
            set(self.allocated_devices),
            set(self.allocated_shared_device_ids),
            {k: dict(v) for k, v in self.aggregated_capacity.items()},
            dict(self.versions),
            self.origin,
            [],
            0,
        )

    def is_allocated(self, device_id: DeviceID) -> bool:
        """``IsDeviceAllocated``: dedicated, shared, or with consumed capacity."""
        if device_id in self.allocated_devices or device_id in self.aggregated_capacity:
            return True
        return any(shared == device_id for shared, _ in self.allocated_shared_device_ids)


class DeviceClassLister(Protocol):
    def get(self, name: str) -> DeviceClass | None: ...


class AllocationError(Exception):
    """A fatal allocation problem (upstream returns an error, not "cannot allocate"): the
    scheduling attempt fails with this message."""


class AllocationTimeout(AllocationError):
    """The search ran past its deadline (upstream: the context's ``DeadlineExceeded`` under
    DRASchedulerFilterTimeout); the plugin reports ``node <name>: timed out trying to allocate
    devices`` as an error."""


class NodeAllocationError(AllocationError):
    """Upstream's ``ErrFailedAllocationOnNode``: only this node is unschedulable, with the
    message as its reason."""
