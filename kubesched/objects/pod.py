"""``PodInfo``: a pod parsed once into what scheduling reads."""

from __future__ import annotations

import operator
from dataclasses import dataclass, fields
from datetime import datetime
from collections.abc import Mapping
from typing import Any

from .affinity import (
    NO_POD_AFFINITY,
    PodAffinity,
    TopologySpreadConstraint,
    node_affinity_of,
    parse_pod_affinity,
    parse_topology_spread_constraints,
)
from .errors import ObjectError
from .resources import PodRequests, compute_pod_requests, parse_resource_list
from .selectors import NodeSelector, PreferredSchedulingTerm, parse_node_selector, parse_preferred_terms
from .taints import Toleration, parse_tolerations
from .volumes import PodVolume, parse_pod_volumes

__all__ = ["HostPort", "OwnerRef", "PodInfo", "parse_pod", "parse_timestamp", "normalized_image_name"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"


@dataclass(slots=True, frozen=True)
class HostPort:
    """A host port a pod uses; an empty IP is 0.0.0.0 and an empty protocol TCP."""

    ip: str
    protocol: str
    port: int


@dataclass(slots=True, frozen=True)
class OwnerRef:
    kind: str
    name: str
    uid: str
    controller: bool
    api_version: str = ""


def parse_timestamp(text: Any) -> float | None:
    """RFC 3339 time as seconds since the epoch; None when absent."""
    if not text:
        return None
    if isinstance(text, datetime):
        return text.timestamp()
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ObjectError("", f"invalid time {text!r}, want RFC 3339") from None


def normalized_image_name(name: str) -> str:
    """ImageLocality's rule: an image without a tag means ``:latest``."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


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

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"

    def copy_with(self, **changes: Any) -> "PodInfo":
        """A shallow copy with ``changes`` applied: ``dataclasses.replace`` at a quarter of its cost
        (the scheduler copies a pod on assume, bind and the informer's update)."""
        new = PodInfo(*_FIELD_VALUES(self))
        for name, value in changes.items():
            setattr(new, name, value)
        return new


_FIELD_VALUES = operator.attrgetter(*(f.name for f in fields(PodInfo)))


def _list(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ObjectError(path, f"must be a list, got {type(raw).__name__}")
    return raw


def _str_map(raw: Any, path: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
        raise ObjectError(path, "must be a map of strings")
    return {str(k): v for k, v in raw.items()}


def _host_ports(container: Mapping[str, Any], path: str) -> list[HostPort]:
    out = []
    for j, port in enumerate(_list(container.get("ports"), f"{path}.ports")):
        if not isinstance(port, Mapping):
            raise ObjectError(f"{path}.ports[{j}]", "must be a container port")
        host_port = port.get("hostPort") or 0
        if not isinstance(host_port, int) or not 0 <= host_port < 65536:
            raise ObjectError(f"{path}.ports[{j}].hostPort", "must be a port number 0-65535")
        if host_port > 0:
            out.append(HostPort(port.get("hostIP") or "0.0.0.0", port.get("protocol") or "TCP", host_port))
    return out


def parse_pod(raw: Mapping[str, Any], keep_raw: bool = True) -> PodInfo:
    """Compile a v1.Pod document. Raises ``ObjectError`` naming the bad field."""
    if not isinstance(raw, Mapping):
        raise ObjectError("", "a pod must be an object")
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    if not isinstance(meta, Mapping) or not isinstance(spec, Mapping) or not isinstance(status, Mapping):
        raise ObjectError("", "metadata, spec and status must be objects")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ObjectError("metadata.name", "is required")
    namespace = meta.get("namespace") or "default"

    containers, init_containers = [], []
    images, host_ports = [], []
    spec_containers = _list(spec.get("containers"), "spec.containers")
    for i, c in enumerate(_list(spec.get("initContainers"), "spec.initContainers")):
        path = f"spec.initContainers[{i}]"
        if not isinstance(c, Mapping):
            raise ObjectError(path, "must be a container")
        requests = parse_resource_list((c.get("resources") or {}).get("requests"), f"{path}.resources.requests")
        restartable = c.get("restartPolicy") == "Always"
        init_containers.append((requests, restartable))
        if restartable:
            host_ports.extend(_host_ports(c, path))
        if c.get("image"):
            images.append(normalized_image_name(str(c["image"])))
    for i, c in enumerate(spec_containers):
        path = f"spec.containers[{i}]"
        if not isinstance(c, Mapping):
            raise ObjectError(path, "must be a container")
        containers.append(parse_resource_list((c.get("resources") or {}).get("requests"), f"{path}.resources.requests"))
        host_ports.extend(_host_ports(c, path))
        if c.get("image"):
            images.append(normalized_image_name(str(c["image"])))
    pod_level = parse_resource_list((spec.get("resources") or {}).get("requests"), "spec.resources.requests")
    overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")

    affinity = spec.get("affinity") or {}
    if not isinstance(affinity, Mapping):
        raise ObjectError("spec.affinity", "must be an object")
    required_raw, preferred_raw = node_affinity_of(affinity)
    required = (
        parse_node_selector(required_raw, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
        if required_raw is not None
        else None
    )
    preferred = parse_preferred_terms(
        preferred_raw, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    )
    priority = spec.get("priority", 0) or 0
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise ObjectError("spec.priority", "must be an integer")
    try:
        created = parse_timestamp(meta.get("creationTimestamp"))
    except ObjectError as err:
        raise ObjectError("metadata.creationTimestamp", err.message) from None
    owners = tuple(
        OwnerRef(
            str(o.get("kind", "")),
            str(o.get("name", "")),
            str(o.get("uid", "")),
            bool(o.get("controller")),
            str(o.get("apiVersion", "")),
        )
        for o in _list(meta.get("ownerReferences"), "metadata.ownerReferences")
        if isinstance(o, Mapping)
    )
    gates = tuple(
        str(g.get("name", "")) for g in _list(spec.get("schedulingGates"), "spec.schedulingGates") if isinstance(g, Mapping)
    )
    return PodInfo(
        uid=str(meta.get("uid") or f"{namespace}/{name}"),
        namespace=namespace,
        name=name,
        labels=_str_map(meta.get("labels"), "metadata.labels"),
        node_name=spec.get("nodeName") or "",
        scheduler_name=spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME,
        priority=priority,
        creation_timestamp=created,
        requests=compute_pod_requests(containers, init_containers, pod_level, overhead),
        host_ports=tuple(host_ports),
        tolerations=parse_tolerations(spec.get("tolerations"), "spec.tolerations"),
        node_selector=_str_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        required_node_affinity=required,
        preferred_node_affinity=preferred,
        pod_affinity=parse_pod_affinity(affinity, "spec.affinity", namespace) if affinity else NO_POD_AFFINITY,
        topology_spread_constraints=parse_topology_spread_constraints(
            spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"
        ),
        images=tuple(images),
        scheduling_gates=gates,
        owner_references=owners,
        nominated_node_name=status.get("nominatedNodeName") or "",
        terminating=bool(meta.get("deletionTimestamp")),
        raw=dict(raw) if keep_raw else None,
        volumes=parse_pod_volumes(spec.get("volumes"), name),
        start_time=_start_time(status.get("startTime")),
        preemption_policy=str(spec.get("preemptionPolicy") or "PreemptLowerPriority"),
    )


def _start_time(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ObjectError as err:
        raise ObjectError("status.startTime", err.message) from None
