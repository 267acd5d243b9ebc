"""Extended resources backed by DRA (DRAExtendedResource): a pod asking for ``example.com/gpu``
on a node that does not list it gets a claim for devices of the class that backs it.

PreFilter finds the pod's DRA-backed resources (``backed_resources``) and the claim a
previous cycle created for it, if any (``find_extended_claim``); otherwise an in-memory
claim named ``<extended-resources>`` stands in. Filter decides per node
(``node_requests``): a resource the node lists (a device plugin's) is NodeResourcesFit's,
one it does not list (or lists as 0) becomes requests of the node's variant of the claim,
built as upstream's ``createRequestsAndMappings``: one request per container and resource,
``container-<i>-request-<j>`` (``i`` over init containers then containers, ``j`` the
resource's index among the container's sorted request names), init containers that are
not sidecars reusing the requests of containers that run after them, and only the largest
such init request kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...objects.pod import PodInfo
from ...objects.quantity import value as quantity_value
from .extended_index import is_dra_extended_resource
from .names import EXTENDED_RESOURCE_CLAIM_ANNOTATION

if TYPE_CHECKING:
    from ...objects.dra import DeviceClass

__all__ = ["ClassResolver", "NodeCannotFit", "ExtendedRequest", "RequestMapping", "is_dra_extended_resource", "backed_resources", "node_requests",
           "requests_and_mappings", "is_extended_claim_of"]

ClassResolver = Callable[[str], "DeviceClass | None"]
"""``resource name -> DeviceClass | None`` (the DRA manager's ``device_class_for``)."""


@dataclass(slots=True, frozen=True)
class ExtendedRequest:
    """One request of the extended-resource claim: ``count`` devices of ``device_class``."""

    name: str
    device_class: str
    count: int


@dataclass(slots=True, frozen=True)
class RequestMapping:
    """``ContainerExtendedResourceRequest``: which request serves a container's resource."""

    container: str
    resource: str
    request: str

    def to_json(self) -> dict[str, str]:
        return {"containerName": self.container, "resourceName": self.resource, "requestName": self.request}


def backed_resources(pod: PodInfo, class_for: ClassResolver) -> dict[str, int] | None:
    """The pod's scalar requests when at least one is backed by a DeviceClass; else None."""
    scalar = pod.requests.requests.scalar
    if not any(q and is_dra_extended_resource(r) and class_for(r) is not None for r, q in scalar.items()):
        return None
    return dict(scalar)


def is_extended_claim_of(pod: PodInfo, annotations: Mapping[str, str], owners: tuple[tuple[str, str, bool], ...]) -> bool:
    """upstream's ``findExtendedResourceClaim`` test: the annotation, and the pod as controller."""
    if annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
        return False
    return any(name == pod.name and controller and uid == pod.uid for name, uid, controller in owners)


class NodeCannotFit(Exception):
    """A DRA extended resource the node neither lists nor any class backs."""


def node_requests(resources: Mapping[str, int], allocatable: Mapping[str, int],
                  class_for: ClassResolver) -> dict[str, int]:
    """The resources this node must provide through DRA (``filterExtendedResources``);
    raises ``NodeCannotFit`` for one nobody provides."""
    needed: dict[str, int] = {}
    for name, quantity in resources.items():
        if not is_dra_extended_resource(name) or quantity == 0:
            continue
        on_node = allocatable.get(name)
        backed = class_for(name) is not None
        if backed and not on_node:
            needed[name] = quantity
        elif on_node is None:
            raise NodeCannotFit(name)
    return needed


def _container_request(index: int, container: Mapping[str, object], resource: str, class_name: str,
                       reusable: list[ExtendedRequest | None]) -> tuple[ExtendedRequest | None, list[RequestMapping]]:
    resources = container.get("resources")
    requests = resources.get("requests") if isinstance(resources, Mapping) else None
    if not isinstance(requests, Mapping) or resource not in requests:
        return None, []
    try:
        wanted = quantity_value(requests[resource])
    except (ValueError, TypeError):
        return None, []
    if wanted == 0:
        return None, []
    name = str(container.get("name", ""))
    mappings: list[RequestMapping] = []
    total = 0
    for other in reusable:
        if other is not None:
            total += other.count
            mappings.append(RequestMapping(name, resource, other.name))
            if total >= wanted:
                return None, mappings
    position = sorted(str(k) for k in requests).index(resource)
    request = ExtendedRequest(f"container-{index}-request-{position}", class_name, wanted - total)
    mappings.append(RequestMapping(name, resource, request.name))
    return request, mappings


def requests_and_mappings(spec: Mapping[str, object], resources: Mapping[str, int],
                          class_for: ClassResolver) -> tuple[list[ExtendedRequest], list[RequestMapping]]:
    """The node's claim requests, sorted by name, and the containers' mappings to them."""
    init = spec.get("initContainers")
    regular = spec.get("containers")
    init_list = [c for c in init if isinstance(c, Mapping)] if isinstance(init, list) else []
    containers = init_list + ([c for c in regular if isinstance(c, Mapping)] if isinstance(regular, list) else [])
    long_lived = [i for i, c in enumerate(containers) if i >= len(init_list) or c.get("restartPolicy") == "Always"]
    short_lived = [i for i in range(len(init_list)) if containers[i].get("restartPolicy") != "Always"]
    requests: list[ExtendedRequest] = []
    mappings: list[RequestMapping] = []
    for resource in sorted(resources):
        cls = class_for(resource)
        if cls is None:
            continue
        long_requests: list[ExtendedRequest | None] = [None] * len(containers)
        long_mappings: list[RequestMapping] = []
        for i in long_lived:
            request, found = _container_request(i, containers[i], resource, cls.name, [])
            long_requests[i] = request
            long_mappings.extend(found)
        largest: ExtendedRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[RequestMapping] = []
        for i in short_lived:
            request, found = _container_request(i, containers[i], resource, cls.name, long_requests[i:])
            if request is not None:
                short_names.add(request.name)
                if largest is None or largest.count < request.count:
                    largest = request
            short_mappings.extend(found)
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest.name)
            short_mappings = [RequestMapping(m.container, m.resource, largest.name) if m.request in short_names else m
                              for m in short_mappings]
        if largest is not None:
            requests.append(largest)
        requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    requests.sort(key=lambda r: r.name)
    return requests, mappings

