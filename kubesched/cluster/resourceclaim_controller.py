"""The resourceclaim controller's part (upstream's ``pkg/controller/resourceclaim``, which runs in
kube-controller-manager, not in the scheduler), for clusters without one (``simulate``).

Before the first scheduling cycle, every ``spec.resourceClaims`` entry that names a
template and has no entry in the pod's ``status.resourceClaimStatuses`` gets its claim,
as the controller would have made it: in the pod's namespace, the template's
``spec.spec``, its ``spec.metadata`` labels and annotations plus
``resource.kubernetes.io/pod-claim-name``, the pod as controlling owner; named by
``claims.deterministic_name`` in place of the API server's random suffix. The pod then
records it in ``status.resourceClaimStatuses``. A template that does not exist makes no
claim: the pod waits (``ResourceClaim not created yet``), as it would in a cluster.

With DRAWorkloadResourceClaims, a PodGroup's template entries get one claim each first
(upstream's ``syncPodGroup``): owned by the PodGroup, named from the group's name, recorded
in the group's ``status.resourceClaimStatuses``. A member's entry that matches one of its
group's (upstream's ``BindTo`` names the PodGroup) records the group's claim instead of
getting one of its own; a member whose PodGroup is unknown gets nothing for such entries.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections.abc import Mapping, Sequence

from ..framework.handle import JSONObject
from ..objects.pod import PodInfo, PodResourceClaim
from ..objects.podgroup import PodGroup
from ..plugins.dynamicresources.claims import deterministic_name, generate_name
from ..plugins.dynamicresources.group_claims import POD_GROUP_KIND, POD_GROUPS, ClaimBindingError, bind_to
from ..plugins.dynamicresources.names import API_VERSION, POD_CLAIM_NAME_ANNOTATION, RESOURCE_CLAIM

__all__ = ["instantiate_template_claims", "instantiate_pod_group_claims", "claim_uid"]

GroupKey = tuple[str, str]  # (namespace, name)


def _meta(doc: Mapping[str, object]) -> Mapping[str, object]:
    meta = doc.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def claim_uid(namespace: str, name: str) -> str:
    """A stable uid for a claim simulate creates (the API server would make a random one)."""
    digest = hashlib.sha1(f"resourceclaim/{namespace}/{name}".encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _templates(templates: Sequence[JSONObject]) -> dict[tuple[str, str], JSONObject]:
    out: dict[tuple[str, str], JSONObject] = {}
    for template in templates:
        meta = _meta(template)
        out[(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))] = template
    return out


def _taken(claims: Sequence[JSONObject]) -> dict[str, set[str]]:
    taken: dict[str, set[str]] = {}
    for claim in claims:
        meta = _meta(claim)
        taken.setdefault(str(meta.get("namespace") or "default"), set()).add(str(meta.get("name") or ""))
    return taken


def _group_claim_of(claims: Sequence[JSONObject], group: PodGroup, entry: str) -> str | None:
    """upstream's ``findPodGroupResourceClaim``: a claim the group controls made for ``entry``."""
    for claim in claims:
        meta = _meta(claim)
        if str(meta.get("namespace") or "default") != group.namespace:
            continue
        owners = meta.get("ownerReferences")
        controlled = isinstance(owners, list) and any(
            isinstance(o, Mapping) and o.get("controller") is True and o.get("uid") == group.uid for o in owners)
        if controlled and _map(meta.get("annotations")).get(POD_CLAIM_NAME_ANNOTATION) == entry:
            return str(meta.get("name") or "")
    return None


def instantiate_pod_group_claims(groups: Sequence[PodGroup], templates: Sequence[JSONObject],
                                 claims: Sequence[JSONObject]) -> tuple[list[dict[str, object]], dict[GroupKey, PodGroup]]:
    """The claims to create for the PodGroups' template entries, and the groups that recorded
    one, by (namespace, name), with their ``status.resourceClaimStatuses`` updated."""
    by_template = _templates(templates)
    taken = _taken(claims)
    created: list[dict[str, object]] = []
    updated: dict[GroupKey, PodGroup] = {}
    for group in groups:
        recorded = {name for name, _ in group.resource_claim_statuses}
        statuses = list(group.resource_claim_statuses)
        for entry in group.resource_claims:
            template_name = entry.resource_claim_template_name
            if template_name is None or entry.resource_claim_name is not None or entry.name in recorded:
                continue
            name = _group_claim_of(claims, group, entry.name)
            if name is None:
                found = by_template.get((group.namespace, template_name))
                if found is None:
                    continue  # upstream retries until the template exists: the members wait
                generate = generate_name(group.name, entry.name)
                names = taken.setdefault(group.namespace, set())
                name = deterministic_name(group.namespace, generate, names)
                names.add(name)
                owner = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": POD_GROUP_KIND, "name": group.name,
                         "uid": group.uid, "controller": True}
                created.append(_claim(group.namespace, owner, entry.name, generate, name, found))
            statuses.append((entry.name, name))
        if len(statuses) != len(group.resource_claim_statuses):
            updated[(group.namespace, group.name)] = _group_with_statuses(group, statuses)
    return created, updated


