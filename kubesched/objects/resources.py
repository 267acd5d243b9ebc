"""Resource vectors and a pod's effective requests, as upstream computes them.

Mirrors ``k8s.io/component-helpers/resource.PodRequests`` and the scheduler's
``framework.Resource``: cpu in millicores, everything else in whole units, with
scalar (extended, hugepages, attachable-volume) resources in a dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import ObjectError
from .quantity import QuantityError, milli_value, parse_quantity, value

__all__ = [
    "CPU",
    "MEMORY",
    "EPHEMERAL_STORAGE",
    "PODS",
    "DEFAULT_MILLI_CPU_REQUEST",
    "DEFAULT_MEMORY_REQUEST",
    "Resource",
    "PodRequests",
    "is_scalar_resource",
    "is_extended_resource",
    "parse_resource_list",
    "compute_pod_requests",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
DEFAULT_MILLI_CPU_REQUEST = 100  # 0.1 core, used for scoring when a container sets none
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200 MiB, likewise
_POD_LEVEL_RESOURCES = (CPU, MEMORY)  # and every hugepages-<size>


def _is_pod_level_resource(name: str) -> bool:
    """``IsSupportedPodLevelResource``: cpu, memory and hugepages."""
    return name in _POD_LEVEL_RESOURCES or name.startswith("hugepages-")

ResourceList = dict[str, Fraction]  # exact quantities by resource name
Quantities = Mapping[str, Fraction]


def is_extended_resource(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: a domain-qualified name outside kubernetes.io."""
    if name.startswith("requests."):
        return False
    if "/" not in name:
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def is_scalar_resource(name: str) -> bool:
    """Extended, hugepages-*, attachable-volumes-* and native kubernetes.io/ resources."""
    return (
        is_extended_resource(name)
        or name.startswith("hugepages-")
        or name.startswith("attachable-volumes-")
        or "kubernetes.io/" in name  # a prefixed native resource (``IsPrefixedNativeResource``)
    )


def parse_resource_list(raw: Any, field_path: str) -> ResourceList:
    """``{"cpu": "100m", ...}`` into exact quantities; a bad one raises ``ObjectError``."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ObjectError(field_path, f"must be a map of resource name to quantity, got {type(raw).__name__}")
    out = {}
    for name, text in raw.items():
        try:
            out[str(name)] = parse_quantity(text)
        except (QuantityError, TypeError) as err:
            raise ObjectError(f"{field_path}.{name}", str(err)) from None
    return out


@dataclass(slots=True)
class Resource:
    """``framework.Resource``: an additive vector of resource amounts."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, resources: Quantities) -> "Resource":
        res = cls()
        for name, quantity in resources.items():
            if name == CPU:
                res.milli_cpu += milli_value(quantity)
            elif name == MEMORY:
                res.memory += value(quantity)
            elif name == EPHEMERAL_STORAGE:
                res.ephemeral_storage += value(quantity)
            elif name == PODS:
                res.allowed_pod_number += value(quantity)
            elif is_scalar_resource(name):
                res.scalar[name] = res.scalar.get(name, 0) + value(quantity)
        return res

    def add(self, other: "Resource", sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        for name, amount in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + sign * amount

    def is_zero(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or any(self.scalar.values()))

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def copy(self) -> "Resource":
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, dict(self.scalar))


@dataclass(slots=True, frozen=True)
class PodRequests:
    """What a pod asks of a node: its requests and the non-zero cpu/memory used for scoring."""

    requests: Resource
    non_zero_milli_cpu: int
    non_zero_memory: int
    # Requests with upstream's non-missing defaults (100m / 200Mi per container
    # lacking them); what NodeResourcesFit's scoring adds to a node's non-zero sum.
    scoring: Resource
    # ``scoring`` without pod-level resources (``spec.resources``), for the one reader that
    # skips them: NodeResourcesFit's placement scorer, which upstream builds without the
    # PodLevelResources flag. None when the pod sets none (then it is ``scoring``).
    container_scoring: Resource | None = None


def _add(total: ResourceList, extra: Quantities) -> None:
    for name, amount in extra.items():
        total[name] = total.get(name, 0) + amount


