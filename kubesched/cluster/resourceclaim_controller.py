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
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence

from ..framework.handle import JSONObject
from ..objects.pod import PodInfo
from ..plugins.dynamicresources.claims import deterministic_name, generate_name
from ..plugins.dynamicresources.names import API_VERSION, POD_CLAIM_NAME_ANNOTATION, RESOURCE_CLAIM

__all__ = ["instantiate_template_claims", "claim_uid"]


def _meta(doc: Mapping[str, object]) -> Mapping[str, object]:
    meta = doc.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def claim_uid(namespace: str, name: str) -> str:
    """A stable uid for a claim simulate creates (the API server would make a random one)."""
    digest = hashlib.sha1(f"resourceclaim/{namespace}/{name}".encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def instantiate_template_claims(pods: Sequence[PodInfo], templates: Sequence[JSONObject],
                                claims: Sequence[JSONObject]) -> tuple[list[dict[str, object]], dict[str, PodInfo]]:
    """The claims to create for ``pods`` (bound pods first, then the queue, in order), and
    the pods that recorded one, by uid, with their ``status.resourceClaimStatuses`` updated."""
    by_template: dict[tuple[str, str], JSONObject] = {}
    for template in templates:
        meta = _meta(template)
        by_template[(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))] = template
    taken: dict[str, set[str]] = {}
    for claim in claims:
        meta = _meta(claim)
        taken.setdefault(str(meta.get("namespace") or "default"), set()).add(str(meta.get("name") or ""))
    created: list[dict[str, object]] = []
    updated: dict[str, PodInfo] = {}
    for pod in pods:
        recorded = {name for name, _ in pod.resource_claim_statuses}
        statuses = list(pod.resource_claim_statuses)
        for entry in pod.resource_claims:
            template_name = entry.resource_claim_template_name
            if template_name is None or entry.resource_claim_name is not None or entry.name in recorded:
                continue
            found = by_template.get((pod.namespace, template_name))
            if found is None:
                continue
            generate = generate_name(pod.name, entry.name)
            names = taken.setdefault(pod.namespace, set())
            name = deterministic_name(pod.namespace, generate, names)
            names.add(name)
            created.append(_claim(pod, entry.name, generate, name, found))
            statuses.append((entry.name, name))
        if len(statuses) != len(pod.resource_claim_statuses):
            updated[pod.uid] = _with_statuses(pod, statuses)
    return created, updated


def _map(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _claim(pod: PodInfo, entry: str, generate: str, name: str, template: JSONObject) -> dict[str, object]:
    spec = _map(template.get("spec"))
    claim_meta = _map(spec.get("metadata"))
    annotations = dict(_map(claim_meta.get("annotations")))
    annotations[POD_CLAIM_NAME_ANNOTATION] = entry
    meta: dict[str, object] = {
        "name": name,
        "generateName": generate,
        "namespace": pod.namespace,
        "uid": claim_uid(pod.namespace, name),
        "annotations": annotations,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                             "controller": True, "blockOwnerDeletion": True}],
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
