"""Upstream's structured allocator for DRA (``k8s.io/dynamic-resource-allocation/structured``),
the variant v1.36 selects for its default features, plus the per-node pool index it runs on."""

from .allocator import Allocator
from .pool_records import Pool
from .pools import SliceIndex, gather_pools, node_matches
from .types import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    DeviceClassLister,
    DeviceID,
    Features,
    NodeAllocationError,
)

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "DeviceClassLister",
    "DeviceID",
    "Features",
    "NodeAllocationError",
    "Pool",
    "SliceIndex",
    "gather_pools",
    "node_matches",
]
