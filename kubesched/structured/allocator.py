"""Upstream's structured allocator (``structured/internal/incubating``, the variant v1.36
picks for its default feature gates: consumable capacity and binding conditions need it).

``Allocator`` is built per scheduling attempt from the cluster state; ``allocate`` finds, for one
node, devices for every request of the claims that still need an allocation, by depth-first
first fit (``search.Attempt``): claims in order, requests in claim order, ``firstAvailable``
subrequests in order, and candidate devices by pool (driver, pool name), slice (name) and
position in the slice; the devices of one request are tried as combinations in that order. The
first complete solution is the result.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.objects import Node
from kubesched.objects.dra import DeviceClass, RequestSpec, ResourceClaim, ResourceSlice

from kubesched.cel import CelCache

from .pool_versions import Stamp
from .pool_records import Pool
from .pools import SliceIndex, request_signature, spec_signature
from .results import AllocationResults, ClaimPicks
from .counters import CounterSets
from .search import Attempt
from .types import AllocatedState, DeviceClassLister, DeviceID, Features

__all__ = ["Allocator", "MIN_POOLS_TO_SKIP"]

MIN_POOLS_TO_SKIP = 8


class Allocator:
    """``structured.NewAllocator`` for one scheduling attempt; ``allocate`` per node."""

    def __init__(
        self,
        features: Features,
        allocated_state: AllocatedState,
        class_lister: DeviceClassLister,
        slices: Sequence[ResourceSlice] | SliceIndex,
        cel_cache: CelCache | None = None,
        *,
        skip_exhausted_pools: bool = True,
    ) -> None:
        """``skip_exhausted_pools=False`` makes the search try every device of every pool, as
        upstream's does, instead of skipping the pools it knows no device can be taken from
        (same decisions; the tests compare both)."""
        self.features = features
        self.allocated_state = allocated_state
        self.class_lister = class_lister
        self.index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self.cel_cache = cel_cache if cel_cache is not None else CelCache()
        # Per pool *name* (as upstream keys it): counters left after allocated devices.
        self.available_counters: dict[str, CounterSets] = {}
        self.num_allocate_one_invocations = 0
        self.skip_exhausted_pools = skip_exhausted_pools
        # Nodes with fewer pools are searched without verdicts: scanning a pool or two costs
        # less than keeping verdicts for them.
        self.min_pools_to_skip = MIN_POOLS_TO_SKIP
        self._shared_devices: set[DeviceID] | None = None
        self._signatures: dict[int, tuple[ResourceClaim, int]] = {}
        # Per node pools key: each pool's version in the allocated state, and the newest of them.
        self._stamps: dict[int, Stamp] = {}
        self._features_id = self.index.intern(
            ("features", features.admin_access, features.prioritized_list, features.partitionable_devices, features.device_taints,
             features.device_binding_and_status, features.consumable_capacity, features.list_type_attributes)
        )

    def allocate(self, node: Node, claims: Sequence[ResourceClaim], deadline: float | None = None) -> AllocationResults | None:
        """Allocation results, one per claim (built when first read), or None when the claims do
        not fit on the node. Raises ``AllocationError`` (``NodeAllocationError`` for invalid pools)
        where upstream returns an error.

        The outcome is remembered (in the ``SliceIndex``, so across pods and across nodes that see
        the same pools) by the claims' specs, their classes and the pools the node sees; it is
        reused while the allocated state shows the same version for each of those pools (no
        device of them allocated or freed since).

        ``deadline`` (``time.monotonic()`` seconds) bounds the search: past it, ``AllocationTimeout``."""
        node_pools = self.index.node_pools(node, self.features)
        stamp = self._stamps.get(node_pools.key)
        if stamp is None:  # the state does not change while this allocator lives
            per_pool_from = self.min_pools_to_skip if self.skip_exhausted_pools else len(node_pools.pools) + 1
            stamp = self.index.stamps.stamp(node_pools, self.allocated_state, per_pool_from)
            self._stamps[node_pools.key] = stamp
        claims_key = self._claims_key(claims)
        if claims_key is not None:
            key = (node_pools.key, claims_key)
            found = self.index.memo.get(key)
            if found is not None and found[1] == stamp[1]:
                remembered: list[ClaimPicks] | None = found[2]
                return None if remembered is None else AllocationResults(self.features, node, claims, remembered)
        picks = Attempt(self, node, claims, deadline).run(node_pools, stamp[0])
        if claims_key is not None:
            self.index.remember(key, (node_pools.pools, stamp[1], picks))
        return None if picks is None else AllocationResults(self.features, node, claims, picks)

    def node_key(self, node: Node) -> int:
        """A number for what ``allocate`` depends on of the node: nodes with the same key get the
        same devices (or the same error) for the same claims from one allocator, so a caller
        may allocate on one of them and use ``AllocationResults.on_node`` for the others.
        Stable while the slices (the ``SliceIndex``) stay the same."""
        return self.index.node_pools(node, self.features).key

    def request_key(self, claim: ResourceClaim, request_index: int, sub_index: int, request: RequestSpec, device_class: DeviceClass) -> int:
        """A small number for what the pools' verdicts for a request depend on besides the pools
        and the node: the features, the request's spec and its class (by identity); named
        through the claim's signature when ``allocate`` made one (it covers both)."""
        signed = self._signatures.get(id(claim))
        if signed is not None and signed[0] is claim:
            return self.index.intern(("request", self._features_id, signed[1], request_index, sub_index))
        return self.index.intern(("request", self._features_id, request_signature(request), device_class))

    def _shared(self) -> set[DeviceID]:
        if self._shared_devices is None:
            self._shared_devices = {d for d, _ in self.allocated_state.allocated_shared_device_ids}
        return self._shared_devices

    def _claims_key(self, claims: Sequence[ResourceClaim]) -> tuple[int, ...] | None:
        """What an allocation depends on besides the node and the allocated devices: features,
        claim specs and classes, as small numbers; None when a class is missing (that is an
        error, not remembered)."""
        if len(claims) == 1:  # the common case, without building lists
            found = self._signatures.get(id(claims[0]))
            if found is not None and found[0] is claims[0]:
                return (self._features_id, found[1])
        parts: list[int] = [self._features_id]
        for claim in claims:
            found = self._signatures.get(id(claim))
            if found is None or found[0] is not claim:
                classes: list[object] = []
                for request in claim.spec.requests:
                    for spec in (request.exactly,) if request.exactly is not None else request.first_available:
                        device_class = self.class_lister.get(spec.device_class_name)
                        if device_class is None:
                            return None
                        classes.append(device_class)
                # Classes by identity: an updated class is a new object (kept alive by the key).
                found = (claim, self.index.intern((spec_signature(claim), *classes)))
                self._signatures[id(claim)] = found
            parts.append(found[1])
        return tuple(parts)

    def pool_version(self, pool: Pool) -> int:
        """The version of ``pool`` in this allocator's allocated state."""
        return self.allocated_state.versions.get(pool.key, self.allocated_state.origin)

    def is_allocated(self, device_id: DeviceID) -> bool:
        if device_id in self.allocated_state.allocated_devices or device_id in self.allocated_state.aggregated_capacity:
            return True
        return device_id in self._shared()