def _max_into(total: ResourceList, other: Quantities) -> None:
    for name, amount in other.items():
        if name not in total or amount > total[name]:
            total[name] = amount


def _with_defaults(requests: Quantities, defaults: Quantities | None) -> Quantities:
    if not defaults:
        return requests
    missing = {k: v for k, v in defaults.items() if k not in requests}
    if not missing:
        return requests
    merged = dict(requests)
    merged.update(missing)
    return merged


def pod_request_list(
    containers: Iterable[Quantities],
    init_containers: Iterable[tuple[Quantities, bool]],
    pod_level: Quantities | None,
    overhead: Quantities | None,
    defaults: Quantities | None = None,
) -> ResourceList:
    """``resourcehelper.PodRequests``: containers, then init containers, pod level, overhead.

    ``init_containers`` holds ``(requests, restartable)`` pairs; restartable (sidecar)
    init containers keep running beside the app containers, so their requests add up.
    ``defaults`` fills in resources a container does not request (``NonMissingContainerRequests``).
    """
    total: ResourceList = {}
    for requests in containers:
        _add(total, _with_defaults(requests, defaults))
    restartable_sum: ResourceList = {}
    init_max: ResourceList = {}
    for requests, restartable in init_containers:
        requests = _with_defaults(requests, defaults)
        if restartable:
            _add(total, requests)
            _add(restartable_sum, requests)
            effective = restartable_sum
        else:
            effective = dict(requests)
            _add(effective, restartable_sum)
        _max_into(init_max, effective)
    _max_into(total, init_max)
    if pod_level:
        for name, amount in pod_level.items():
            if _is_pod_level_resource(name):
                total[name] = amount
    if overhead:
        _add(total, overhead)
    return total


def _items(resources: Quantities | None) -> tuple[tuple[str, Fraction], ...]:
    return tuple(sorted(resources.items())) if resources else ()


_REQUESTS_MEMO: dict[tuple[object, ...], PodRequests] = {}
_MEMO_LIMIT = 1 << 14


def compute_pod_requests(
    containers: Sequence[Quantities],
    init_containers: Sequence[tuple[Quantities, bool]],
    pod_level: Quantities | None,
    overhead: Quantities | None,
) -> PodRequests:
    """A pod's requests as ``framework.calculateResource`` and the scorers see them.

    Pods of one template have identical requests, so results are shared by shape:
    the returned object is immutable by contract and must not be modified.
    """
    key = (
        tuple(_items(c) for c in containers),
        tuple((_items(r), restartable) for r, restartable in init_containers),
        _items(pod_level),
        _items(overhead),
    )
    found = _REQUESTS_MEMO.get(key)
    if found is None:
        if len(_REQUESTS_MEMO) >= _MEMO_LIMIT:
            _REQUESTS_MEMO.clear()
        found = _REQUESTS_MEMO[key] = _compute_pod_requests(containers, init_containers, pod_level, overhead)
    return found


def _compute_pod_requests(
    containers: Sequence[Quantities],
    init_containers: Sequence[tuple[Quantities, bool]],
    pod_level: Quantities | None,
    overhead: Quantities | None,
) -> PodRequests:
    requests = pod_request_list(containers, init_containers, pod_level, overhead)
    pod_level_set = pod_level is not None and any(_is_pod_level_resource(name) for name in pod_level)
    defaults = {CPU: parse_quantity("100m"), MEMORY: parse_quantity(DEFAULT_MEMORY_REQUEST)}
    if pod_level_set:
        node_defaults = {k: v for k, v in defaults.items() if k not in requests}
    else:
        node_defaults = defaults
    non_zero = pod_request_list(containers, init_containers, pod_level, overhead, node_defaults) if node_defaults else requests
    scoring = pod_request_list(containers, init_containers, pod_level, overhead, defaults)
    container_scoring = (Resource.from_list(pod_request_list(containers, init_containers, None, overhead, defaults))
                         if pod_level_set else None)
    return PodRequests(
        requests=Resource.from_list(requests),
        non_zero_milli_cpu=milli_value(non_zero[CPU]) if CPU in non_zero else 0,
        non_zero_memory=value(non_zero[MEMORY]) if MEMORY in non_zero else 0,
        scoring=Resource.from_list(scoring),
        container_scoring=container_scoring,
    )
