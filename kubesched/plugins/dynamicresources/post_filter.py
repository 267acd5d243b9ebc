"""DynamicResources' PostFilter (upstream's ``PostFilter``).

When no node fits: deallocate one claim that was unavailable on some node and that no
other pod uses, or delete the extended-resource claim an earlier cycle created, so that
the next attempt starts afresh; otherwise ``no new claims to deallocate`` (no claims) or
``still not schedulable``.

As upstream, the write is done before PostFilter returns and its answer decides the
status: ``deallocation of ResourceClaim completed`` (``deletion of ResourceClaim
completed``) when the API server took it, an error status with the API's message when
not (the framework then stops: DefaultPreemption does not run for this attempt).

Which claim: upstream iterates its ``unavailableClaims`` map, so it takes the first
candidate in a random order, and that order also decides whether a real extended-resource
claim met first is deleted instead of a claim being deallocated. ``run`` does the same
with a random order (the cluster client's ``random_choices``); ``simulate`` must be
reproducible and takes the claims in the pod's order (``spec.resourceClaims``, then the
extended-resource claim), so deallocation is preferred to deleting that claim there.
Apart from the plugin because it only runs after a failed cycle.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from ...framework import Code, CycleState, NodeToStatusReader, PostFilterResult, Status
from ...framework.handle import JSONObject
from ...objects.dra import ResourceClaim
from ...objects.pod import PodInfo
from .binding import BindingMixin
from .claims import ClaimNotCreated
from .group_claims import is_for_pod_group, is_reserved_for_pod, name_from_pod_group
from .names import ERR_NOTHING_TO_DEALLOCATE, NAME, SPECIAL_CLAIM_NAME
from .state import DraState, STATE

__all__ = ["PostFilterMixin", "RandomChoices", "DEALLOCATED", "DELETED", "STILL_NOT_SCHEDULABLE",
           "UNRESERVED_FOR_POD_GROUP"]

DEALLOCATED = "deallocation of ResourceClaim completed"
DELETED = "deletion of ResourceClaim completed"
STILL_NOT_SCHEDULABLE = "still not schedulable"
UNRESERVED_FOR_POD_GROUP = "ResourceClaim unreserved for PodGroup"
_NO_WRITER = "{} a ResourceClaim needs a cluster client that writes claims"


@runtime_checkable
class RandomChoices(Protocol):
    """A cluster client in which upstream's random choices are made at random (``run``'s)."""

    def random_choices(self) -> random.Random: ...


def _deallocatable(claim: ResourceClaim, pod: PodInfo) -> bool:
    """Reserved for nobody, or for this pod alone."""
    refs = claim.status.reserved_for
    return not refs or (len(refs) == 1 and refs[0].uid == pod.uid)


def _not_found(claim: ResourceClaim) -> Status:
    """The claim left the store (deleted meanwhile): the API server's NotFound, as upstream's write gets."""
    return Status(Code.ERROR, f'resourceclaims.resource.k8s.io "{claim.name}" not found')


class PostFilterMixin(BindingMixin):
    _choices: random.Random | None = None
    _choices_checked: bool = False

    def _claim_order(self, s: DraState) -> list[int]:
        """The unavailable claims in the order PostFilter tries them (see the module's docstring)."""
        order = sorted(s.unavailable)
        if not self._choices_checked:
            client = self.handle.client
            self._choices = client.random_choices() if isinstance(client, RandomChoices) else None
            self._choices_checked = True
        if self._choices is not None and len(order) > 1:
            self._choices.shuffle(order)
        return order

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
        for index in self._claim_order(s):
            claim = s.claims[index]
            if index == ext_index:
                if ext is not None and ext.name != SPECIAL_CLAIM_NAME:
                    break  # deleted below
                continue
            if _deallocatable(claim, pod):
                return None, self._deallocate(claim)
        if ext is not None and ext.name != SPECIAL_CLAIM_NAME:
            return None, self._delete(ext)
        if self.features.enable_dra_workload_resource_claims:
            status = self._unreserve_pod_group_claims(pod)
            if status is not None:
                return None, status
        return None, Status(Code.UNSCHEDULABLE, STILL_NOT_SCHEDULABLE)

    def _unreserve_pod_group_claims(self, pod: PodInfo) -> Status | None:
        """upstream's ``unreservePodGroupClaims``: while none of the pod's group is placed (bound
        or assumed), take the group out of ``reservedFor`` of the first of its allocated claims
        reserved for it, so that claim can be deallocated and allocated afresh."""
        if pod.pod_group_name is None:
            return None
        manager = self.handle.pod_group_manager
        group_state = manager.pod_group_states().get(pod.namespace, pod.pod_group_name)
        if group_state is None:
            return Status(Code.ERROR, f'podgroup "{pod.namespace}/{pod.pod_group_name}" not found')
        if group_state.scheduled_pods_count() > 0:
            return None
        group = manager.pod_group(pod.namespace, pod.pod_group_name)
        if group is None:
            return Status(Code.ERROR, f'podgroups.scheduling.k8s.io "{pod.pod_group_name}" not found')
        client = self.writer()
        for entry in group.resource_claims:
            try:
                claim_name, must_check_owner = name_from_pod_group(group, entry)
            except ClaimNotCreated as err:
                return Status(Code.ERROR, str(err))
            if claim_name is None:
                continue
            claim = self.manager.get_claim(group.namespace, claim_name)
            if claim is None:
                return Status(Code.ERROR, f'resourceclaim.resource.k8s.io "{claim_name}" not found')
            if must_check_owner and is_for_pod_group(group, claim) is not None:
                continue
            if claim.allocation is None or not is_reserved_for_pod(pod, claim, True):
                continue
            raw = self.manager.raw_claim(claim)
            if raw is None or client is None:
                continue  # upstream logs a failed patch and goes on to the next claim
            try:
                client.unreserve_resource_claim(raw, group.uid)
            except Exception:  # the API server's refusal: upstream logs it and goes on
                continue
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, UNRESERVED_FOR_POD_GROUP)
        return None

    def _deallocate(self, claim: ResourceClaim) -> Status:
        """upstream's ``UpdateStatus`` with allocation, reservations and device statuses cleared."""
        client = self.writer()
        if client is None:
            return Status(Code.ERROR, _NO_WRITER.format("deallocating"))
        return self._write(claim, client.deallocate_resource_claim, DEALLOCATED)

    def _delete(self, claim: ResourceClaim) -> Status:
        """upstream's ``deleteClaim`` of an extended-resource claim an earlier cycle created."""
        client = self.writer()
        if client is None:
            return Status(Code.ERROR, _NO_WRITER.format("deleting"))
        return self._write(claim, client.delete_resource_claim, DELETED)

    def _write(self, claim: ResourceClaim, write: Callable[[JSONObject], None], done: str) -> Status:
        raw = self.manager.raw_claim(claim)
        if raw is None:
            return _not_found(claim)
        try:
            write(raw)
        except Exception as err:  # the API server's refusal (or no answer): upstream's statusError
            return Status.as_error(err)
        return Status(Code.UNSCHEDULABLE, done)
