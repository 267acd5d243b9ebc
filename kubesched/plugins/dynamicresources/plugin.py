"""DynamicResources (upstream's ``dynamicresources``): pods get the devices their ResourceClaims ask for.

* PreEnqueue: every claim the pod names must exist (a template's claim must have been
  created by the resourceclaim controller), not be going away, and be the pod's own when
  made from a template.
* PreFilter: pods without claims and without DRA-backed extended resources are skipped.
  A claim allocated and reserved for others stays usable (claims are shareable); an
  unallocated one must not be in flight for another pod, and each request's DeviceClass
  must exist (``request <r>: device class <c> does not exist``). With claims to allocate,
  an allocator is built once for the cycle over the devices in use (in-flight ones too).
* Filter (per node): an allocated claim's ``nodeSelector`` must match (``resourceclaim not
  available on the node``); the claims still to allocate are allocated together (``cannot
  allocate all claims``), the result kept for Score and Reserve.
* Score (weight 2 in the default profile): for ``firstAvailable`` requests, ``8 - i`` per
  chosen subrequest ``i``; normalized to 0..100 by the highest.
* Reserve marks the node's allocations in flight; Unreserve gives them back and takes the
  pod out of ``reservedFor``. PreBind writes allocation and reservation through the
  cluster client (``binding.py``). PostFilter deallocates an unavailable claim nobody else
  uses, or says ``no new claims to deallocate``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial

import numpy as np

from ...framework import (
    BoolArray,
    Code,
    NodeTableView,
    NodeVerdicts,
    CycleState,
    Handle,
    NodeToStatusReader,
    PostFilterResult,
    PreFilterResult,
    RowArray,
    SnapshotView,
    Status,
)
from ...framework.features import Features
from ...framework.scoring import default_normalize_score
from ...framework.signing import SignFragment
from ...framework.views import IntArray
from ...objects.dra import ResourceClaim
from ...objects.node import Node
from ...objects.nodeinfo import NodeInfo
from ...objects.selectors import NodeSelector
from ...objects.pod import PodInfo
from .args import DynamicResourcesArgs
from .binding import BindingMixin
from .binding_conditions import BindingConditionError, claim_ready, claim_timed_out, timestamp_clock
from .claims import ClaimNotCreated, claim_names
from .extended import NodeCannotFit, backed_resources, is_dra_extended_resource, is_extended_claim_of, node_requests
from .extended_claim import node_extended_claim, special_claim
from .hints import HintsMixin
from .manager import DraManager
from .names import (
    ERR_CANNOT_ALLOCATE,
    ERR_NOT_AVAILABLE,
    ERR_NOTHING_TO_DEALLOCATE,
    FIRST_AVAILABLE_MAX_SIZE,
    NAME,
    SPECIAL_CLAIM_NAME,
)
from .state import STATE, DraState, NodeAllocation
from .cel import CelCache
from .structured import AllocationError, AllocationTimeout, Allocator, Features as AllocatorFeatures, NodeAllocationError
from .structured.pools import spec_signature
from .verdicts import DOES_NOT_FIT, FITS, UNKNOWN, VerdictRows

__all__ = ["DynamicResources", "allocator_features", "new"]

_SKIP = Status(Code.SKIP)
_NO_CLAIMS = DraState()  # shared by every pod without claims: never written to
_NOWHERE = NodeSelector(())  # matches no node: a claim whose binding failed is available nowhere
_CANNOT_ALLOCATE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_CANNOT_ALLOCATE)
_NOT_AVAILABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NOT_AVAILABLE)


def _timed_out(node: str) -> Status:
    """A node's allocation past the filter timeout: an error (retried with backoff), as upstream's."""
    return Status(Code.ERROR, f"node {node}: timed out trying to allocate devices")


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def allocator_features(features: Features) -> AllocatorFeatures:
    """upstream's ``AllocatorFeatures``: the structured allocator's switches from the gates."""
    return AllocatorFeatures(
        admin_access=features.enable_dra_admin_access,
        prioritized_list=features.enable_dra_prioritized_list,
        partitionable_devices=features.enable_dra_partitionable_devices,
        device_taints=features.enable_dra_device_taints,
        device_binding_and_status=(features.enable_dra_device_binding_conditions
                                   and features.enable_dra_resource_claim_device_status),
        consumable_capacity=features.enable_dra_consumable_capacity,
        list_type_attributes=features.enable_dra_list_type_attributes,
    )


def reserved_for(claim: ResourceClaim, pod: PodInfo) -> bool:
    return any(ref.uid == pod.uid for ref in claim.status.reserved_for)


class DynamicResources(HintsMixin, BindingMixin):
    name = NAME

    def __init__(self, handle: Handle, features: Features) -> None:
        self.handle = handle
        self.features = features
        self.enabled = features.enable_dynamic_resource_allocation
        self.allocator_features = allocator_features(features)
        self.manager = DraManager(handle, self.allocator_features)
        self.cel_cache = CelCache()
        self.filter_timeout = 10.0  # DynamicResourcesArgs.filterTimeout (upstream's default)

    # -- signing, PreEnqueue --------------------------------------------------------------------
    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Pods with claims are never batched (upstream cannot tell yet which claims are node-local)."""
        if pod.resource_claims:
            return [], Status(Code.UNSCHEDULABLE, "pods with dra resource claims are not signable")
        return [], None

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not self.enabled or not pod.resource_claims:
            return None
        try:
            self.pod_claims(pod)
        except ClaimNotCreated as err:
            return _unresolvable(str(err))
        return None

    def pod_claims(self, pod: PodInfo) -> list[ResourceClaim]:
        """upstream's ``foreachPodResourceClaim``: the pod's claims, each existing, not being
        deleted and, when made from a template, the pod's own; raises ``ClaimNotCreated``."""
        out = []
        for ref in claim_names(pod):
            claim = self.manager.get_claim(pod.namespace, ref.claim_name)
            if claim is None:
                raise ClaimNotCreated(f'could not find ResourceClaim "{pod.namespace}/{ref.claim_name}"')
            if claim.meta.deletion_timestamp is not None:
                raise ClaimNotCreated(f'resourceclaim "{claim.name}" is being deleted')
            if ref.must_check_owner and not any(o.controller and o.uid == pod.uid for o in claim.meta.owner_references):
                raise ClaimNotCreated(f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod "
                                      f"{pod.namespace}/{pod.name} (Pod is not owner)")
            out.append(claim)
        return out

    # -- PreFilter ------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, _SKIP
        if not pod.resource_claims and not (self.features.enable_dra_extended_resource and pod.requests.requests.scalar):
            state.write(STATE, _NO_CLAIMS)
            return None, _SKIP
        s = DraState()
        state.write(STATE, s)
        try:
            claims = self.pod_claims(pod) if pod.resource_claims else []
        except ClaimNotCreated as err:
            return None, _unresolvable(str(err))
        s.user_claims = len(claims)
        if self.features.enable_dra_extended_resource:
            backed = backed_resources(pod, self.manager.device_class_for)
            if backed is not None:
                s.backed = backed
                extended = self._find_extended_claim(pod) or special_claim(pod)
                claims.append(extended)
                s.initial_extended_uid = extended.meta.uid
        if not claims:
            return None, _SKIP
        s.claims = claims
        s.available_on = [None] * len(claims)
        s.allocations = [None] * len(claims)
        to_allocate = 0
        ext = s.extended_index()
        binding_checked = (self.features.enable_dra_device_binding_conditions
                           and self.features.enable_dra_resource_claim_device_status)
        for index, claim in enumerate(claims):
            allocation = claim.allocation
            if allocation is not None:
                if allocation.node_selector is not None:
                    s.available_on[index] = allocation.node_selector.compiled
                if binding_checked and self._binding_failed(claim):
                    s.available_on[index] = _NOWHERE  # unavailable on every node: PostFilter may deallocate it
                continue
            to_allocate += 1
            if self.manager.pending_allocation(claim.meta.uid) is not None:
                return None, _unresolvable(f"resource claim {claim.namespace}/{claim.name} is in the process of being allocated")
            if index == ext:
                continue
            status = self._check_requests(claim)
            if status is not None:
                return None, status
        s.has_selectors = any(sel is not None for sel in s.available_on)
        s.prioritized = any(r.first_available for c in claims for r in c.spec.requests)
        s.epoch_mark, s.touch_mark = self.manager.epoch, len(self.manager.touched)
        if s.backed is None:
            s.plain_claims = [claims[i] for i in s.to_allocate()]
            s.signature = tuple(spec_signature(c) for c in s.plain_claims)
        if to_allocate:
            s.allocator = Allocator(self.allocator_features, self.manager.allocated_state(), self.manager,
                                    self.manager.slice_index(), self.cel_cache)
        return None, None

    def _binding_failed(self, claim: ResourceClaim) -> bool:
        """upstream's Filter check of an allocated claim: a binding failure condition is true, or its
        binding conditions are not met and the binding timeout has passed since its allocation."""
        allocation = claim.allocation
        if allocation is None or not any(r.binding_conditions for r in allocation.devices):
            return False
        doc = self.manager.raw_claim(claim)
        if doc is None:
            return False
        try:
            ready = claim_ready(doc)
        except BindingConditionError:
            return True
        return not ready and claim_timed_out(doc, self.binding_timeout, timestamp_clock(self.handle))

    def _deadline(self) -> float | None:
        """DRASchedulerFilterTimeout: when one node's allocation must end (``time.monotonic``)."""
        if not self.features.enable_dra_scheduler_filter_timeout or self.filter_timeout <= 0:
            return None
        return time.monotonic() + self.filter_timeout

    def _check_requests(self, claim: ResourceClaim) -> Status | None:
        for request in claim.spec.requests:
            if request.exactly is not None:
                status = self._check_class(request.exactly.device_class_name, request.name)
                if status is not None:
                    return status
            elif request.first_available:
                if not self.features.enable_dra_prioritized_list:
                    return _unresolvable(f"resource claim {claim.namespace}/{claim.name}, request {request.name}: "
                                         "has subrequests, but the DRAPrioritizedList feature is disabled")
                for sub in request.first_available:
                    status = self._check_class(sub.device_class_name, f"{request.name}/{sub.name}")
                    if status is not None:
                        return status
            else:
                return _unresolvable(f"resource claim {claim.namespace}/{claim.name}, request {request.name}: "
                                     "unknown request type")
        return None

    def _check_class(self, class_name: str, request: str) -> Status | None:
        if not class_name:
            return Status(Code.ERROR, f"request {request}: unsupported request type")
        if self.manager.get(class_name) is None:
            return _unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    def _find_extended_claim(self, pod: PodInfo) -> ResourceClaim | None:
        """The extended-resource claim an earlier cycle created for the pod, if any."""
        claim = self.manager.extended_claim_of(pod.uid)
        if claim is None:
            return None
        owners = tuple((o.name, o.uid, o.controller) for o in claim.meta.owner_references)
        if claim.namespace == pod.namespace and is_extended_claim_of(pod, claim.meta.annotations, owners):
            return claim
        return None

    # -- Filter -----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s = state.get(STATE)
        if s is None:
            return Status(Code.ERROR, f"error reading {NAME!r} from cycle-state: not found")
        if s.empty():
            return None
        node = node_info.node
        plain = s.plain_claims
        if plain is not None:  # the usual case: user claims only, nothing allocated by an earlier pod's Reserve
            return self._filter_plain(s, node, plain)
        node_claim: ResourceClaim | None = None
        node_allocation = NodeAllocation([])
        ext = s.extended_claim()
        if ext is not None and s.backed is not None:
            if ext.spec.requests:  # made by an earlier cycle: PostFilter deletes it, then try anew
                return _unresolvable("cannot schedule extended resource claim")
            try:
                needed = node_requests(s.backed, node.allocatable.scalar, self.manager.device_class_for)
            except NodeCannotFit:
                return _unresolvable("cannot fit resource")
            if (needed or not s.no_user_claim()) and ext.allocation is None:
                node_claim, requests, mappings = node_extended_claim(ext, pod, needed, self.manager.device_class_for)
                node_allocation.extended_claim = node_claim
                node_allocation.extended_requests = requests
                node_allocation.mappings = mappings
        if node_claim is None and s.no_user_claim():
            return None
        unavailable = []
        for index, claim in enumerate(s.claims):
            selector = s.available_on[index]
            if selector is not None and not selector.matches(node.labels, node.name):
                unavailable.append(index)
        if s.allocator is not None:
            ext_index = s.extended_index()
            to_allocate = []
            pending = []
            for index in s.to_allocate():
                claim = s.claims[index]
                if index == ext_index and node_claim is not None:
                    claim = node_claim
                allocation = s.allocations[index]
                if allocation is not None:
                    pending.append(allocation)
                    continue
                to_allocate.append(claim)
            try:
                results = s.allocator.allocate(node, to_allocate, self._deadline())
            except AllocationTimeout:
                return _timed_out(node.name)
            except NodeAllocationError as err:
                return _unresolvable(str(err))
            except AllocationError as err:
                return Status.as_error(err)
            if results is None or len(results) != len(to_allocate):
                return _CANNOT_ALLOCATE
            node_allocation.results = [*results, *pending] if pending else results
        if unavailable:
            s.unavailable.update(unavailable)
            return _NOT_AVAILABLE
        if s.allocator is not None:
            s.node_allocations[node.name] = node_allocation
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        """Every candidate row: verdicts kept across pods of one claim shape (``verdicts.py``) where
        the claims are plain; otherwise ``filter`` row by row."""
        table = snapshot.table
        size = table.size
        s = state.get(STATE)
        if not self.enabled or s is None or s.empty():
            return NodeVerdicts.all_pass(size)
        infos = snapshot.node_infos
        m = self.manager
        claims = s.plain_claims
        if claims is None and s.no_user_claim() and m.epoch == s.epoch_mark:
            ext = s.extended_claim()
            if ext is not None and not ext.spec.requests and ext.allocation is None:
                return self._filter_extended(state, s, pod, snapshot, candidates[:size])
        if claims is None or s.signature is None or m.epoch != s.epoch_mark:
            return self._filter_rows(state, pod, infos, candidates[:size], size)
        unavailable = self._selector_failures(s, table, candidates[:size], size) if s.has_selectors else None
        if s.allocator is None:  # every claim allocated: only where their devices are
            if unavailable is None:
                return NodeVerdicts.all_pass(size)
            return NodeVerdicts(unavailable.astype(np.int32), [_NOT_AVAILABLE])
        rows_of = table.node_derived((NAME, "rows"), partial(_rows_by_name, infos, size))
        entry = table.node_derived((NAME, "verdicts", s.signature), partial(VerdictRows, size, s.epoch_mark, s.touch_mark))
        entry.catch_up(s.epoch_mark, m.touched, s.touch_mark, rows_of)
        if len(claims) == len(s.claims):  # no allocated claim of its own: the score is the shape's too
            s.verdicts = entry
        ok = entry.ok[:size]
        codes = np.zeros(size, dtype=np.int32)
        statuses = [_CANNOT_ALLOCATE]
        errors: list[tuple[int, Status]] = []
        for row in np.flatnonzero((ok == UNKNOWN) & candidates[:size]).tolist():
            info = infos[row]
            if info is None:
                continue
            try:
                results = s.allocator.allocate(info.node, claims, self._deadline())
            except AllocationTimeout:
                errors.append((row, _timed_out(info.node.name)))
                continue
            except NodeAllocationError as err:
                errors.append((row, _unresolvable(str(err))))
                continue
            except AllocationError as err:
                errors.append((row, Status.as_error(err)))
                continue
            if results is None or len(results) != len(claims):
                ok[row] = DOES_NOT_FIT
            else:
                ok[row] = FITS
                s.node_allocations[info.node.name] = NodeAllocation(results)
        codes[ok == DOES_NOT_FIT] = 1
        if unavailable is not None:  # a claim elsewhere, on a node where the rest would fit
            statuses.append(_NOT_AVAILABLE)
            codes[unavailable & (codes == 0)] = len(statuses)
        for row, status in errors:
            statuses.append(status)
            codes[row] = len(statuses)
        return NodeVerdicts(codes, statuses)

    @staticmethod
    def _selector_failures(s: DraState, table: NodeTableView, candidates: BoolArray, size: int) -> BoolArray:
        """Rows where an allocated claim's node selector does not match (and the claims that
        failed somewhere among the candidates, for PostFilter)."""
        failing = np.zeros(size, dtype=bool)
        for index, selector in enumerate(s.available_on):
            if selector is None:
                continue
            fails = ~table.selector_mask(selector)[:size]
            if (fails & candidates).any():
                s.unavailable.add(index)
            failing |= fails
        return failing

    def _filter_rows(self, state: CycleState, pod: PodInfo, infos: Sequence[NodeInfo | None], candidates: BoolArray,
                     size: int) -> NodeVerdicts:
        codes = np.zeros(size, dtype=np.int32)
        statuses: list[Status] = []
        index: dict[tuple[Code, tuple[str, ...]], int] = {}
        for row in np.flatnonzero(candidates).tolist():
            info = infos[row]
            if info is None:
                continue
            status = self.filter(state, pod, info)
            if status is not None:
                key = (status.code, status.reasons)
                if key not in index:
                    statuses.append(status)
                    index[key] = len(statuses)
                codes[row] = index[key]
        return NodeVerdicts(codes, statuses)

    def _filter_extended(self, state: CycleState, s: DraState, pod: PodInfo, snapshot: SnapshotView,
                         candidates: BoolArray) -> NodeVerdicts:
        """Only DRA-backed extended resources: nodes grouped by which of them they lack (those the
        claim must ask devices for), one node claim per group, verdicts kept per group's claim."""
        table = snapshot.table
        size = table.size
        infos = snapshot.node_infos
        ext = s.extended_claim()
        backed = s.backed or {}
        class_for = self.manager.device_class_for
        names = sorted(r for r, q in backed.items() if q and is_dra_extended_resource(r))
        if ext is None or s.allocator is None or any(class_for(r) is None for r in names) or len(names) > 60:
            return self._filter_rows(state, pod, infos, candidates, size)
        lacking = np.zeros(size, dtype=np.int64)
        for k, name in enumerate(names):
            alloc, _ = table.scalar_columns(name)
            lacking |= (alloc[:size] <= 0).astype(np.int64) << k
        rows_of = table.node_derived((NAME, "rows"), partial(_rows_by_name, infos, size))
        codes = np.zeros(size, dtype=np.int32)
        statuses = [_CANNOT_ALLOCATE]
        errors: list[tuple[int, Status]] = []
        for key in np.unique(lacking[candidates]).tolist():
            if key == 0:
                continue  # every resource from a device plugin here: NodeResourcesFit's
            needed = {name: backed[name] for k, name in enumerate(names) if key >> k & 1}
            node_claim, requests, mappings = node_extended_claim(ext, pod, needed, class_for)
            signature = ("extended", spec_signature(node_claim))
            entry = table.node_derived((NAME, "verdicts", signature), partial(VerdictRows, size, s.epoch_mark, s.touch_mark))
            entry.catch_up(s.epoch_mark, self.manager.touched, s.touch_mark, rows_of)
            group = candidates & (lacking == key)
            ok = entry.ok[:size]
            for row in np.flatnonzero(group & (ok == UNKNOWN)).tolist():
                info = infos[row]
                if info is None:
                    continue
                try:
                    results = s.allocator.allocate(info.node, [node_claim], self._deadline())
                except AllocationTimeout:
                    errors.append((row, _timed_out(info.node.name)))
                    continue
                except NodeAllocationError as err:
                    errors.append((row, _unresolvable(str(err))))
                    continue
                except AllocationError as err:
                    errors.append((row, Status.as_error(err)))
                    continue
                if results is None or len(results) != 1:
                    ok[row] = DOES_NOT_FIT
                else:
                    ok[row] = FITS
                    s.node_allocations[info.node.name] = NodeAllocation(results, node_claim, requests, mappings)
            codes[group & (ok == DOES_NOT_FIT)] = 1
        for row, status in errors:
            statuses.append(status)
            codes[row] = len(statuses)
        return NodeVerdicts(codes, statuses)

    def node_allocation(self, s: DraState, node_name: str, state: CycleState | None = None,
                        pod: PodInfo | None = None) -> NodeAllocation | None:
        """Filter's allocation on a node, computed now for a node whose verdict was kept from an
        earlier pod (same claims, same devices in use there: the same answer)."""
        found = s.node_allocations.get(node_name)
        if found is not None or s.allocator is None:
            return found
        info = self.handle.snapshot().get(node_name)
        if info is None:
            return None
        if s.plain_claims is None:  # the extended-resource claim: Filter's per-node form records it
            if state is None or pod is None or self.filter(state, pod, info) is not None:
                return None
            return s.node_allocations.get(node_name)
        try:
            results = s.allocator.allocate(info.node, s.plain_claims, self._deadline())
        except AllocationError:
            return None
        if results is None or len(results) != len(s.plain_claims):
            return None
        found = s.node_allocations[node_name] = NodeAllocation(results)
        return found

    def _filter_plain(self, s: DraState, node: Node, claims: list[ResourceClaim]) -> Status | None:
        """Filter for user claims only with no in-flight allocation of their own: the allocated
        claims' node selectors, then one allocator call for the rest; results stay unbuilt until
        Reserve reads the chosen node's."""
        unavailable = None
        if s.has_selectors:
            for index, selector in enumerate(s.available_on):
                if selector is not None and not selector.matches(node.labels, node.name):
                    if unavailable is None:
                        unavailable = []
                    unavailable.append(index)
        results = None
        if s.allocator is not None:
            try:
                results = s.allocator.allocate(node, claims, self._deadline())
            except AllocationTimeout:
                return _timed_out(node.name)
            except NodeAllocationError as err:
                return _unresolvable(str(err))
            except AllocationError as err:
                return Status.as_error(err)
            if results is None or len(results) != len(claims):
                return _CANNOT_ALLOCATE
        if unavailable:
            s.unavailable.update(unavailable)
            return _NOT_AVAILABLE
        if results is not None:
            s.node_allocations[node.name] = NodeAllocation(results)
        return None

    # -- Score ----------------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        s = state.get(STATE)
        if not self.enabled or not self.features.enable_dra_prioritized_list or s is None or not s.prioritized:
            return 0
        found = self.node_allocation(s, node_info.node.name, state, pod)
        return 0 if found is None else compute_score(s, found)

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        s = state.get(STATE)
        if s is None or not s.prioritized or not self.enabled or not self.features.enable_dra_prioritized_list:
            return _zeros(len(rows))  # only firstAvailable requests score
        out = np.zeros(len(rows), dtype=np.int64)
        infos = snapshot.node_infos
        kept = s.verdicts.score if s.verdicts is not None else None
        for k, row in enumerate(rows.tolist()):
            if kept is not None and row < len(kept) and kept[row] >= 0:
                out[k] = kept[row]
                continue
            info = infos[row]
            found = self.node_allocation(s, info.node.name, state, pod) if info is not None else None
            if found is not None:
                out[k] = compute_score(s, found)
                if kept is not None and row < len(kept):
                    kept[row] = out[k]
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        s = state.get(STATE)
        if not self.enabled or s is None or s.empty():
            return scores  # all zero
        return default_normalize_score(scores, False)

    # -- Reserve / Unreserve -------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s = state.get(STATE)
        if s is None:
            return Status(Code.ERROR, f"error reading {NAME!r} from cycle-state: not found")
        if s.empty() or s.allocator is None:
            return None
        to_allocate = s.to_allocate()
        if not to_allocate:
            return None
        ext_index = s.extended_index()
        needs_user_claims = any(i != ext_index for i in to_allocate)
        found = self.node_allocation(s, node_name, state, pod)
        if found is None or not found.results:
            if not needs_user_claims:
                return None  # the extended resources come from a device plugin on this node
            return Status(Code.ERROR, "claim allocation not found for node")
        if len(found.results) != len(to_allocate):
            return Status(Code.ERROR, f"internal error, have {len(found.results)} allocations, "
                                      f"{len(to_allocate)} claims to allocate, want {len(to_allocate)} claims")
        for k, index in enumerate(to_allocate):
            allocation = found.results[k]
            s.allocations[index] = allocation
            claim: ResourceClaim | None = s.claims[index]
            if index == ext_index:
                claim = found.extended_claim
            if claim is None:
                continue
            self.manager.signal_pending_allocation(claim.meta.uid, claim.with_status(
                type(claim.status)(allocation, claim.status.reserved_for)))
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        if not self.enabled:
            return
        s = state.get(STATE)
        if s is None or s.empty():
            return
        client = self.writer()
        for claim in s.claims[: s.user_claims]:
            self.manager.remove_pending_allocation(claim.meta.uid)
            if claim.allocation is not None and reserved_for(claim, pod) and client is not None:
                raw = self.manager.raw_claim(claim)
                if raw is not None:
                    client.unreserve_resource_claim(raw, pod.uid)
        ext = s.extended_claim()
        if ext is None:
            return
        self.manager.remove_pending_allocation(s.initial_extended_uid)
        if ext.name != SPECIAL_CLAIM_NAME and client is not None:
            raw = self.manager.raw_claim(ext)
            if raw is not None:
                client.delete_resource_claim_in_background(raw)

    # -- PostFilter ------------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status | None]:
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE, "plugin disabled")
        s = state.get(STATE)
        if s is None:
            return None, Status(Code.ERROR, f"error reading {NAME!r} from cycle-state: not found")
        if s.empty():
            return None, Status(Code.UNSCHEDULABLE, ERR_NOTHING_TO_DEALLOCATE)
        ext = s.extended_claim()
        ext_index = s.extended_index()
        client = self.writer()
        for index in sorted(s.unavailable):  # upstream picks one at random; the first, here
            claim = s.claims[index]
            if index == ext_index:
                if ext is not None and ext.name != SPECIAL_CLAIM_NAME:
                    break
                continue
            refs = claim.status.reserved_for
            if not refs or (len(refs) == 1 and refs[0].uid == pod.uid):
                raw = self.manager.raw_claim(claim)
                if client is None or raw is None:
                    return None, Status(Code.ERROR, "deallocating a claim needs a cluster client that writes claims")
                client.deallocate_resource_claim(raw)
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        if ext is not None and ext.name != SPECIAL_CLAIM_NAME:
            raw = self.manager.raw_claim(ext)
            if client is None or raw is None:
                return None, Status(Code.ERROR, "deleting a claim needs a cluster client that writes claims")
            # In the background: PostFilter runs in the scheduling cycle, which never waits on the API.
            client.delete_resource_claim_in_background(raw)
            return None, Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
        return None, Status(Code.UNSCHEDULABLE, "still not schedulable")


