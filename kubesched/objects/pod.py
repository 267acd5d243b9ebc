"""``PodInfo``: a pod parsed once into what scheduling reads."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from collections.abc import Callable, Mapping
from typing import Any

from .affinity import PodAffinity, TopologySpreadConstraint
from .annotations import NO_ANNOTATIONS, parse_annotations
from .errors import ObjectError
from .pod_spec import (
    HostPort,
    as_list,
    is_map,
    memo,
    normalized_image_name,
    parse_timestamp,
    remembered_timestamp,
    spec_parts,
    str_map,
)
from .resize import status_requests
from .resources import PodRequests
from .selectors import NodeSelector, PreferredSchedulingTerm
from .taints import Toleration
from .volumes import PodVolume, parse_pod_volumes

__all__ = ["HostPort", "OwnerRef", "PodInfo", "PodResourceClaim", "parse_pod", "parse_timestamp", "normalized_image_name"]


@dataclass(slots=True, frozen=True)
class PodResourceClaim:
    """One ``spec.resourceClaims`` entry: a claim by name, or one made from a template for the pod."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(slots=True, frozen=True)
class OwnerRef:
    kind: str
    name: str
    uid: str
    controller: bool
    api_version: str = ""


@dataclass(slots=True, eq=False)
class PodInfo:
    """Everything the scheduler reads from a pod, parsed once.

    ``raw`` keeps the original document for pods that are still to be scheduled
    (the live binder and the explain output need it); the cache drops it for
    bound pods to keep memory small.
    """

    uid: str
    namespace: str
    name: str
    labels: dict[str, str]
    node_name: str
    scheduler_name: str
    priority: int
    creation_timestamp: float | None
    requests: PodRequests
    host_ports: tuple[HostPort, ...]
    tolerations: tuple[Toleration, ...]
    node_selector: dict[str, str]
    required_node_affinity: NodeSelector | None
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...]
    pod_affinity: PodAffinity
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...]
    images: tuple[str, ...]  # normalised, init containers first
    scheduling_gates: tuple[str, ...]
    owner_references: tuple[OwnerRef, ...]
    nominated_node_name: str
    terminating: bool
    raw: dict[str, Any] | None
    # ``spec.volumes`` (claims and in-tree disks): the volume plugins read them for bound pods too.
    volumes: tuple[PodVolume, ...] = ()
    # Preemption reads these: ``status.startTime`` (None until the kubelet starts the pod)
    # orders victims, ``spec.preemptionPolicy`` says whether the pod may preempt at all.
    start_time: float | None = None
    preemption_policy: str = "PreemptLowerPriority"
    # ``spec.resourceClaims`` and ``status.resourceClaimStatuses`` (entry name -> claim name,
    # None when the controller made no claim): DynamicResources reads them for bound pods too.
    resource_claims: tuple[PodResourceClaim, ...] = ()
    resource_claim_statuses: tuple[tuple[str, str | None], ...] = ()
    # ``metadata.annotations``, read-only and shared (see ``objects/annotations.py``).
    annotations: Mapping[str, str] = field(default_factory=lambda: NO_ANNOTATIONS)
    # Host port numbers of the init containers that finish before the app containers start
    # (not restartable): no plugin reads them (they hold no port while the pod runs), but
    # upstream's HostPortsSigner signs every container's ports, so OpportunisticBatching does.
    init_host_ports: tuple[int, ...] = ()
    # Whether ``spec.affinity.nodeAffinity`` is set, even with no term: upstream's signature
    # tells ``nodeAffinity: {}`` from none, so OpportunisticBatching does.
    node_affinity_set: bool = False
    # ``spec.volumes[*].image.reference`` (image volumes), normalised: ImageLocality scores
    # them beside the containers' images, as upstream's sumImageScores does.
    volume_images: tuple[str, ...] = ()
    # ``spec.schedulingGroup.podGroupName``: the PodGroup (same namespace) the pod belongs to
    # (GenericWorkload); None for a pod scheduled alone. Bound members count towards a gang's
    # ``minCount``, so bound pods keep it too.
    pod_group_name: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"

    def copy_with(self, **changes: Any) -> "PodInfo":
        """A shallow copy with ``changes`` applied: ``dataclasses.replace`` at a tenth of its cost
        (the scheduler copies a pod on assume, bind and the informer's update)."""
        new = _COPY(self)
        for name, value in changes.items():
            setattr(new, name, value)
        return new


def _copier() -> Callable[[PodInfo], PodInfo]:
    """A function that copies a PodInfo field by field into a new instance, written out from
    the fields and compiled once (as ``dataclasses`` makes ``__init__``): half the cost of
    passing every field to the constructor, which a pod's thirty fields make the larger part
    of a copy. ``__init__`` is not run: every value is the source's, none is computed."""
    names = [f.name for f in fields(PodInfo)]
    source = "\n".join(["def copy(src):", "    new = new_object(PodInfo)", *(f"    new.{n} = src.{n}" for n in names),
                        "    return new"])
    scope: dict[str, Any] = {"new_object": object.__new__, "PodInfo": PodInfo}
    exec(source, scope)
    copy: Callable[[PodInfo], PodInfo] = scope["copy"]
    return copy


_COPY = _copier()


