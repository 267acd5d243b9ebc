"""Upstream's structured allocator for DRA (``k8s.io/dynamic-resource-allocation/structured``),
the variant v1.36 selects for its default features, plus the per-node pool index it runs on.
DynamicResources allocates with it; NodeResourcesFit's DRA scoring reads its pool index and
allocated state. It reads only the DRA records (``kubesched.objects.dra``) and CEL
(``kubesched.cel``).

The public surface is this package's names: ``Allocator`` (built per scheduling attempt from
``Features``, the ``AllocatedState``, a ``DeviceClassLister`` and the slices or their
``SliceIndex``; ``allocate(node, claims)`` gives the claims' results on the node, None when
they do not fit, or raises ``AllocationError``, ``NodeAllocationError`` or
``AllocationTimeout``), ``SliceIndex`` (the slices indexed once, with each node's pools and
what the allocator remembers across pods), ``gather_pools``, ``node_matches``, ``Pool`` and
``DeviceID``.

Inside, one job per module: ``types`` (the inputs and errors), ``pool_records`` and ``pools``
(which pools a node sees), ``pool_versions`` (each pool's version, and which pools are
exhausted for a request), ``allocator`` (the per-attempt entry and its memo), ``search`` (the
depth-first search), ``attempt_records`` (what the search shares with the allocator and the
pool check), ``exhausted`` (the pool check), ``constraints``, ``counters``, ``capacity``,
``picks`` and ``results`` (what was chosen, and the allocation results made from it).
"""

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
