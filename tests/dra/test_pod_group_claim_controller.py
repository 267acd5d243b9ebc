"""simulate's resourceclaim controller for PodGroups (DRAWorkloadResourceClaims; upstream's
syncPodGroup/handlePodGroupClaim and handleClaim's PodGroup branch)."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.resourceclaim_controller import instantiate_pod_group_claims, instantiate_template_claims
from kubesched.objects.pod import parse_pod
from kubesched.objects.podgroup import PodGroup, PodGroupResourceClaim

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpus", "namespace": "ml"},
            "spec": {"metadata": {"labels": {"team": "a"}}, "spec": {"devices": {"requests": []}}}}


def group(statuses: tuple[tuple[str, str | None], ...] = ()) -> PodGroup:
    return PodGroup(namespace="ml", name="train", uid="uid-train", generation=1, resource_version="1", min_count=2,
                    resource_claims=(PodGroupResourceClaim("gpu", resource_claim_template_name="gpus"),),
                    resource_claim_statuses=statuses, raw={"metadata": {"name": "train"}})


def member(name: str, entry: str = "gpu", template: str = "gpus", group_name: str | None = "train") -> Any:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}],
                            "resourceClaims": [{"name": entry, "resourceClaimTemplateName": template}]}
    if group_name is not None:
        spec["schedulingGroup"] = {"podGroupName": group_name}
    return parse_pod({"metadata": {"namespace": "ml", "name": name, "uid": f"uid-{name}"}, "spec": spec})


def test_a_podgroup_template_entry_gets_one_claim_owned_by_the_group_and_recorded_in_its_status() -> None:
    created, updated = instantiate_pod_group_claims([group()], [TEMPLATE], [])
    [claim] = created
    meta = claim["metadata"]
    assert meta["generateName"] == "train-gpu-"
    assert meta["ownerReferences"] == [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                        "name": "train", "uid": "uid-train", "controller": True}]
    assert meta["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert meta["labels"] == {"team": "a"}
    recorded = updated[("ml", "train")]
    assert recorded.resource_claim_statuses == (("gpu", meta["name"]),)
    assert recorded.raw is not None and recorded.raw["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": meta["name"]}]


def test_a_claim_the_group_already_owns_for_the_entry_is_recorded_not_made_again() -> None:
    existing = {"metadata": {"name": "train-gpu-abcde", "namespace": "ml",
                             "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                             "ownerReferences": [{"kind": "PodGroup", "uid": "uid-train", "controller": True}]}}
    created, updated = instantiate_pod_group_claims([group()], [TEMPLATE], [existing])
    assert created == []
    assert updated[("ml", "train")].resource_claim_statuses == (("gpu", "train-gpu-abcde"),)


def test_a_missing_template_makes_no_group_claim() -> None:
    assert instantiate_pod_group_claims([group()], [], []) == ([], {})


def test_a_member_records_its_groups_claim_and_gets_none_of_its_own() -> None:
    groups = {("ml", "train"): group((("gpu", "train-gpu-x"),))}
    created, updated = instantiate_template_claims([member("w0")], [TEMPLATE], [], groups)
    assert created == []
    assert updated["uid-w0"].resource_claim_statuses == (("gpu", "train-gpu-x"),)


def test_a_member_waits_while_its_groups_claim_is_not_made() -> None:
    assert instantiate_template_claims([member("w0")], [TEMPLATE], [], {("ml", "train"): group()}) == ([], {})


def test_a_member_whose_podgroup_is_unknown_gets_nothing() -> None:
    assert instantiate_template_claims([member("w0")], [TEMPLATE], [], {}) == ([], {})


def test_a_member_entry_the_group_does_not_declare_gets_the_pods_own_claim() -> None:
    created, _ = instantiate_template_claims([member("w0", entry="scratch")], [TEMPLATE], [],
                                             {("ml", "train"): group((("gpu", "train-gpu-x"),))})
    [claim] = created
    assert claim["metadata"]["ownerReferences"][0]["kind"] == "Pod"


def test_without_groups_every_pod_gets_its_own_claim() -> None:
    created, _ = instantiate_template_claims([member("w0")], [TEMPLATE], [])
    assert [c["metadata"]["ownerReferences"][0]["uid"] for c in created] == ["uid-w0"]
