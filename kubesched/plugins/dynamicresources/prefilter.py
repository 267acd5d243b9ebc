"""DynamicResources' PreEnqueue and PreFilter (upstream's ``PreEnqueue`` and ``PreFilter``).

PreEnqueue: every claim the pod names must exist (a template's claim made by the
resourceclaim controller), not be going away, and be the pod's own when made from a
template. PreFilter skips pods without claims and without DRA-backed extended resources;
otherwise it gathers the claims (the extended-resource claim last), notes where allocated
ones are available, refuses a claim in flight for another pod or a request whose
DeviceClass is missing, and builds the cycle's allocator over the devices in use. Apart
from the plugin because it is the cycle's setup, shared by every later extension point
through ``DraState``.
"""

from __future__ import annotations

from ...framework import Code, CycleState, Handle, PreFilterResult, SnapshotView, Status
from ...framework.features import Features
from ...objects.dra import ResourceClaim
from ...objects.dra.claim import ResourceClaimConsumerReference
from ...objects.pod import PodInfo
from ...cel import CelCache
from ...structured import Allocator, Features as AllocatorFeatures
from ...structured.pools import spec_signature
from .binding_conditions import BindingConditionError, claim_ready, claim_timed_out, timestamp_clock
from .claims import ClaimNotCreated, claim_names
from .group_claims import ClaimBindingError, bind_to, is_for_pod
from .extended import backed_resources, is_extended_claim_of
from .extended_claim import special_claim
from .manager import DraManager
from .state import GROUP_STATE, NO_CLAIMS, STATE, DraState, GroupPending
from .statuses import NOWHERE, SKIP, unresolvable

__all__ = ["PreFilterMixin", "group_pending"]


def group_pending(state: CycleState) -> GroupPending | None:
    """This pod-group cycle's pending claims (made on first use); None outside a group cycle."""
    group_state = state.pod_group_cycle_state
    if group_state is None:
        return None
    found = group_state.get(GROUP_STATE)
    if found is None:
        found = GroupPending()
        group_state.write(GROUP_STATE, found)
    return found

class PreFilterMixin:
    handle: Handle
    manager: DraManager
    features: Features
    enabled: bool
    allocator_features: AllocatorFeatures
    cel_cache: CelCache
    binding_timeout: float

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not self.enabled or not pod.resource_claims:
            return None
        try:
            self.pod_claims(pod)
        except ClaimNotCreated as err:
            return unresolvable(str(err))
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
            if ref.must_check_owner:
                problem = is_for_pod(pod, claim, self.features.enable_dra_workload_resource_claims)
                if problem is not None:
                    raise ClaimNotCreated(problem)
            out.append(claim)
        return out

    def claim_bindings(self, pod: PodInfo) -> list[ResourceClaimConsumerReference] | None:
        """upstream's ``podResourceClaimBindings``: the consumer each of the pod's claims is
        reserved for, in claim order (None with DRAWorkloadResourceClaims off); raises
        ``ClaimNotCreated`` (the PodGroup is unknown) or ``ClaimBindingError``."""
        if not self.features.enable_dra_workload_resource_claims:
            return None
        group = None
        if pod.pod_group_name is not None:
            group = self.handle.pod_group_manager.pod_group(pod.namespace, pod.pod_group_name)
            if group is None:
                raise ClaimNotCreated(f'podgroups.scheduling.k8s.io "{pod.pod_group_name}" not found')
        by_entry = {entry.name: bind_to(pod, group, entry) for entry in pod.resource_claims}
        return [by_entry[ref.entry] for ref in claim_names(pod)]

    # -- PreFilter ------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.resource_claims and (not pod.requests.requests.scalar or not self.features.enable_dra_extended_resource):
            if self.enabled:  # the usual pod: nothing to do at any later extension point either
                state.write(STATE, NO_CLAIMS)
            return None, SKIP
        if not self.enabled:
            return None, SKIP
        s = DraState()
        state.write(STATE, s)
        try:
            claims = self.pod_claims(pod) if pod.resource_claims else []
        except ClaimNotCreated as err:
            return None, unresolvable(str(err))
        s.user_claims = len(claims)
        if claims:
            try:
                s.bindings = self.claim_bindings(pod)
            except (ClaimNotCreated, ClaimBindingError) as err:
                return None, unresolvable(str(err))
        if self.features.enable_dra_extended_resource:
            backed = backed_resources(pod, self.manager.device_class_for)
            if backed is not None:
                s.backed = backed
                extended = self._find_extended_claim(pod) or special_claim(pod)
                claims.append(extended)
                s.initial_extended_uid = extended.meta.uid
        if not claims:
            return None, SKIP
        s.claims = claims
        s.available_on = [None] * len(claims)
        s.allocations = [None] * len(claims)
        to_allocate = 0
        ext = s.extended_index()
        binding_checked = (self.features.enable_dra_device_binding_conditions
                           and self.features.enable_dra_resource_claim_device_status)
        shared_group = group_pending(state) if self.features.enable_dra_workload_resource_claims else None
        for index, claim in enumerate(claims):
            if shared_group is not None and claim.allocation is None and claim.meta.uid in shared_group.pending:
                pending = self.manager.pending_allocation(claim.meta.uid)
                if pending is not None:  # an earlier pod of this group cycle allocated it: reuse that
                    s.shared[index] = claim
                    claims[index] = claim = pending
            allocation = claim.allocation
            if allocation is not None:
                if allocation.node_selector is not None:
                    s.available_on[index] = allocation.node_selector.compiled
                if binding_checked and self._binding_failed(claim):
                    s.available_on[index] = NOWHERE  # unavailable on every node: PostFilter may deallocate it
                continue
            to_allocate += 1
            if self.manager.pending_allocation(claim.meta.uid) is not None:
                return None, unresolvable(f"resource claim {claim.namespace}/{claim.name} is in the process of being allocated")
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

    def _check_requests(self, claim: ResourceClaim) -> Status | None:
        for request in claim.spec.requests:
            if request.exactly is not None:
                status = self._check_class(request.exactly.device_class_name, request.name)
                if status is not None:
                    return status
            elif request.first_available:
                if not self.features.enable_dra_prioritized_list:
                    return unresolvable(f"resource claim {claim.namespace}/{claim.name}, request {request.name}: "
                                         "has subrequests, but the DRAPrioritizedList feature is disabled")
                for sub in request.first_available:
                    status = self._check_class(sub.device_class_name, f"{request.name}/{sub.name}")
                    if status is not None:
                        return status
            else:
                return unresolvable(f"resource claim {claim.namespace}/{claim.name}, request {request.name}: "
                                     "unknown request type")
        return None

    def _check_class(self, class_name: str, request: str) -> Status | None:
        if not class_name:
            return Status(Code.ERROR, f"request {request}: unsupported request type")
        if self.manager.get(class_name) is None:
            return unresolvable(f"request {request}: device class {class_name} does not exist")
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
