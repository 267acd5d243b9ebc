"""A bound pod being resized in place (InPlacePodVerticalScaling, GA in v1.36): its requests
as upstream's ``resourcehelper.PodRequests`` counts them with ``UseStatusResources``.

For each container (and each restartable init container) that has ``resources`` in its
status, the effective request of a resource is the largest of what the spec asks, what
the kubelet actuated (``status.containerStatuses[].resources.requests``) and what it
allocated (``allocatedResources``); when the resize is ``Infeasible`` (the
``PodResizePending`` condition's reason) the spec's new value does not count. Pods whose
status agrees with their spec (every pod not being resized) keep the requests their spec
gave, parsed once per template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .resources import PodRequests, ResourceList, compute_pod_requests, parse_resource_list

__all__ = ["status_requests"]


def _infeasible(status: Mapping[str, Any]) -> bool:
    for condition in status.get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == "PodResizePending":
            return condition.get("reason") == "Infeasible"
    return False


def _largest(*lists: ResourceList) -> ResourceList:
    out: ResourceList = {}
    for resources in lists:
        for name, amount in resources.items():
            if name not in out or amount > out[name]:
                out[name] = amount
    return out


def _requests(container: Mapping[str, Any]) -> Any:
    resources = container.get("resources")
    return resources.get("requests") if isinstance(resources, Mapping) else None


def status_requests(spec: Mapping[str, Any], status: Mapping[str, Any]) -> PodRequests | None:
    """The pod's requests counting its status resources; None when they are its spec's."""
    statuses: dict[str, Mapping[str, Any]] = {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or ():
            if isinstance(cs, Mapping) and isinstance(cs.get("resources"), Mapping):
                statuses[str(cs.get("name"))] = cs
    if not statuses:
        return None
    containers = [c for c in spec.get("containers") or () if isinstance(c, Mapping)]
    init = [c for c in spec.get("initContainers") or () if isinstance(c, Mapping)]
    differs = False
    for container in containers + [c for c in init if c.get("restartPolicy") == "Always"]:
        cs = statuses.get(str(container.get("name")))
        if cs is None:
            continue
        wanted = _requests(container) or {}
        actuated = _requests(cs) or {}
        allocated = cs.get("allocatedResources") or {}
        if actuated != wanted or (allocated and allocated != wanted):
            differs = True
            break
    if not differs:
        return None
    infeasible = _infeasible(status)

    def effective(container: Mapping[str, Any], path: str) -> ResourceList:
        wanted = parse_resource_list(_requests(container), f"{path}.resources.requests")
        cs = statuses.get(str(container.get("name")))
        if cs is None:
            return wanted
        actuated = parse_resource_list(_requests(cs), "status.containerStatuses[].resources.requests")
        allocated = parse_resource_list(cs.get("allocatedResources"), "status.containerStatuses[].allocatedResources")
        return _largest(actuated, allocated) if infeasible else _largest(wanted, actuated, allocated)

    regular = [effective(c, f"spec.containers[{i}]") for i, c in enumerate(containers)]
    inits: list[tuple[ResourceList, bool]] = []
    for i, c in enumerate(init):
        restartable = c.get("restartPolicy") == "Always"
        path = f"spec.initContainers[{i}]"
        inits.append((effective(c, path) if restartable else parse_resource_list(_requests(c), f"{path}.resources.requests"),
                      restartable))
    pod_resources = spec.get("resources")
    pod_level = parse_resource_list(pod_resources.get("requests") if isinstance(pod_resources, Mapping) else None,
                                    "spec.resources.requests")
    overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
    return compute_pod_requests(regular, inits, pod_level, overhead)
