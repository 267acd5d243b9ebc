"""DynamicResources' cycle state (upstream's ``stateData`` and ``claimStore``).

The pod's claims in ``spec.resourceClaims`` order, then the extended-resource claim (if
any) last. Written by PreFilter; Filter adds each node's allocations, Reserve the chosen
node's, PreBind replaces claims by what the API server stored. Shared by clones, as
upstream's pointer is: preemption's dry runs see the same allocations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...framework import StateKey
from .names import NAME

if TYPE_CHECKING:  # annotations only: the records load with the plugin, the allocator on first need
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

    from ...objects.dra import AllocationResult, ResourceClaim
    from ...objects.dra.claim import ResourceClaimConsumerReference
    from ...objects.selectors import NodeSelector
    from ...structured import Allocator
    from ...structured.results import AllocationResults
    from .extended import ExtendedRequest, RequestMapping
    from .verdicts import VerdictRows

__all__ = ["NodeAllocation", "DraState", "ExtendedGroup", "ExtendedGroups", "GroupPending", "NO_CLAIMS", "STATE",
           "GROUP_STATE"]


@dataclass(slots=True)
class NodeAllocation:
    """Filter's result on one node: allocations for the claims that needed one (in claim
    order), the node's variant of the extended-resource claim and its container mappings."""

    results: "Sequence[AllocationResult] | AllocationResults"
    extended_claim: ResourceClaim | None = None
    extended_requests: list[ExtendedRequest] = field(default_factory=list)
    mappings: list[RequestMapping] = field(default_factory=list)


@dataclass(slots=True)
class ExtendedGroup:
    """The batch Filter's nodes that lack one set of DRA-backed resources: their kept verdicts
    and the extended-resource claim's variant they were judged for."""

    verdicts: VerdictRows
    claim: ResourceClaim
    requests: list[ExtendedRequest]
    mappings: list[RequestMapping]


@dataclass(slots=True)
class ExtendedGroups:
    """Which group each table row is in (``lacking``, by node name through ``rows``)."""

    lacking: npt.NDArray[np.int64]
    rows: dict[str, int]
    by_key: dict[int, ExtendedGroup] = field(default_factory=dict)


@dataclass(slots=True)
class DraState:
    claims: list[ResourceClaim] = field(default_factory=list)
    user_claims: int = 0  # claims[:user_claims] are the pod's; one more is the extended-resource claim
    initial_extended_uid: str = ""
    backed: dict[str, int] | None = None  # the pod's scalar requests when some are DRA-backed
    allocator: Allocator | None = None
    available_on: list[NodeSelector | None] = field(default_factory=list)  # allocated claims' node selectors
    allocations: list[AllocationResult | None] = field(default_factory=list)  # Reserve's (or pending) per claim
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, NodeAllocation] = field(default_factory=dict)
    # The claims Filter allocates when there is no extended-resource claim (None otherwise).
    plain_claims: list[ResourceClaim] | None = None
    has_selectors: bool = False  # some allocated claim has an allocation node selector
    prioritized: bool = False  # some request has firstAvailable subrequests (only those score)
    # The plain claims' shape and the DRA manager's change marks when PreFilter built the allocator.
    signature: tuple[object, ...] | None = None
    epoch_mark: int = 0
    touch_mark: int = 0
    verdicts: VerdictRows | None = None  # Filter's kept verdicts for this pod's claim shape
    # The extended-resource claim's variant per set of resources a node must provide through
    # DRA (``needed``, sorted): built once per cycle, not once per node.
    extended_groups: ExtendedGroups | None = None  # the batch Filter's, for extended resources only
    extended_variants: dict[tuple[tuple[str, int], ...], tuple[ResourceClaim, list[ExtendedRequest], list[RequestMapping]]] = \
        field(default_factory=dict)

    # DRAWorkloadResourceClaims: whom each of the pod's claims is reserved for (the pod, or its
    # PodGroup when the group declares the same entry), in claim order; None with the gate off.
    bindings: list[ResourceClaimConsumerReference] | None = None
    # Claims whose pending allocation an earlier pod of this pod-group cycle made (index -> the
    # claim as stored, unallocated); ``claims`` holds the pending copy with that allocation.
    shared: dict[int, ResourceClaim] = field(default_factory=dict)

    def clone(self) -> "DraState":
        return self

    def empty(self) -> bool:
        return not self.claims

    def extended_claim(self) -> ResourceClaim | None:
        return self.claims[self.user_claims] if len(self.claims) > self.user_claims else None

    def extended_index(self) -> int | None:
        return self.user_claims if len(self.claims) > self.user_claims else None

    def no_user_claim(self) -> bool:
        return self.user_claims == 0

    def to_allocate(self) -> list[int]:
        """Indexes of the claims without an allocation in their status."""
        return [i for i, c in enumerate(self.claims) if c.allocation is None]


@dataclass(slots=True)
class GroupPending:
    """upstream's ``podGroupStateData``: the claims whose allocation is pending for this
    pod-group cycle (uids), which later pods of the cycle reuse instead of refusing."""

    pending: set[str] = field(default_factory=set)

    def clone(self) -> "GroupPending":
        return self


STATE: StateKey[DraState] = StateKey(NAME)
GROUP_STATE: StateKey[GroupPending] = StateKey(NAME + "/podgroup")
NO_CLAIMS = DraState()  # shared by every pod without claims: never written to
