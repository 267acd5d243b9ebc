"""The DRA manager (upstream's ``SharedDRAManager``): the four kinds as parsed records, kept
current from their object stores, plus the claims whose allocation is in flight.

* Claims, classes and slices are parsed once per change (``kubesched.objects.dra``); an
  object the parser refuses is treated as absent (the API server would not have stored it).
* ``allocated_state()``: the devices in use, maintained on every claim change (upstream
  gathers them from every claim for every pod; at thousands of claims that is the cost of
  a cycle), plus the in-flight allocations (made by Reserve, not yet written by PreBind),
  as upstream's ``inFlightAllocations``: two cycles never hand out one device.
* ``assume_claim``: a claim PreBind wrote, used before the informer reports it (upstream's
  assume cache).
* ``slice_index``: the allocator's per-node pool index, rebuilt after a slice changes.
* Each class's selectors are compiled when the class arrives (the plugin's ``CelCache``).
* ``device_class_for(resource)``: the DeviceClass backing an extended resource
  (``extended_index``, shared with NodeResourcesFit).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Mapping

from ...framework import Handle
from ...framework.handle import JSONObject, ObjectHandler, ObjectStore
from ...objects.dra import (AllocationResult, DeviceClass, ResourceClaim, ResourceClaimSpec, ResourceClaimStatus, ResourceSlice,
                           parse_device_class, parse_resource_claim, parse_resource_slice)
from ...objects.errors import ObjectError
from ...cel import CelCache
from ...structured import AllocatedState, Features as AllocatorFeatures, SliceIndex
from .extended_index import extended_resource_index
from .names import API_VERSION, DEVICE_CLASS, EXTENDED_RESOURCE_CLAIM_ANNOTATION, PLURALS, RESOURCE_CLAIM, RESOURCE_SLICE

__all__ = ["DraManager", "manager_over"]


def _key(obj: JSONObject) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return ""
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name') or ''}" if namespace else str(meta.get("name") or "")


class _Handler:
    """Routes one store's changes to the manager."""

    def __init__(self, add: Callable[[JSONObject], None], remove: Callable[[JSONObject], None]) -> None:
        self._add = add
        self._remove = remove

    def on_object_add(self, obj: JSONObject) -> None:
        self._add(obj)

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self._remove(old)
        self._add(new)

    def on_object_delete(self, obj: JSONObject) -> None:
        self._remove(obj)


class _ClaimHandler(_Handler):
    """Claims: an update replaces the claim the manager holds, unless that one is newer (a claim
    PreBind wrote and assumed, while the informer still delivers the older writes before it)."""

    def __init__(self, manager: "DraManager") -> None:
        super().__init__(manager._claim_added, manager._claim_removed)
        self._manager = manager

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self._manager._claim_updated(new)


