"""What a pod's spec gives it, parsed once for all the pods of one template.

A large cluster holds hundreds of thousands of pods made from a few hundred templates
(Deployments, StatefulSets, Jobs): their specs are the same but for the node, the
volumes and the random name of the service-account token mounted into them. Parsing
each spec in full made loading a dump, or an informer's first sync, slower than
scheduling. Here a spec's parse (``SpecParts``) is remembered by the spec's JSON text
without those per-pod fields, and the smaller parts pods share (labels, tolerations,
owner references, times) by their raw content; parsed parts are shared, never copied,
since a ``PodInfo`` is immutable by contract.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

import orjson

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

__all__ = ["DEFAULT_SCHEDULER_NAME", "HostPort", "SpecParts", "is_map", "memo", "normalized_image_name",
           "parse_spec", "parse_timestamp", "remembered_timestamp", "spec_key", "spec_parts", "str_map", "as_list"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"


@dataclass(slots=True, frozen=True)
class HostPort:
    """A host port a pod uses; an empty IP is 0.0.0.0 and an empty protocol TCP."""

    ip: str
    protocol: str
    port: int


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


def as_list(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ObjectError(path, f"must be a list, got {type(raw).__name__}")
    return raw


def is_map(value: object) -> bool:
    """``isinstance(value, Mapping)``, with decoded JSON's plain dicts answered first
    (an ABC check costs a few hundred nanoseconds, and a pod makes dozens)."""
    return type(value) is dict or isinstance(value, Mapping)


def str_map(raw: Any, path: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not is_map(raw) or not all(type(v) is str or isinstance(v, str) for v in raw.values()):
        raise ObjectError(path, "must be a map of strings")
    return {str(k): v for k, v in raw.items()}


def _host_ports(container: Mapping[str, Any], path: str) -> list[HostPort]:
    out = []
    for j, port in enumerate(as_list(container.get("ports"), f"{path}.ports")):
        if not is_map(port):
            raise ObjectError(f"{path}.ports[{j}]", "must be a container port")
        host_port = port.get("hostPort") or 0
        if not isinstance(host_port, int) or not 0 <= host_port < 65536:
            raise ObjectError(f"{path}.ports[{j}].hostPort", "must be a port number 0-65535")
        if host_port > 0:
            out.append(HostPort(port.get("hostIP") or "0.0.0.0", port.get("protocol") or "TCP", host_port))
    return out


class _Shared:
    """One shared copy of equal immutable values, and memos of what pods of one template
    repeat (their requests, image names, timestamps); bounded, so that a stream of unique
    values cannot grow them forever."""

    __slots__ = ("values", "limit")

    def __init__(self, limit: int = 1 << 16) -> None:
        self.values: dict[Hashable, Any] = {}
        self.limit = limit

    def share(self, key: Hashable, value: Any) -> Any:
        found = self.values.get(key)
        if found is not None:
            return found
        if len(self.values) >= self.limit:
            self.values.clear()
        self.values[key] = value
        return value


_SHARED = _Shared()
_MEMO = _Shared()  # raw text -> parsed: labels, tolerations, owner references, timestamps


@dataclass(slots=True, frozen=True)
class SpecParts:
    """What ``spec`` gives a pod, apart from its node and volumes: the same for every pod of
    one template in one namespace, so parsed once for all of them."""

    scheduler_name: str
    priority: int
    requests: PodRequests
    host_ports: tuple[HostPort, ...]
    tolerations: tuple[Toleration, ...]
    node_selector: dict[str, str]
    required_node_affinity: NodeSelector | None
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...]
    pod_affinity: PodAffinity
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...]
    images: tuple[str, ...]
    scheduling_gates: tuple[str, ...]
    preemption_policy: str
    init_host_ports: tuple[int, ...] = ()
    node_affinity_set: bool = False


SPECS = _Shared(1 << 14)  # spec text (see spec_key) -> SpecParts
# Fields that differ between the pods of one template and that ``SpecParts`` does not hold:
# parsed for each pod (nodeName, volumes) or not read at all (hostname, subdomain).
_PER_POD = {"nodeName": None, "volumes": None, "hostname": None, "subdomain": None}


def spec_parts(spec: Mapping[str, Any], namespace: str) -> SpecParts:
    """What ``spec`` gives a pod in ``namespace``: parsed once per template."""
    key = spec_key(namespace, spec)
    parts: SpecParts | None = SPECS.values.get(key) if key is not None else None
    if parts is None:
        parts = parse_spec(spec, namespace)
        if key is not None:
            SPECS.share(key, parts)
    return parts


def spec_key(namespace: str, spec: Mapping[str, Any]) -> bytes | None:
    """The text of ``spec`` without what differs between pods of one template (their node,
    their volumes and the mounts of those: the service-account token's name is random),
    with the namespace that pod affinity terms default to; None when it has no JSON text."""
    if type(spec) is not dict:
        return None
    try:
        key = {**spec, **_PER_POD}
        for group in ("containers", "initContainers"):
            containers = spec.get(group)
            if type(containers) is list:
                key[group] = [{**c, "volumeMounts": None} if type(c) is dict else c for c in containers]
        return orjson.dumps((namespace, key))
    except TypeError:  # keys that are not strings, values JSON cannot hold
        return None


def parse_spec(spec: Mapping[str, Any], namespace: str) -> SpecParts:
    images: list[str] = []
    host_ports: list[HostPort] = []
    init_host_ports: list[int] = []
    raw_init = as_list(spec.get("initContainers"), "spec.initContainers")
    raw_containers = as_list(spec.get("containers"), "spec.containers")
    for group, items in (("spec.initContainers", raw_init), ("spec.containers", raw_containers)):
        init = group == "spec.initContainers"
        for i, c in enumerate(items):
            if not is_map(c):
                raise ObjectError(f"{group}[{i}]", "must be a container")
            restartable = init and c.get("restartPolicy") == "Always"
            if "ports" in c:
                if restartable or not init:
                    host_ports.extend(_host_ports(c, f"{group}[{i}]"))
                else:  # gone before the app containers start: signed, never held on the node
                    init_host_ports.extend(p.port for p in _host_ports(c, f"{group}[{i}]"))
            image = c.get("image")
            if image:
                images.append(normalized_image_name(str(image)))
    requests = _parse_requests(spec, raw_init, raw_containers)
    affinity = spec.get("affinity") or {}
    if not is_map(affinity):
        raise ObjectError("spec.affinity", "must be an object")
    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()
    pod_affinity = NO_POD_AFFINITY
    node_affinity_set = False
    if affinity:
        node_affinity_set = affinity.get("nodeAffinity") is not None
        required_raw, preferred_raw = node_affinity_of(affinity)
        if required_raw is not None:
            required = parse_node_selector(
                required_raw, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
        preferred = parse_preferred_terms(
            preferred_raw, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", pod=True)
        pod_affinity = parse_pod_affinity(affinity, "spec.affinity", namespace)
    priority = spec.get("priority", 0) or 0
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise ObjectError("spec.priority", "must be an integer")
    raw_gates = spec.get("schedulingGates")
    gates: tuple[str, ...] = ()
    if raw_gates:
        gates = tuple(str(g.get("name", "")) for g in as_list(raw_gates, "spec.schedulingGates") if is_map(g))
    scheduler_name = spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME
    if not isinstance(scheduler_name, str):
        raise ObjectError("spec.schedulerName", "must be a string")
    share = _SHARED.share
    return SpecParts(
        scheduler_name=sys.intern(scheduler_name),
        priority=priority,
        requests=requests,
        host_ports=share(("ports", tuple(host_ports)), tuple(host_ports)),
        init_host_ports=tuple(init_host_ports),
        node_affinity_set=node_affinity_set,
        tolerations=memo("tolerations", spec.get("tolerations"), _tolerations),
        node_selector=memo("selector", spec.get("nodeSelector"), _node_selector),
        required_node_affinity=required,
        preferred_node_affinity=preferred,
        pod_affinity=share(("affinity", pod_affinity), pod_affinity),
        topology_spread_constraints=share(("spread", spread := parse_topology_spread_constraints(
            spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints")), spread),
        images=share(("images", tuple(images)), tuple(images)),
        scheduling_gates=gates,
        preemption_policy=str(spec.get("preemptionPolicy") or "PreemptLowerPriority"),
    )


_T = TypeVar("_T")


def memo(part: str, raw: Any, parse: Callable[[Any], _T]) -> _T:
    """``parse(raw)``, remembered by ``raw``'s content (labels, tolerations, owner
    references): pods of one template then share one parsed value, parsed once.

    A map of strings is keyed by its items; a list by its JSON text, which tells ``1``
    from ``true`` (equal as Python keys)."""
    if not raw:
        return parse(raw)
    try:
        if type(raw) is dict:
            key: Hashable = (part, *raw.items())
        elif type(raw) is list:
            key = (part, orjson.dumps(raw))
        else:
            return parse(raw)
        found = _MEMO.values.get(key)
    except TypeError:  # an unhashable value, or one JSON cannot hold: parse it
        return parse(raw)
    if found is None:
        found = _MEMO.share(key, parse(raw))
    return found  # type: ignore[no-any-return]


def _node_selector(raw: Any) -> dict[str, str]:
    return str_map(raw, "spec.nodeSelector")


def _tolerations(raw: Any) -> tuple[Toleration, ...]:
    return parse_tolerations(raw, "spec.tolerations")


def _parse_requests(spec: Mapping[str, Any], raw_init: list[Any], raw_containers: list[Any]) -> PodRequests:
    """The pod's requests from its containers, pod-level resources and overhead, every
    quantity parsed (the memo's miss path, and where a bad quantity is reported)."""
    init_containers = []
    for i, c in enumerate(raw_init):
        path = f"spec.initContainers[{i}]"
        requests = parse_resource_list((c.get("resources") or {}).get("requests"), f"{path}.resources.requests")
        init_containers.append((requests, c.get("restartPolicy") == "Always"))
    containers = [
        parse_resource_list((c.get("resources") or {}).get("requests"), f"spec.containers[{i}].resources.requests")
        for i, c in enumerate(raw_containers)
    ]
    pod_level = parse_resource_list((spec.get("resources") or {}).get("requests"), "spec.resources.requests")
    overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
    return compute_pod_requests(containers, init_containers, pod_level, overhead)


def remembered_timestamp(text: Any) -> float | None:
    """``parse_timestamp``, remembered: the pods of a dump share a few thousand distinct times."""
    if type(text) is not str:
        return parse_timestamp(text)
    found = _MEMO.values.get(("time", text))
    if found is None:
        found = _MEMO.share(("time", text), parse_timestamp(text))
    return found  # type: ignore[no-any-return]
