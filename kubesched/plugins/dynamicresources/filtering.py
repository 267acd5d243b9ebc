"""DynamicResources' Filter on one node (upstream's ``Filter``).

An allocated claim's ``nodeSelector`` must match the node (``resourceclaim not available
on the node``); the claims still to allocate (the node's variant of the extended-resource
claim among them) are allocated together (``cannot allocate all claims``) and the result
kept for Score and Reserve. ``node_allocation`` gives that result for a node whose verdict
the batch Filter kept from an earlier pod. Apart from the plugin because it is the
decision itself, which the batch form (``filter_nodes.py``), Score and Reserve build on.
"""

from __future__ import annotations

import time

from ...framework import Code, CycleState, Handle, Status
from ...framework.features import Features
from ...objects.dra import DeviceClass, ResourceClaim
from ...objects.node import Node
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ...structured import AllocationError, AllocationTimeout, Allocator, NodeAllocationError
from ...structured.results import AllocationResults, ClaimPicks
from .extended import ExtendedRequest, NodeCannotFit, RequestMapping, node_requests
from .extended_claim import node_extended_claim
from .manager import DraManager
from .names import NAME
from .state import STATE, DraState, NodeAllocation
from .statuses import CANNOT_ALLOCATE, NOT_AVAILABLE, timed_out, unresolvable
from .verdicts import FITS

__all__ = ["FilterMixin"]


class FilterMixin:
    handle: Handle
    manager: DraManager
    features: Features
    enabled: bool
    filter_timeout: float

    def _deadline(self) -> float | None:
        """DRASchedulerFilterTimeout: when one node's allocation must end (``time.monotonic``)."""
        if not self.features.enable_dra_scheduler_filter_timeout or self.filter_timeout <= 0:
            return None
        return time.monotonic() + self.filter_timeout

    # -- Filter -----------------------------------------------------------------------------------
    def _allocate(self, allocator: Allocator, node: Node, claims: list[ResourceClaim]) -> AllocationResults | Status:
        """All of ``claims`` allocated together on the node, or the node's status: the filter
        timeout, an error of the node's own devices (unresolvable), an error of the claims
        (an error, as upstream returns it), or ``cannot allocate all claims``."""
        try:
            results = allocator.allocate(node, claims, self._deadline())
        except AllocationTimeout:
            return timed_out(node.name)
        except NodeAllocationError as err:
            return unresolvable(str(err))
        except AllocationError as err:
            return Status.as_error(err)
        if results is None or len(results) != len(claims):
            return CANNOT_ALLOCATE
        return results

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
                return unresolvable("cannot schedule extended resource claim")
            try:
                needed = node_requests(s.backed, node.allocatable.scalar, self.manager.device_class_for)
            except NodeCannotFit:
                return unresolvable("cannot fit resource")
            if (needed or not s.no_user_claim()) and ext.allocation is None:
                node_claim, requests, mappings = self._extended_variant(s, ext, pod, needed)
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
            results = self._allocate(s.allocator, node, to_allocate)
            if isinstance(results, Status):
                return results
            node_allocation.results = [*results, *pending] if pending else results
        if unavailable:
            s.unavailable.update(unavailable)
            return NOT_AVAILABLE
        if s.allocator is not None:
            s.node_allocations[node.name] = node_allocation
        return None

    def _extended_variant(self, s: DraState, ext: ResourceClaim, pod: PodInfo, needed: dict[str, int]
                          ) -> tuple[ResourceClaim, list[ExtendedRequest], list[RequestMapping]]:
        """The extended-resource claim's variant for nodes that must provide ``needed`` through
        DRA, with its requests and the containers' mappings: built once per cycle and set of
        resources (every node of a group asks the same)."""
        key = tuple(sorted(needed.items()))
        found = s.extended_variants.get(key)
        if found is None:
            found = s.extended_variants[key] = node_extended_claim(ext, pod, needed, self.manager.device_class_for)
        return found

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
            kept = self._kept_extended(s, info.node)
            if kept is not None:
                s.node_allocations[node_name] = kept
                return kept
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

    def _kept_extended(self, s: DraState, node: Node) -> NodeAllocation | None:
        """The node's allocation from the picks the batch Filter kept with its verdict (computed
        by an earlier pod whose claim's classes select the same devices, on the same devices in
        use: the same devices fit), with each request's class the one this pod's claim names;
        None when nothing was kept for the node."""
        groups = s.extended_groups
        allocator = s.allocator
        if groups is None or allocator is None:
            return None
        row = groups.rows.get(node.name)
        if row is None or row >= len(groups.lacking):
            return None
        group = groups.by_key.get(int(groups.lacking[row]))
        if group is None or row >= len(group.verdicts.ok) or group.verdicts.ok[row] != FITS:
            return None
        kept = group.verdicts.picks.get(row)
        if kept is None or len(kept) != 1:
            return None
        classes: dict[str, DeviceClass | None] = {}
        for request in group.claim.spec.requests:
            if request.exactly is None:
                return None
            classes[request.name] = self.manager.get(request.exactly.device_class_name)
        picks = kept[0]
        if any(name not in classes for name, _ in picks.chosen):
            return None
        mine = ClaimPicks(picks.devices, tuple((name, classes[name]) for name, _ in picks.chosen), picks.selected_subs)
        results = AllocationResults(allocator.features, node, [group.claim], [mine])
        return NodeAllocation(results, group.claim, group.requests, group.mappings)

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
            allocated = self._allocate(s.allocator, node, claims)
            if isinstance(allocated, Status):
                return allocated
            results = allocated
        if unavailable:
            s.unavailable.update(unavailable)
            return NOT_AVAILABLE
        if results is not None:
            s.node_allocations[node.name] = NodeAllocation(results)
        return None