def _version(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


class DraManager:
    """``attach``: the manager registers its own handlers on the three stores (each first tells
    it of what the store holds); without it, it takes what they hold now and the caller routes
    later changes to ``handler(kind)`` (DynamicResources' front, which makes the manager on the
    first change, in the middle of a store's round of handlers)."""

    def __init__(self, handle: Handle, features: AllocatorFeatures, cel_cache: CelCache | None = None, *,
                 attach: bool = True) -> None:
        self.features = features
        self.cel_cache = cel_cache
        self.claims: dict[str, ResourceClaim] = {}  # "<namespace>/<name>" -> claim
        self.classes: dict[str, DeviceClass] = {}
        self.slices: dict[str, ResourceSlice] = {}
        self.allocated = AllocatedState()
        self.in_flight: dict[str, ResourceClaim] = {}  # claim uid -> the claim with its pending allocation
        # claim uid -> how many pods of one pod-group cycle use its pending allocation (upstream's
        # inFlightAllocation.sharers): always 1 unless DRAWorkloadResourceClaims shares it.
        self.sharers: dict[str, int] = {}
        self._slice_index: SliceIndex | None = None
        self._written: dict[int, tuple[JSONObject, AllocationResult]] = {}
        self._specs: dict[str, ResourceClaimSpec] = {}  # repr of a raw claim spec -> its record
        self.extended_claims: dict[str, str] = {}  # controlling pod's uid -> its extended-resource claim's key
        # Claims change on the event loop (informers) and on binding workers (PreBind's assume).
        self._lock = threading.Lock()
        # Changes that may change where claims fit (see verdicts.py).
        self.epoch = 0
        self.touched: list[str] = []
        self.freed: list[bool] = []  # per entry of ``touched``: devices given back (True) or taken
        self.claim_store = handle.object_store(API_VERSION, RESOURCE_CLAIM, PLURALS[RESOURCE_CLAIM])
        self.class_store = handle.object_store(API_VERSION, DEVICE_CLASS, PLURALS[DEVICE_CLASS])
        self.slice_store = handle.object_store(API_VERSION, RESOURCE_SLICE, PLURALS[RESOURCE_SLICE])
        self._handlers: dict[str, _Handler] = {
            RESOURCE_CLAIM: _ClaimHandler(self),
            DEVICE_CLASS: _Handler(self._class_added, self._class_removed),
            RESOURCE_SLICE: _Handler(self._slice_added, self._slice_removed),
        }
        _MANAGERS[self.claim_store] = self
        for kind, store in ((RESOURCE_CLAIM, self.claim_store), (DEVICE_CLASS, self.class_store),
                            (RESOURCE_SLICE, self.slice_store)):
            if attach:
                store.add_handler(self._handlers[kind])
            else:
                for obj in store.list():
                    self._handlers[kind].on_object_add(obj)
        self.extended = extended_resource_index(handle)

    def handler(self, kind: str) -> ObjectHandler:
        """What takes the changes of the store of ``kind`` (``ResourceClaim``, ``DeviceClass``, ``ResourceSlice``)."""
        return self._handlers[kind]

    # -- claims --------------------------------------------------------------------------------
    def written_allocation(self, raw: JSONObject, allocation: AllocationResult) -> None:
        """PreBind is about to write ``raw`` (``allocation_to_json(allocation)``): when the store
        hands the same object back (``simulate``), the record is used instead of parsing it again."""
        if len(self._written) > 64:
            self._written.clear()
        self._written[id(raw)] = (raw, allocation)

    def parse_claim(self, obj: JSONObject) -> ResourceClaim:
        """``parse_resource_claim``, reusing what was parsed before: an allocation PreBind wrote
        (``written_allocation``), and a spec seen in an earlier claim (claims from one template,
        or one pod's extended-resource claim on its create and its status writes, have equal
        specs; specs are immutable records, so claims share them)."""
        status = obj.get("status")
        raw_allocation = status.get("allocation") if isinstance(status, Mapping) else None
        known = self._written.get(id(raw_allocation)) if raw_allocation is not None else None
        if known is not None and known[0] is not raw_allocation:
            known = None
        raw_spec = obj.get("spec")
        spec_key = repr(raw_spec) if type(raw_spec) is dict else None
        known_spec = self._specs.get(spec_key) if spec_key is not None else None
        if known is None and known_spec is None:
            claim = parse_resource_claim(obj)
            self._remember_spec(spec_key, claim.spec)
            return claim
        doc = dict(obj)
        if known_spec is not None:
            doc["spec"] = {}
        if known is not None and isinstance(status, Mapping):
            doc["status"] = {k: v for k, v in status.items() if k != "allocation"}
        claim = parse_resource_claim(doc)
        if known_spec is not None:
            claim = ResourceClaim(claim.meta, known_spec, claim.status)
        else:
            self._remember_spec(spec_key, claim.spec)
        if known is not None:
            claim = claim.with_status(ResourceClaimStatus(known[1], claim.status.reserved_for))
        return claim

    def _remember_spec(self, key: str | None, spec: ResourceClaimSpec) -> None:
        if key is None:
            return
        if len(self._specs) >= 1024:
            self._specs.clear()
        self._specs[key] = spec

    def _claim_added(self, obj: JSONObject) -> None:
        try:
            claim = self.parse_claim(obj)
        except ObjectError:
            return
        with self._lock:
            self.claims[claim.key] = claim
            self._index_extended(claim)
            if claim.allocation is not None:
                self._drop_in_flight(claim.meta.uid)  # PreBind's write arrived: it replaces the in-flight one
                self.allocated.add_allocation(claim.allocation, self.features)
                self._touch(claim.allocation)

    def _claim_updated(self, obj: JSONObject) -> None:
        """upstream's assume cache: an object older than the one held (by resourceVersion) is ignored."""
        try:
            claim = self.parse_claim(obj)
        except ObjectError:
            self._claim_removed(obj)
            return
        with self._lock:
            held = self.claims.get(claim.key)
            if held is not None:
                mine, theirs = _version(held.meta.resource_version), _version(claim.meta.resource_version)
                if mine is not None and theirs is not None and theirs < mine and held.meta.uid == claim.meta.uid:
                    return
                self.claims.pop(claim.key, None)
                if held.allocation is not None:
                    self.allocated.remove_allocation(held.allocation, self.features)
                    self._touch(held.allocation, freed=True)
            self.claims[claim.key] = claim
            self._index_extended(claim)
            if claim.allocation is not None:
                self._drop_in_flight(claim.meta.uid)
                self.allocated.add_allocation(claim.allocation, self.features)
                self._touch(claim.allocation)

    def _claim_removed(self, obj: JSONObject) -> None:
        with self._lock:
            claim = self.claims.pop(_key(obj), None)
            if claim is not None:
                for owner in claim.meta.owner_references:
                    if self.extended_claims.get(owner.uid) == claim.key:
                        del self.extended_claims[owner.uid]
            if claim is not None and claim.allocation is not None:
                self.allocated.remove_allocation(claim.allocation, self.features)
                self._touch(claim.allocation, freed=True)

    def _index_extended(self, claim: ResourceClaim) -> None:
        if claim.meta.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true":
            for owner in claim.meta.owner_references:
                if owner.controller:
                    self.extended_claims[owner.uid] = claim.key

    def extended_claim_of(self, pod_uid: str) -> ResourceClaim | None:
        """The extended-resource claim controlled by the pod of this uid, if any."""
        key = self.extended_claims.get(pod_uid)
        return self.claims.get(key) if key is not None else None

    def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def assume_claim(self, raw: JSONObject, claim: ResourceClaim) -> None:
        """A claim as the API server stored it, before the informer reports it."""
        with self._lock:
            existing = self.claims.get(claim.key)
            if existing is not None and existing.allocation is not None:
                self.allocated.remove_allocation(existing.allocation, self.features)
                self._touch(existing.allocation, freed=True)
            self.claims[claim.key] = claim
            self._index_extended(claim)
            self._drop_in_flight(claim.meta.uid)
            if claim.allocation is not None:
                self.allocated.add_allocation(claim.allocation, self.features)
                self._touch(claim.allocation)

    def raw_claim(self, claim: ResourceClaim) -> JSONObject | None:
        return self.claim_store.get(claim.namespace, claim.name)

    def list_claims(self) -> Iterable[ResourceClaim]:
        return self.claims.values()

    # -- in-flight allocations (Reserve .. PreBind) --------------------------------------------
    def pending_allocation(self, uid: str) -> ResourceClaim | None:
        return self.in_flight.get(uid)

    def signal_pending_allocation(self, uid: str, claim: ResourceClaim) -> None:
        """Reserve: the claim's devices are taken from now on. A claim already in flight gains a
        sharer (a later pod of the same pod-group cycle reusing the pending allocation)."""
        with self._lock:
            if uid in self.in_flight:
                self.sharers[uid] = self.sharers.get(uid, 1) + 1
                return
            self.in_flight[uid] = claim
            self.sharers[uid] = 1
            if claim.allocation is not None:
                self._touch(claim.allocation)

    def remove_pending_allocation(self, uid: str, force: bool = False) -> bool:
        """Unreserve, or PreBind done: one sharer less; the in-flight allocation is gone when it was
        the last one or ``force`` (the allocation is stored now). True when it went, False when it
        is still shared or none was pending (upstream's ``MaybeRemoveClaimPendingAllocation``)."""
        with self._lock:
            count = self.sharers.get(uid, 1)
            if uid in self.in_flight and not force and count > 1:
                self.sharers[uid] = count - 1
                return False
            return self._drop_in_flight(uid)

    def _drop_in_flight(self, uid: str) -> bool:
        """The in-flight allocation of claim ``uid`` is gone (its devices freed, unless a stored
        allocation took them again: that one notes its own touch); lock held."""
        claim = self.in_flight.pop(uid, None)
        self.sharers.pop(uid, None)
        if claim is not None and claim.allocation is not None:
            self._touch(claim.allocation, freed=True)
        return claim is not None

    def allocated_state(self) -> AllocatedState:
        """The devices in use for a new cycle's allocator: the stored claims', and the in-flight
        ones (in a copy, so the stored state stays exact)."""
        with self._lock:
            if not self.in_flight:
                return self.allocated
            state = self.allocated.copy()
            for claim in self.in_flight.values():
                if claim.allocation is not None:
                    state.add_allocation(claim.allocation, self.features)
            return state

    def _touch(self, allocation: AllocationResult, freed: bool = False) -> None:
        """Note where an allocation changed: its nodes when every pool it uses is node-local,
        else everywhere (a new epoch); ``freed`` when its devices were given back (else taken)."""
        by_pool = self.slice_index().by_pool
        nodes: list[str] = []
        for result in allocation.devices:
            slices = by_pool.get((result.driver, result.pool))
            if not slices or any(not s.node_name or s.shared_counters for s in slices):
                self.epoch += 1
                return
            nodes.extend(s.node_name for s in slices if s.node_name)
        if len(self.touched) > 100_000:  # start over rather than keep a long log
            self.touched.clear()
            self.freed.clear()
            self.epoch += 1
        self.freed.extend([freed] * len(nodes))  # first: a reader never sees an entry without its flag
        self.touched.extend(nodes)

    # -- classes --------------------------------------------------------------------------------
    def _class_added(self, obj: JSONObject) -> None:
        try:
            cls = parse_device_class(obj)
        except ObjectError:
            return
        self.classes[cls.name] = cls
        self.epoch += 1
        if self.cel_cache is not None:
            # Compiled now rather than by the first allocation: the CEL engine loads with the first
            # class (informer sync, or loading a simulation), not inside a scheduling cycle.
            for selector in cls.selectors:
                self.cel_cache.get_or_compile(selector.expression)

    def _class_removed(self, obj: JSONObject) -> None:
        self.classes.pop(_key(obj), None)
        self.epoch += 1

    def get(self, name: str) -> DeviceClass | None:
        """``DeviceClassLister.get`` for the allocator."""
        return self.classes.get(name)

    def device_class_for(self, resource: str) -> DeviceClass | None:
        """The class backing extended resource ``resource`` (None: a device plugin's, or nobody's)."""
        name = self.extended.class_name_for(resource)
        return self.classes.get(name) if name is not None else None

    # -- slices -----------------------------------------------------------------------------------
    def _slice_added(self, obj: JSONObject) -> None:
        try:
            s = parse_resource_slice(obj)
        except ObjectError:
            return
        self.slices[s.name] = s
        self._slice_index = None
        self.epoch += 1

    def _slice_removed(self, obj: JSONObject) -> None:
        if self.slices.pop(_key(obj), None) is not None:
            self._slice_index = None
            self.epoch += 1

    def slice_index(self) -> SliceIndex:
        if self._slice_index is None:
            self._slice_index = SliceIndex(list(self.slices.values()))
        return self._slice_index


_MANAGERS: "weakref.WeakKeyDictionary[ObjectStore, DraManager]" = weakref.WeakKeyDictionary()


def manager_over(claim_store: ObjectStore) -> DraManager | None:
    """The DRA manager made last over this ResourceClaim store (each registers itself), if any
    (``shared_manager.registered_dra_manager``)."""
    return _MANAGERS.get(claim_store)