def compute_score(s: DraState, found: NodeAllocation) -> int:
    """upstream's ``computeScore``: ``8 - i`` for each claim request served by its ``i``-th subrequest."""
    score = 0
    unallocated = 0
    for claim in s.claims:
        allocation = claim.allocation
        requests: set[str] | None = None
        if allocation is None:
            if unallocated >= len(found.results):
                return score
            picks = getattr(found.results, "picks", None)
            if picks is not None:  # the allocator's picks: no result built for a node only scored
                requests = {p.request for p in picks[unallocated].devices if "/" in p.request}
            else:
                allocation = found.results[unallocated]
            unallocated += 1
        chosen = requests if requests is not None else (
            {r.request for r in allocation.devices if "/" in r.request} if allocation is not None else set())
        if not chosen:
            continue
        for request in claim.spec.requests:
            if request.exactly is not None:
                continue
            for i, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score


def new(args: DynamicResourcesArgs | None, handle: Handle) -> DynamicResources:
    plugin = DynamicResources(handle, handle.features)
    if args is not None:
        args.check_gates(handle.features)
        plugin.binding_timeout = args.binding_timeout_seconds()
        plugin.filter_timeout = args.filter_timeout_seconds()
    return plugin


def _rows_by_name(infos: Sequence[NodeInfo | None], size: int) -> dict[str, int]:
    return {info.node.name: row for row, info in enumerate(infos[:size]) if info is not None}


_ZEROS: dict[int, IntArray] = {}


def _zeros(size: int) -> IntArray:
    """A shared read-only array of ``size`` zero scores (the usual answer: a pod without claims)."""
    found = _ZEROS.get(size)
    if found is None:
        if len(_ZEROS) > 64:
            _ZEROS.clear()
        found = np.zeros(size, dtype=np.int64)
        found.flags.writeable = False
        _ZEROS[size] = found
    return found
