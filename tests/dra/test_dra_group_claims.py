"""Upstream's resourceclaim helper tables for PodGroup-owned claims (DRAWorkloadResourceClaims):
TestResourceClaimIsFor, TestIsReservedForPod, TestNameFromPodGroup, TestBindTo."""

from __future__ import annotations

import pytest

from kubesched.objects.dra.claim import ResourceClaim, ResourceClaimConsumerReference, ResourceClaimSpec, ResourceClaimStatus
from kubesched.objects.dra.meta import ObjectMeta
from kubesched.objects.pod import OwnerRef, PodInfo, PodResourceClaim, parse_pod
from kubesched.objects.podgroup import PodGroup, PodGroupResourceClaim
from kubesched.plugins.dynamicresources.claims import ClaimNotCreated
from kubesched.plugins.dynamicresources.group_claims import (
    ClaimBindingError, bind_to, is_for_pod, is_for_pod_group, is_reserved_for_pod, name_from_pod_group,
)

NS = "kube-system"


def pod(name: str, uid: str, group: str | None = None, namespace: str = NS) -> PodInfo:
    spec: dict[str, object] = {"containers": [{"name": "c", "image": "i"}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return parse_pod({"metadata": {"namespace": namespace, "name": name, "uid": uid}, "spec": spec})


def group(name: str, uid: str, namespace: str = NS, claims: tuple[PodGroupResourceClaim, ...] = (),
          statuses: tuple[tuple[str, str | None], ...] = ()) -> PodGroup:
    return PodGroup(namespace=namespace, name=name, uid=uid, generation=1, resource_version="1", min_count=None,
                    resource_claims=claims, resource_claim_statuses=statuses)


def claim(name: str, namespace: str = NS, owners: tuple[OwnerRef, ...] = (),
          reserved: tuple[ResourceClaimConsumerReference, ...] = ()) -> ResourceClaim:
    return ResourceClaim(ObjectMeta(name=name, namespace=namespace, uid=f"uid-{name}", owner_references=owners),
                         ResourceClaimSpec(), ResourceClaimStatus(reserved_for=reserved))


POD_NOT_OWNER = ("podNotOwner", "1")
GROUP_NOT_OWNER = group("podGroupNotOwner", "2")
POD_OWNER = ("podOwner", "3")
GROUP_OWNER = group("podGroupOwner", "4")
CLAIM_NO_OWNER = claim("claimNoOwner")
CLAIM_WITH_OWNER = claim("claimWithOwner", owners=(OwnerRef("", "", "3", True),))
CLAIM_GROUP_OWNER = claim("claimWithPodGroupOwner",
                          owners=(OwnerRef("PodGroup", "podGroupOwner", "4", True, "scheduling.k8s.io/v1alpha2"),))
CLAIM_GROUP_OWNER_V25 = claim("claimWithPodGroupOwner",
                              owners=(OwnerRef("PodGroup", "podGroupOwner", "4", True, "scheduling.k8s.io/v25"),))
USER_CLAIM = claim("userClaimWithOwner", "user-namespace", owners=(OwnerRef("", "", "3", True),))
USER_GROUP_CLAIM = claim("userClaimWithPodGroupOwner", "user-namespace", owners=(OwnerRef("", "", "4", True),))


@pytest.mark.parametrize("who, group_name, rc, accept, error", [
    (POD_OWNER, None, CLAIM_WITH_OWNER, False, None),
    (POD_NOT_OWNER, None, CLAIM_WITH_OWNER, False,
     "ResourceClaim kube-system/claimWithOwner was not created for Pod kube-system/podNotOwner (Pod is not owner)"),
    (POD_OWNER, None, CLAIM_NO_OWNER, False,
     "ResourceClaim kube-system/claimNoOwner was not created for Pod kube-system/podOwner (Pod is not owner)"),
    (POD_OWNER, None, USER_CLAIM, False,
     "ResourceClaim user-namespace/userClaimWithOwner is not in the same namespace as Pod kube-system/podOwner"),
    (POD_OWNER, "podGroupOwner", CLAIM_GROUP_OWNER, True, None),
    (POD_OWNER, "podGroupOwner", CLAIM_GROUP_OWNER_V25, True, None),
    (POD_OWNER, "podGroupNotOwner", CLAIM_GROUP_OWNER, True,
     "ResourceClaim kube-system/claimWithPodGroupOwner was not created for Pod kube-system/podOwner "
     "(neither Pod nor PodGroup podGroupNotOwner is the owner)"),
    (POD_OWNER, "podGroupOwner", CLAIM_NO_OWNER, True,
     "ResourceClaim kube-system/claimNoOwner was not created for Pod kube-system/podOwner "
     "(neither Pod nor PodGroup podGroupOwner is the owner)"),
    (POD_OWNER, "podGroupOwner", USER_GROUP_CLAIM, True,
     "ResourceClaim user-namespace/userClaimWithPodGroupOwner is not in the same namespace as Pod kube-system/podOwner"),
], ids=["owned", "other-pod", "no-owner", "different-namespace", "owned-by-podgroup",
        "owned-by-podgroup-other-api-version", "other-podgroup", "no-podgroup-owner", "different-podgroup-namespace"])
def test_claim_is_for_pod(who: tuple[str, str], group_name: str | None, rc: ResourceClaim, accept: bool,
                          error: str | None) -> None:
    assert is_for_pod(pod(*who, group=group_name), rc, accept) == error


@pytest.mark.parametrize("pg, rc, error", [
    (GROUP_OWNER, CLAIM_GROUP_OWNER, None),
    (GROUP_NOT_OWNER, CLAIM_GROUP_OWNER, "ResourceClaim kube-system/claimWithPodGroupOwner was not created for "
                                         "PodGroup kube-system/podGroupNotOwner (PodGroup is not owner)"),
    (GROUP_OWNER, CLAIM_NO_OWNER, "ResourceClaim kube-system/claimNoOwner was not created for "
                                  "PodGroup kube-system/podGroupOwner (PodGroup is not owner)"),
    (GROUP_OWNER, USER_GROUP_CLAIM, "ResourceClaim user-namespace/userClaimWithPodGroupOwner is not in the same "
                                    "namespace as PodGroup kube-system/podGroupOwner"),
], ids=["owned", "other-pod", "no-owner", "different-namespace"])
def test_claim_is_for_pod_group(pg: PodGroup, rc: ResourceClaim, error: str | None) -> None:
    assert is_for_pod_group(pg, rc) == error


def _group_ref(name: str, uid: str) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference("podgroups", name, uid, "scheduling.k8s.io")


def _uid_ref(uid: str) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference("", "", uid, "")


RES_NONE = claim("claimNoReservation")
RES_POD = claim("claimWithReservation", reserved=(_uid_ref("p-res"),))
RES_GROUP = claim("claimWithPodGroupReservation", reserved=(_group_ref("podGroupReserved", "g-res"),))
RES_PODS = claim("claimWithMultipleReservations", reserved=(_uid_ref("p-res"), _uid_ref("p-other")))
RES_GROUPS = claim("claimWithMultiplePodGroupReservations",
                   reserved=(_group_ref("podGroupReserved", "g-res"), _group_ref("podGroupOtherReserved", "g-other")))
RES_BOTH = claim("claimWithReservationsForPodAndPodGroup", reserved=(_uid_ref("p-res"), _uid_ref("g-res")))


@pytest.mark.parametrize("uid, group_name, rc, accept, expected", [
    ("p-not", None, RES_NONE, False, False),
    ("p-res", None, RES_POD, False, True),
    ("p-not", None, RES_POD, False, False),
    ("p-res", None, RES_PODS, False, True),
    ("p-not", None, RES_PODS, False, False),
    ("p-not", "podGroupReserved", RES_GROUP, True, True),
    ("p-not", "podGroupReserved", RES_GROUP, False, False),
    ("p-res", "podGroupReserved", RES_BOTH, True, True),
    ("p-not", "podGroupNotReserved", RES_POD, True, False),
    ("p-not", "podGroupReserved", RES_GROUPS, True, True),
    ("p-not", "podGroupNotReserved", RES_GROUPS, True, False),
], ids=["not-reserved", "reserved-for-pod", "reserved-for-other-pod", "multiple-reservations-including-pod",
        "multiple-reservations-excluding-pod", "reserved-for-podgroup", "podgroup-disabled",
        "reserved-for-pod-and-podgroup", "reserved-for-other-podgroup", "multiple-reservations-including-podgroup",
        "multiple-reservations-excluding-podgroup"])
def test_claim_is_reserved_for_pod(uid: str, group_name: str | None, rc: ResourceClaim, accept: bool,
                                   expected: bool) -> None:
    assert is_reserved_for_pod(pod("p", uid, group=group_name), rc, accept) is expected


TEST_GROUP = "test-podgroup"


@pytest.mark.parametrize("entry, statuses, expected", [
    (PodGroupResourceClaim("", resource_claim_name="existing-claim"), (), ("existing-claim", False)),
    (PodGroupResourceClaim("template-claim", resource_claim_template_name="template-claim-template"),
     (("template-claim", "created-claim"),), ("created-claim", True)),
], ids=["resource-claim-name-set", "resource-claim-template-name-set-and-status-found"])
def test_name_from_pod_group(entry: PodGroupResourceClaim, statuses: tuple[tuple[str, str | None], ...],
                             expected: tuple[str, bool]) -> None:
    assert name_from_pod_group(group(TEST_GROUP, "u", "default", statuses=statuses), entry) == expected


@pytest.mark.parametrize("entry, statuses, error", [
    (PodGroupResourceClaim("template-claim", resource_claim_template_name="template-claim-template"),
     (("other-claim", "other-created-claim"),), "PodGroup default/test-podgroup: ResourceClaim not created yet"),
    (PodGroupResourceClaim("invalid-claim"), (),
     "PodGroup default/test-podgroup, spec.resourceClaim invalid-claim: none of the supported fields are set"),
], ids=["resource-claim-template-name-set-but-status-not-found", "neither-resource-claim-name-nor-template-name-set"])
def test_name_from_pod_group_fails(entry: PodGroupResourceClaim, statuses: tuple[tuple[str, str | None], ...],
                                   error: str) -> None:
    with pytest.raises(ClaimNotCreated) as info:
        name_from_pod_group(group(TEST_GROUP, "u", "default", statuses=statuses), entry)
    assert str(info.value) == error


BIND_NS = "my-namespace"
BIND_POD = pod("my-pod", "pod-uid", group="my-podgroup", namespace=BIND_NS)
POD_REF = ResourceClaimConsumerReference("pods", "my-pod", "pod-uid", "")
GROUP_REF = ResourceClaimConsumerReference("podgroups", "my-podgroup", "podgroup-uid", "scheduling.k8s.io")
BY_NAME = PodResourceClaim("my-claim", resource_claim_name="my-resource-claim")
BY_TEMPLATE = PodResourceClaim("my-claim", resource_claim_template_name="my-resource-claim")


def bind_group(*claims: PodGroupResourceClaim) -> PodGroup:
    return group("my-podgroup", "podgroup-uid", BIND_NS, claims=claims)


def g_name(name: str, claim_name: str = "my-resource-claim") -> PodGroupResourceClaim:
    return PodGroupResourceClaim(name, resource_claim_name=claim_name)


@pytest.mark.parametrize("pg, entry, expected", [
    (None, BY_NAME, POD_REF),
    (None, BY_TEMPLATE, POD_REF),
    (bind_group(g_name("my-claim")), BY_NAME, GROUP_REF),
    (bind_group(PodGroupResourceClaim("my-claim", resource_claim_template_name="my-resource-claim")), BY_TEMPLATE,
     GROUP_REF),
    (bind_group(g_name("not-my-claim"), g_name("nor-my-claim")), BY_NAME, POD_REF),
    (bind_group(g_name("not-my-claim"), g_name("nor-my-claim"), g_name("my-claim")), BY_NAME, GROUP_REF),
    (bind_group(g_name("not-my-claim")), BY_NAME, POD_REF),
    (bind_group(g_name("my-claim", "not-my-resource-claim")), BY_NAME, POD_REF),
    (bind_group(PodGroupResourceClaim("my-claim", resource_claim_template_name="not-my-resource-claim")), BY_TEMPLATE,
     POD_REF),
], ids=["Pod claim with ResourceClaimName", "Pod claim with ResourceClaimTemplateName",
        "Pod claim with ResourceClaimName matching PodGroup", "Pod claim with ResourceClaimTemplateName matching PodGroup",
        "No matching claim in PodGroup", "Find matching claim in PodGroup", "Claim name mismatch",
        "Claim resourceClaimName mismatch", "Claim resourceClaimTemplateName mismatch"])
def test_bind_to(pg: PodGroup | None, entry: PodResourceClaim, expected: ResourceClaimConsumerReference) -> None:
    assert bind_to(BIND_POD, pg, entry) == expected


@pytest.mark.parametrize("pg, entry, error", [
    (None, PodResourceClaim("my-claim"), "Pod my-namespace/my-pod claim my-claim: none of the supported fields are set"),
    (group("my-podgroup", "", "not-my-namespace"), BY_NAME,
     "Pod my-namespace/my-pod belongs to PodGroup my-namespace/my-podgroup, not PodGroup not-my-namespace/my-podgroup"),
    (group("not-my-podgroup", "", BIND_NS), BY_NAME,
     "Pod my-namespace/my-pod belongs to PodGroup my-namespace/my-podgroup, not PodGroup my-namespace/not-my-podgroup"),
], ids=["unsupported API in Pod", "Wrong PodGroup namespace for Pod", "Wrong PodGroup name for Pod"])
def test_bind_to_fails(pg: PodGroup | None, entry: PodResourceClaim, error: str) -> None:
    with pytest.raises(ClaimBindingError) as info:
        bind_to(BIND_POD, pg, entry)
    assert str(info.value) == error