def parse_pod(raw: Mapping[str, Any], keep_raw: bool = True) -> PodInfo:
    """Compile a v1.Pod document. Raises ``ObjectError`` naming the bad field.

    ``keep_raw=False`` is for bound pods, which a large cluster holds by the hundred
    thousand: the raw document is dropped and the parts pods of one template have in
    common (labels, tolerations, images, affinity, ...) are shared between them.
    """
    if not is_map(raw):
        raise ObjectError("", "a pod must be an object")
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    if not is_map(meta) or not is_map(spec) or not is_map(status):
        raise ObjectError("", "metadata, spec and status must be objects")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ObjectError("metadata.name", "is required")
    namespace = meta.get("namespace") or "default"
    if not isinstance(namespace, str):
        raise ObjectError("metadata.namespace", "must be a string")

    parts = spec_parts(spec, namespace)
    try:
        created = remembered_timestamp(meta.get("creationTimestamp"))
    except ObjectError as err:
        raise ObjectError("metadata.creationTimestamp", err.message) from None
    owners = memo("owners", meta.get("ownerReferences"), _owner_references)
    labels = memo("labels", meta.get("labels"), _labels)
    node_name = spec.get("nodeName") or ""
    if not isinstance(node_name, str):
        raise ObjectError("spec.nodeName", "must be a string")
    if not keep_raw:
        namespace = sys.intern(namespace)
        node_name = sys.intern(node_name)
    return PodInfo(
        uid=str(meta.get("uid") or f"{namespace}/{name}"),
        namespace=namespace,
        name=name,
        labels=labels,
        node_name=node_name,
        scheduler_name=parts.scheduler_name,
        priority=parts.priority,
        creation_timestamp=created,
        requests=(status_requests(spec, status) or parts.requests) if node_name and status.get("containerStatuses")
        else parts.requests,
        host_ports=parts.host_ports,
        tolerations=parts.tolerations,
        node_selector=parts.node_selector,
        required_node_affinity=parts.required_node_affinity,
        preferred_node_affinity=parts.preferred_node_affinity,
        pod_affinity=parts.pod_affinity,
        topology_spread_constraints=parts.topology_spread_constraints,
        images=parts.images,
        scheduling_gates=parts.scheduling_gates,
        owner_references=owners,
        nominated_node_name=status.get("nominatedNodeName") or "",
        terminating=bool(meta.get("deletionTimestamp")),
        raw=dict(raw) if keep_raw else None,
        volumes=parse_pod_volumes(spec.get("volumes"), name, sources=keep_raw),
        start_time=_start_time(status.get("startTime")),
        preemption_policy=parts.preemption_policy,
        resource_claims=_resource_claims(spec.get("resourceClaims")) if spec.get("resourceClaims") else (),
        resource_claim_statuses=(_claim_statuses(status.get("resourceClaimStatuses"))
                                 if status.get("resourceClaimStatuses") else ()),
        annotations=parse_annotations(meta.get("annotations")),
        init_host_ports=parts.init_host_ports,
        node_affinity_set=parts.node_affinity_set,
        volume_images=_volume_images(spec.get("volumes")),
        pod_group_name=_pod_group_name(spec.get("schedulingGroup")) if spec.get("schedulingGroup") else None,
    )


def _optional_string(raw: Mapping[str, Any], key: str, path: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise ObjectError(path, "must be a string")
    return value


def _resource_claims(raw: Any) -> tuple[PodResourceClaim, ...]:
    out = []
    for i, entry in enumerate(as_list(raw, "spec.resourceClaims")):
        path = f"spec.resourceClaims[{i}]"
        if not is_map(entry) or not isinstance(entry.get("name"), str) or not entry.get("name"):
            raise ObjectError(f"{path}.name", "is required")
        out.append(PodResourceClaim(entry["name"], _optional_string(entry, "resourceClaimName", f"{path}.resourceClaimName"),
                                    _optional_string(entry, "resourceClaimTemplateName",
                                                     f"{path}.resourceClaimTemplateName")))
    return tuple(out)


def _claim_statuses(raw: Any) -> tuple[tuple[str, str | None], ...]:
    out = []
    for i, entry in enumerate(as_list(raw, "status.resourceClaimStatuses")):
        path = f"status.resourceClaimStatuses[{i}]"
        if not is_map(entry) or not isinstance(entry.get("name"), str):
            raise ObjectError(f"{path}.name", "is required")
        out.append((entry["name"], _optional_string(entry, "resourceClaimName", f"{path}.resourceClaimName")))
    return tuple(out)


def _labels(raw: Any) -> dict[str, str]:
    return str_map(raw, "metadata.labels")


def _owner_references(raw: Any) -> tuple[OwnerRef, ...]:
    if not raw:
        return ()
    return tuple(
        OwnerRef(str(o.get("kind", "")), str(o.get("name", "")), str(o.get("uid", "")), bool(o.get("controller")),
                 str(o.get("apiVersion", "")))
        for o in as_list(raw, "metadata.ownerReferences")
        if is_map(o)
    )


def _volume_images(raw: Any) -> tuple[str, ...]:
    if not raw or not isinstance(raw, list):
        return ()
    out = []
    for vol in raw:
        image: Any = vol.get("image") if is_map(vol) else None
        reference = image.get("reference") if is_map(image) else None
        if reference:
            out.append(normalized_image_name(str(reference)))
    return tuple(out)


def _pod_group_name(raw: Any) -> str | None:
    if not is_map(raw):
        raise ObjectError("spec.schedulingGroup", "must be an object")
    name = raw.get("podGroupName")
    if name is None:
        return None
    if not isinstance(name, str) or not name:
        raise ObjectError("spec.schedulingGroup.podGroupName", "must be a non-empty string")
    return name


def _start_time(value: Any) -> float | None:
    try:
        return remembered_timestamp(value)
    except ObjectError as err:
        raise ObjectError("status.startTime", err.message) from None
