"""The extended-resource claim as a record: the in-memory stand-in PreFilter uses, each
node's variant with its requests (Filter), and the document PreBind creates."""

from __future__ import annotations

from ...framework.handle import JSONObject
from ...objects.dra import ResourceClaim, ResourceClaimSpec, parse_claim_spec
from ...objects.dra.meta import ObjectMeta
from ...objects.pod import OwnerRef, PodInfo
from .extended import ClassResolver, ExtendedRequest, RequestMapping, requests_and_mappings
from .names import API_VERSION, EXTENDED_RESOURCE_CLAIM_ANNOTATION, RESOURCE_CLAIM, SPECIAL_CLAIM_NAME

__all__ = ["special_claim", "node_extended_claim", "claim_document", "requests_json"]

_SPECS: dict[tuple[ExtendedRequest, ...], ResourceClaimSpec] = {}


def special_claim(pod: PodInfo) -> ResourceClaim:
    """``<extended-resources>``: no requests yet, a temporary uid, the pod as controller."""
    meta = ObjectMeta(
        name=SPECIAL_CLAIM_NAME,
        namespace=pod.namespace,
        uid=f"extended-resources/{pod.uid}",
        generate_name=f"{pod.name}-extended-resources-",
        annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        owner_references=(OwnerRef("Pod", pod.name, pod.uid, True, "v1"),),
    )
    return ResourceClaim(meta, ResourceClaimSpec())


def requests_json(requests: list[ExtendedRequest]) -> list[JSONObject]:
    return [{"name": r.name, "exactly": {"deviceClassName": r.device_class, "allocationMode": "ExactCount", "count": r.count}}
            for r in requests]


def _spec(requests: list[ExtendedRequest]) -> ResourceClaimSpec:
    key = tuple(requests)
    found = _SPECS.get(key)
    if found is None:
        if len(_SPECS) > 4096:
            _SPECS.clear()
        found = _SPECS[key] = parse_claim_spec({"devices": {"requests": requests_json(requests)}}, "spec")
    return found


def node_extended_claim(claim: ResourceClaim, pod: PodInfo, needed: dict[str, int],
                        class_for: ClassResolver) -> tuple[ResourceClaim, list[ExtendedRequest], list[RequestMapping]]:
    """The claim with the requests this node needs, and the containers' mappings to them."""
    raw = pod.raw or {}
    spec = raw.get("spec")
    requests, mappings = requests_and_mappings(spec if isinstance(spec, dict) else {}, needed, class_for)
    return ResourceClaim(claim.meta, _spec(requests), claim.status), requests, mappings


def claim_document(claim: ResourceClaim, requests: list[ExtendedRequest]) -> JSONObject:
    """What PreBind POSTs: the pod's claim with ``generateName`` (no name, uid or status)."""
    meta = claim.meta
    return {
        "apiVersion": API_VERSION,
        "kind": RESOURCE_CLAIM,
        "metadata": {
            "namespace": meta.namespace,
            "generateName": meta.generate_name,
            "annotations": dict(meta.annotations),
            "ownerReferences": [{"apiVersion": o.api_version, "kind": o.kind, "name": o.name, "uid": o.uid,
                                 "controller": o.controller} for o in meta.owner_references],
        },
        "spec": {"devices": {"requests": requests_json(requests)}},
    }
