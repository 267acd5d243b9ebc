"""Claims owned by a PodGroup (DRAWorkloadResourceClaims): upstream's resourceclaim helpers.

With the gate on, a pod's ``spec.resourceClaims`` entry that matches one of its PodGroup's
``spec.resourceClaims`` (same name and same claim or template name) resolves to the claim
made for, owned by and reserved for the whole group, so every member shares one allocation.
These helpers decide, as upstream's ``resourceclaim`` package does:

* ``name_from_pod_group``: a PodGroup entry's claim name (a named claim, or the one the
  controller recorded in the group's ``status.resourceClaimStatuses`` for a template).
* ``is_for_pod`` / ``is_for_pod_group``: whether a claim was made for the pod (or, when the
  group's owner is accepted, for the pod's PodGroup: matched by name, kind and API group,
  not UID, as upstream) or for the group; ``None`` when it was, else upstream's message.
* ``is_reserved_for_pod``: whether ``status.reservedFor`` names the pod, or its PodGroup.
* ``bind_to``: the consumer that a pod's entry reserves the claim for: the PodGroup when the
  group declares the same entry, else the pod.
"""

from __future__ import annotations

from ...objects.dra.claim import ResourceClaim, ResourceClaimConsumerReference
from ...objects.pod import PodInfo, PodResourceClaim
from ...objects.podgroup import PodGroup, PodGroupResourceClaim
from .claims import ClaimNotCreated

__all__ = [
    "SCHEDULING_GROUP",
    "POD_GROUPS",
    "POD_GROUP_KIND",
    "ClaimBindingError",
    "name_from_pod_group",
    "is_for_pod",
    "is_for_pod_group",
    "is_reserved_for_pod",
    "bind_to",
    "pod_group_consumer",
]

SCHEDULING_GROUP = "scheduling.k8s.io"
POD_GROUPS = "podgroups"
POD_GROUP_KIND = "PodGroup"
_UNSUPPORTED = "none of the supported fields are set"


class ClaimBindingError(Exception):
    """A pod's claim entry cannot be bound to a consumer; ``str`` is upstream's error."""


def name_from_pod_group(group: PodGroup, entry: PodGroupResourceClaim) -> tuple[str | None, bool]:
    """(claim name, must_check_owner) for a PodGroup entry; raises ``ClaimNotCreated``.

    ``None`` is a template entry the controller recorded without a claim (nothing needed)."""
    if entry.resource_claim_name is not None:
        return entry.resource_claim_name, False
    if entry.resource_claim_template_name is not None:
        for name, claim_name in group.resource_claim_statuses:
            if name == entry.name:
                return claim_name, True
        raise ClaimNotCreated(f"PodGroup {group.namespace}/{group.name}: ResourceClaim not created yet")
    raise ClaimNotCreated(f"PodGroup {group.namespace}/{group.name}, spec.resourceClaim {entry.name}: {_UNSUPPORTED}")


def _controller_uid(claim: ResourceClaim) -> str | None:
    for owner in claim.meta.owner_references:
        if owner.controller:
            return owner.uid
    return None


def _owned_by_pods_group(pod: PodInfo, claim: ResourceClaim) -> bool:
    if pod.pod_group_name is None:
        return False
    for owner in claim.meta.owner_references:
        if owner.controller:
            return (owner.name == pod.pod_group_name and owner.kind == POD_GROUP_KIND
                    and owner.api_version.startswith(SCHEDULING_GROUP + "/"))
    return False


def is_for_pod(pod: PodInfo, claim: ResourceClaim, accept_pod_group_owner: bool) -> str | None:
    """``None`` when the pod (or, if accepted, its PodGroup) controls the claim; else why not."""
    where = f"ResourceClaim {claim.meta.namespace}/{claim.meta.name}"
    if claim.meta.namespace != pod.namespace:
        return f"{where} is not in the same namespace as Pod {pod.namespace}/{pod.name}"
    if _controller_uid(claim) == pod.uid:
        return None
    if accept_pod_group_owner:
        if _owned_by_pods_group(pod, claim):
            return None
        return (f"{where} was not created for Pod {pod.namespace}/{pod.name} "
                f"(neither Pod nor PodGroup {pod.pod_group_name} is the owner)")
    return f"{where} was not created for Pod {pod.namespace}/{pod.name} (Pod is not owner)"


def is_for_pod_group(group: PodGroup, claim: ResourceClaim) -> str | None:
    """``None`` when the PodGroup controls the claim; else upstream's reason."""
    where = f"ResourceClaim {claim.meta.namespace}/{claim.meta.name}"
    if claim.meta.namespace != group.namespace:
        return f"{where} is not in the same namespace as PodGroup {group.namespace}/{group.name}"
    if _controller_uid(claim) != group.uid:
        return f"{where} was not created for PodGroup {group.namespace}/{group.name} (PodGroup is not owner)"
    return None


def is_reserved_for_pod(pod: PodInfo, claim: ResourceClaim, accept_pod_group_reservation: bool) -> bool:
    """Whether ``reservedFor`` names the pod by UID, or (if accepted) its PodGroup by name."""
    for consumer in claim.status.reserved_for:
        if consumer.uid == pod.uid:
            return True
        if (accept_pod_group_reservation and pod.pod_group_name is not None
                and consumer.api_group == SCHEDULING_GROUP and consumer.resource == POD_GROUPS
                and consumer.name == pod.pod_group_name):
            return True
    return False


def pod_group_consumer(group: PodGroup) -> ResourceClaimConsumerReference:
    """The ``reservedFor`` entry naming a PodGroup."""
    return ResourceClaimConsumerReference(POD_GROUPS, group.name, group.uid, SCHEDULING_GROUP)


def bind_to(pod: PodInfo, group: PodGroup | None, entry: PodResourceClaim) -> ResourceClaimConsumerReference:
    """Whom the pod's ``entry`` reserves its claim for; raises ``ClaimBindingError``."""
    if entry.resource_claim_name is None and entry.resource_claim_template_name is None:
        raise ClaimBindingError(f"Pod {pod.namespace}/{pod.name} claim {entry.name}: {_UNSUPPORTED}")
    if group is not None:
        if pod.pod_group_name is None:
            raise ClaimBindingError(f"Pod {pod.namespace}/{pod.name} does not belong to a PodGroup")
        if pod.namespace != group.namespace or pod.pod_group_name != group.name:
            raise ClaimBindingError(f"Pod {pod.namespace}/{pod.name} belongs to PodGroup {pod.namespace}/"
                                    f"{pod.pod_group_name}, not PodGroup {group.namespace}/{group.name}")
        for group_entry in group.resource_claims:
            if group_entry.resource_claim_name is None and group_entry.resource_claim_template_name is None:
                raise ClaimBindingError(f"PodGroup {group.namespace}/{group.name} claim {group_entry.name}: "
                                        f"{_UNSUPPORTED}")
            if (group_entry.name == entry.name
                    and group_entry.resource_claim_name == entry.resource_claim_name
                    and group_entry.resource_claim_template_name == entry.resource_claim_template_name):
                return pod_group_consumer(group)
    return ResourceClaimConsumerReference("pods", pod.name, pod.uid, "")
