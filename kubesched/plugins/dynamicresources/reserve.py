"""DynamicResources' Reserve and Unreserve (upstream's ``Reserve`` and ``Unreserve``).

Reserve marks the chosen node's allocations in flight (the devices stay taken for the
next pods until PreBind's writes come back through the informer); Unreserve gives them
back, takes the pod out of ``reservedFor`` of its allocated claims and deletes an
extended-resource claim PreBind created. Apart from the plugin because it is the
bookkeeping between the scheduling and binding cycles.
"""

from __future__ import annotations

from ...framework import Code, CycleState, Status
from ...objects.dra import ResourceClaim
from ...objects.pod import PodInfo
from .binding import BindingMixin
from .filtering import FilterMixin
from .names import NAME, SPECIAL_CLAIM_NAME
from .prefilter import group_pending
from .state import STATE

__all__ = ["ReserveMixin", "reserved_for"]


def reserved_for(claim: ResourceClaim, pod: PodInfo) -> bool:
    return any(ref.uid == pod.uid for ref in claim.status.reserved_for)


class ReserveMixin(FilterMixin, BindingMixin):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s = state.get(STATE)
        if s is None:
            return Status(Code.ERROR, f"error reading {NAME!r} from cycle-state: not found")
        if s.empty():
            return None
        shared_group = group_pending(state) if self.features.enable_dra_workload_resource_claims else None
        for index, pending in s.shared.items():  # one more sharer of a pending allocation
            s.allocations[index] = pending.allocation
            self.manager.signal_pending_allocation(pending.meta.uid, pending)
        if s.allocator is None:
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
            if shared_group is not None and index != ext_index:
                shared_group.pending.add(claim.meta.uid)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        if not self.enabled:
            return
        s = state.get(STATE)
        if s is None or s.empty():
            return
        client = self.writer()
        shared_group = group_pending(state) if self.features.enable_dra_workload_resource_claims else None
        for claim in s.claims[: s.user_claims]:
            if self.manager.remove_pending_allocation(claim.meta.uid) and shared_group is not None:
                shared_group.pending.discard(claim.meta.uid)
            # A claim reserved for the pod's PodGroup stays so: other members may still use it
            # (PostFilter takes the group off when none of them is placed).
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