def _group_with_statuses(group: PodGroup, statuses: list[tuple[str, str | None]]) -> PodGroup:
    raw = group.raw
    if raw is not None:
        status = dict(raw.get("status") or {})
        status["resourceClaimStatuses"] = [{"name": n, "resourceClaimName": c} if c is not None else {"name": n}
                                           for n, c in statuses]
        raw = {**raw, "status": status}
    return dataclasses.replace(group, resource_claim_statuses=tuple(statuses), raw=raw)


def _group_claim_name(pod: PodInfo, entry: PodResourceClaim,
                      groups: Mapping[GroupKey, PodGroup]) -> tuple[bool, str | None]:
    """(the entry resolves to the pod's PodGroup, the group's claim for it if made yet)."""
    if pod.pod_group_name is None:
        return False, None
    group = groups.get((pod.namespace, pod.pod_group_name))
    if group is None:
        return True, None  # upstream's controller cannot read the PodGroup: nothing for the pod
    try:
        consumer = bind_to(pod, group, entry)
    except ClaimBindingError:
        return True, None
    if consumer.resource != POD_GROUPS:
        return False, None
    return True, dict(group.resource_claim_statuses).get(entry.name)


def instantiate_template_claims(pods: Sequence[PodInfo], templates: Sequence[JSONObject],
                                claims: Sequence[JSONObject], groups: Mapping[GroupKey, PodGroup] | None = None,
                                ) -> tuple[list[dict[str, object]], dict[str, PodInfo]]:
    """The claims to create for ``pods`` (bound pods first, then the queue, in order), and
    the pods that recorded one, by uid, with their ``status.resourceClaimStatuses`` updated.
    ``groups`` (DRAWorkloadResourceClaims on): the PodGroups, whose claims members share."""
    by_template = _templates(templates)
    taken = _taken(claims)
    created: list[dict[str, object]] = []
    updated: dict[str, PodInfo] = {}
    for pod in pods:
        recorded = {name for name, _ in pod.resource_claim_statuses}
        statuses = list(pod.resource_claim_statuses)
        for entry in pod.resource_claims:
            template_name = entry.resource_claim_template_name
            if template_name is None or entry.resource_claim_name is not None or entry.name in recorded:
                continue
            if groups is not None:
                for_group, group_claim = _group_claim_name(pod, entry, groups)
                if for_group:
                    if group_claim is not None:
                        statuses.append((entry.name, group_claim))
                    continue
            found = by_template.get((pod.namespace, template_name))
            if found is None:
                continue
            generate = generate_name(pod.name, entry.name)
            names = taken.setdefault(pod.namespace, set())
            name = deterministic_name(pod.namespace, generate, names)
            names.add(name)
            owner = {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                     "controller": True, "blockOwnerDeletion": True}
            created.append(_claim(pod.namespace, owner, entry.name, generate, name, found))
            statuses.append((entry.name, name))
        if len(statuses) != len(pod.resource_claim_statuses):
            updated[pod.uid] = _with_statuses(pod, statuses)
    return created, updated


def _map(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _claim(namespace: str, owner: dict[str, object], entry: str, generate: str, name: str,
           template: JSONObject) -> dict[str, object]:
    spec = _map(template.get("spec"))
    claim_meta = _map(spec.get("metadata"))
    annotations = dict(_map(claim_meta.get("annotations")))
    annotations[POD_CLAIM_NAME_ANNOTATION] = entry
    meta: dict[str, object] = {
        "name": name,
        "generateName": generate,
        "namespace": namespace,
        "uid": claim_uid(namespace, name),
        "annotations": annotations,
        "ownerReferences": [owner],
    }
    labels = _map(claim_meta.get("labels"))
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": API_VERSION, "kind": RESOURCE_CLAIM, "metadata": meta,
            "spec": copy.deepcopy(spec.get("spec") or {})}


def _with_statuses(pod: PodInfo, statuses: list[tuple[str, str | None]]) -> PodInfo:
    raw = pod.raw
    if raw is not None:
        status = dict(raw.get("status") or {})
        status["resourceClaimStatuses"] = [{"name": n, "resourceClaimName": c} if c is not None else {"name": n}
                                           for n, c in statuses]
        raw = {**raw, "status": status}
    return pod.copy_with(resource_claim_statuses=tuple(statuses), raw=raw)
