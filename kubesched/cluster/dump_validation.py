"""What the API server's validation would reject in a dump, before anything is compiled.

A dump may be hand-edited or generated; objects the API server could never have
stored (a negative request, a resource named ``mem``, a Pod of ``apiVersion: v2``)
would otherwise be scheduled as if they meant something. The rules are upstream's
(``pkg/apis/core/validation``): node capacity and allocatable values must be
non-negative (integers for ``pods`` and extended resources), container requests and
limits and pod overhead must name a standard or fully qualified resource and be
non-negative; a pod's ``spec.schedulingGroup`` must name its PodGroup (a DNS subdomain).
Only the checks the scheduler's reading depends on are made here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

import orjson

from ..objects.podgroup_validation import scheduling_group_problems
from ..objects.quantity import QuantityError, parse_quantity

__all__ = ["API_VERSIONS", "check_api_version", "object_problems"]

# The apiVersions the API server serves for the kinds a snapshot reads (Kubernetes 1.34):
# the beta versions of PriorityClass (1.22), PodDisruptionBudget (1.25) and
# CSIStorageCapacity (1.27) are no longer served, so kubectl never writes them.
API_VERSIONS: dict[str, tuple[str, ...]] = {
    "Node": ("v1",), "Pod": ("v1",), "Namespace": ("v1",), "Service": ("v1",),
    "ReplicationController": ("v1",), "PersistentVolume": ("v1",), "PersistentVolumeClaim": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1",), "PodDisruptionBudget": ("policy/v1",),
    "ReplicaSet": ("apps/v1",), "StatefulSet": ("apps/v1",), "Deployment": ("apps/v1",),
    "StorageClass": ("storage.k8s.io/v1",), "CSINode": ("storage.k8s.io/v1",), "CSIDriver": ("storage.k8s.io/v1",),
    "CSIStorageCapacity": ("storage.k8s.io/v1",),
}
# Kinds whose name other API groups use too (scheduler-plugins' PodGroup, Kueue's Workload):
# only the versions of their own group are judged; v1.36 serves scheduling.k8s.io/v1alpha2
# (its v1alpha1 Workload, of 1.35, is no longer served).
GROUP_API_VERSIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "PodGroup": ("scheduling.k8s.io", ("scheduling.k8s.io/v1alpha2",)),
    "Workload": ("scheduling.k8s.io", ("scheduling.k8s.io/v1alpha2",)),
}

_STANDARD = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers",
})
_CONTAINER = frozenset({"cpu", "memory", "ephemeral-storage"})
_INTEGER = frozenset({"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
                      "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"})
_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

Problem = tuple[str, str]  # (field, message)

# Containers' ``resources`` (as JSON text) already found valid; bounded.
_VALID_RESOURCES: set[bytes] = set()
_VALID_LIMIT = 1 << 14


def check_api_version(kind: str, api_version: object) -> Problem | None:
    """An unknown apiVersion for a kind the snapshot reads; an absent one is taken as served."""
    served = API_VERSIONS.get(kind)
    if (grouped := GROUP_API_VERSIONS.get(kind)) is not None:
        group, served = grouped
        if not isinstance(api_version, str) or api_version.partition("/")[0] != group:
            return None
    if served is None or api_version is None or api_version in served:
        return None
    return "apiVersion", f"unknown apiVersion {api_version!r} for {kind}; the API server serves {', '.join(served)}"


def _qualified_name_error(name: str) -> str | None:
    prefix, _, local = name.rpartition("/")
    if "/" in name and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        return "prefix part must be a lowercase RFC 1123 subdomain"
    if not local or len(local) > 63 or not _NAME.match(local):
        return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)"
    return None


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


@lru_cache(maxsize=1024)
def _extended(name: str) -> bool:
    return not _native(name) and not name.startswith("requests.") and _qualified_name_error("requests." + name) is None


@lru_cache(maxsize=1024)
def _resource_name_error(name: str, container: bool) -> str | None:
    if (message := _qualified_name_error(name)) is not None:
        return message
    hugepages = name.startswith("hugepages-") or name.startswith("requests.hugepages-")
    if "/" not in name:
        if not (name in _STANDARD or hugepages):
            return "must be a standard resource type or fully qualified"
        if container and name not in _CONTAINER and not name.startswith("hugepages-"):
            return "must be a standard resource for containers"
    elif container and not _native(name) and not _extended(name):
        return "doesn't follow extended resource name standard"
    return None


def _quantity_error(name: str, value: object) -> str | None:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return None
    whole = name in _INTEGER or _extended(name)
    if isinstance(value, str) and not value.startswith("-") and not whole:
        return None  # the common case: nothing to parse
    try:
        quantity = parse_quantity(value)
    except QuantityError:
        return None  # the object parsers report an unparsable quantity
    if quantity < 0:
        return f"Invalid value: {value!r}: must be greater than or equal to 0"
    if whole and quantity.denominator != 1:
        return f"Invalid value: {value!r}: must be an integer"
    return None


@lru_cache(maxsize=8192)
def _entry_error(name: str, value: str | int | float, container: bool, check_name: bool) -> str | None:
    """One ``name: value`` of a resource list; cached, as a dump repeats the same few pairs."""
    if check_name and (message := _resource_name_error(name, container)) is not None:
        return f"Invalid value: {name!r}: {message}"
    return _quantity_error(name, value)


def _resource_list(resources: object, path: str, container: bool, check_names: bool, out: list[Problem]) -> None:
    if not isinstance(resources, dict):
        return
    for name, value in resources.items():
        scalar = value if isinstance(value, (str, int, float)) else "0"  # other types: the parsers say why
        message = _entry_error(str(name), scalar, container, check_names)
        if message is not None:
            out.append((f"{path}[{name}]", message))


def _pod_problems(obj: Mapping[str, object], out: list[Problem]) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for group in ("initContainers", "containers"):
        containers = spec.get(group)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            resources = container.get("resources") if isinstance(container, dict) else None
            if not resources or not isinstance(resources, dict):
                continue
            try:
                key = orjson.dumps(resources)
            except TypeError:
                key = b""
            if key in _VALID_RESOURCES:
                continue  # the pods of one template repeat their containers' resources
            found = len(out)
            for part in ("requests", "limits"):
                if part in resources:
                    _resource_list(resources[part], f"spec.{group}[{i}].resources.{part}", True, True, out)
            if key and len(out) == found:
                if len(_VALID_RESOURCES) >= _VALID_LIMIT:
                    _VALID_RESOURCES.clear()
                _VALID_RESOURCES.add(key)
    if "overhead" in spec:
        _resource_list(spec["overhead"], "spec.overhead", False, True, out)
    if spec.get("schedulingGroup") is not None:
        out.extend(scheduling_group_problems(spec))


def _node_problems(obj: Mapping[str, object], out: list[Problem]) -> None:
    status = obj.get("status")
    if not isinstance(status, dict):
        return
    for part in ("capacity", "allocatable"):  # upstream checks node values, not node resource names
        _resource_list(status.get(part), f"status.{part}", False, False, out)


def object_problems(kind: str, obj: Mapping[str, object]) -> list[Problem]:
    """What validation would reject in ``obj`` (fields as dotted paths), apiVersion first."""
    problems: list[Problem] = []
    if (problem := check_api_version(kind, obj.get("apiVersion"))) is not None:
        problems.append(problem)
    if kind == "Pod":
        _pod_problems(obj, problems)
    elif kind == "Node":
        _node_problems(obj, problems)
    return problems
