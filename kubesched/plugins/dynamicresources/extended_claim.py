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
# Requests and mappings (shared, read-only lists) by the parts of the pod spec they come from.
_REQUESTS: dict[tuple[object, ...], tuple[list[ExtendedRequest], list[RequestMapping]]] = {}


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
    """The claim with the requests this node needs, and the containers' mappings to them (lists
    shared between pods of one shape: read them, never change them)."""
    raw = pod.raw or {}
    spec = raw.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    classes = tuple((name, cls.name if (cls := class_for(name)) is not None else None) for name in sorted(needed))
    # What the requests depend on: the containers (names, requests, restart policies), what the
    # node needs and the classes backing it. Pods of one workload ask the same: worked out once.
    key = (repr(spec.get("initContainers")), repr(spec.get("containers")), tuple(sorted(needed.items())), classes)
    found = _REQUESTS.get(key)
    if found is None:
        if len(_REQUESTS) > 4096:
            _REQUESTS.clear()
        found = _REQUESTS[key] = requests_and_mappings(spec, needed, class_for)
    requests, mappings = found
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
