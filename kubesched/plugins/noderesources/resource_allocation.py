"""The scoring machinery NodeResourcesFit and BalancedAllocation share (``resource_allocation.go``).

For each scored resource it gathers, per node, the allocatable amount and what
would be requested with the pod on it; a resource a node lacks (allocatable 0)
is left out of that node's score, as is an extended resource the pod does not ask for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ...framework import ArgsError, IntArray, NodeTableView, RowArray
from ...framework.args import expect_fields, get_int, get_list
from ...objects.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PodRequests, Resource, is_scalar_resource

__all__ = ["ResourceSpec", "parse_resources", "allocatable_and_requested", "pod_request_vector", "DEFAULT_RESOURCES"]


@dataclass(slots=True, frozen=True)
class ResourceSpec:
    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


def parse_resources(raw: list[object], path: str) -> tuple[ResourceSpec, ...]:
    items: list[ResourceSpec] = []
    for i, entry in enumerate(raw):
        item = expect_fields(entry, ("name", "weight"), f"{path}[{i}]")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ArgsError(f"{path}[{i}].name", "must be a resource name")
        weight = get_int(item, "weight", 1, f"{path}[{i}].") or 1  # unset or 0: the default weight 1
        if not 1 <= weight <= 100:
            raise ArgsError(f"{path}[{i}].weight", f"resource weight of {name} should be in the range of [1, 100], got {weight}")
        items.append(ResourceSpec(name, weight))
    seen: set[str] = set()
    for i, spec in enumerate(items):
        if spec.name in seen:
            raise ArgsError(f"{path}[{i}].name", f'Duplicate value: "{spec.name}"')
        seen.add(spec.name)
    return tuple(items)


def pod_request_vector(requests: PodRequests, resources: tuple[ResourceSpec, ...], use_requested: bool) -> list[int]:
    """The pod's amount of each scored resource: plain requests, or with the 100m/200Mi defaults."""
    source: Resource = requests.requests if use_requested else requests.scoring
    return [source.get(spec.name) for spec in resources]


def allocatable_and_requested(
    table: NodeTableView, rows: RowArray, name: str, pod_request: int, use_requested: bool
) -> tuple[IntArray, IntArray] | None:
    """Per scored row, (allocatable, requested including the pod); None if the resource is left out."""
    if name == CPU:
        requested = table.req_cpu if use_requested else table.nz_cpu
        return table.alloc_cpu[rows], requested[rows] + pod_request
    if name == MEMORY:
        requested = table.req_mem if use_requested else table.nz_mem
        return table.alloc_mem[rows], requested[rows] + pod_request
    if name == EPHEMERAL_STORAGE:
        return table.alloc_eph[rows], table.req_eph[rows] + pod_request
    if is_scalar_resource(name):
        if pod_request == 0:
            return None
        # A resource no node has is all zeros, which leaves it out as absence did.
        alloc, req = table.scalar_columns(name)
        return alloc[rows], req[rows] + pod_request
    return None


def resource_columns(table: NodeTableView, name: str, pod_request: int, use_requested: bool) -> tuple[IntArray, IntArray] | None:
    """The whole (allocatable, requested) columns ``allocatable_and_requested`` reads, or None
    when it leaves the resource out (for per-row arithmetic)."""
    if name == CPU:
        return table.alloc_cpu, table.req_cpu if use_requested else table.nz_cpu
    if name == MEMORY:
        return table.alloc_mem, table.req_mem if use_requested else table.nz_mem
    if name == EPHEMERAL_STORAGE:
        return table.alloc_eph, table.req_eph
    if is_scalar_resource(name):
        if pod_request == 0:
            return None
        return table.scalar_columns(name)
    return None


def _resources_args(raw: Mapping[str, object], path: str) -> tuple[ResourceSpec, ...]:
    listed = get_list(raw, "resources", path)
    return parse_resources(listed, f"{path}resources") if listed else DEFAULT_RESOURCES
