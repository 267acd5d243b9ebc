"""What one ``Allocate`` call (``search.Attempt``) shares with the allocator that starts it and
with the pool check beside it (``exhausted``): a candidate device, the record kept per request,
what the search reads of its allocator (``AllocatorState``) and what the pool check reads of the
search (``SearchState``). They live below all three, so that none of them imports another back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kubesched.cel import CelCache, CompilationResult
from kubesched.objects.dra import Device, DeviceClass, RequestSpec, ResourceClaim, ResourceSlice

from .counters import CounterSets, CounterTracker
from .pool_records import NodePools, Pool
from .pool_versions import PoolVerdicts, Positions
from .pools import SliceIndex
from .types import AllocatedState, DeviceClassLister, DeviceID, Features

__all__ = ["AllocatorState", "Candidate", "RequestData", "SearchState"]


@dataclass(slots=True, eq=False)
class Candidate:
    """A device the search may take for a request, with where it is."""

    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


@dataclass(slots=True, eq=False)
class RequestData:
    """upstream's ``requestData``: one request (or subrequest) of one claim as the search sees it."""

    request: RequestSpec
    parent_name: str | None
    device_class: DeviceClass | None
    num_devices: int = 0
    selected_sub_request_index: int = 0
    all_devices: list[Candidate] | None = None
    # The class's and the request's selectors, compiled (looked up in the CEL cache once).
    class_selectors: tuple[CompilationResult, ...] = ()
    request_selectors: tuple[CompilationResult, ...] = ()
    # Which of the node's pools are exhausted for this request (None: not judged, e.g. admin
    # access, which may take devices in use).
    verdicts: PoolVerdicts | None = None
    # The pools not known to be exhausted when this allocation first looked (``verdicts``).
    visit: Positions | None = None

    def request_name(self) -> str:
        return f"{self.parent_name}/{self.request.name}" if self.parent_name is not None else self.request.name


class AllocatorState(Protocol):
    """What an ``Attempt`` reads of its ``allocator.Allocator``: the allocator's inputs and the
    caches it keeps across the calls of one scheduling attempt."""

    # Counted across the allocator's calls, as upstream's ``numAllocateOneInvocations``.
    num_allocate_one_invocations: int

    @property
    def features(self) -> Features: ...

    @property
    def allocated_state(self) -> AllocatedState: ...

    @property
    def class_lister(self) -> DeviceClassLister: ...

    @property
    def index(self) -> SliceIndex: ...

    @property
    def cel_cache(self) -> CelCache: ...

    @property
    def available_counters(self) -> dict[str, CounterSets]: ...

    def is_allocated(self, device_id: DeviceID) -> bool: ...

    def pool_version(self, pool: Pool) -> int: ...

    def request_key(self, claim: ResourceClaim, request_index: int, sub_index: int, request: RequestSpec,
                    device_class: DeviceClass) -> int: ...


class SearchState(Protocol):
    """What ``exhausted.pool_exhausted`` reads of the search it judges pools for."""

    @property
    def features(self) -> Features: ...

    @property
    def a(self) -> AllocatorState: ...

    @property
    def counters(self) -> CounterTracker: ...

    @property
    def node_pools(self) -> NodePools | None: ...

    def is_selectable(self, key: tuple[int, int, int], data: RequestData, slice_: ResourceSlice, device: Device) -> bool: ...
