"""The scoring machinery NodeResourcesFit and BalancedAllocation share (``resource_allocation.go``).

For each scored resource it gathers, per node, the allocatable amount and what
would be requested with the pod on it; a resource a node lacks (allocatable 0)
is left out of that node's score, as is an extended resource the pod does not ask for.
With DRAExtendedResource, a scalar resource a node lacks but a DeviceClass backs is counted
in the class's devices there (``dra_totals``, given a ``DraScoring``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...framework import IntArray, NodeTableView, RowArray
from ...framework.args import Int64
from ...objects.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PodRequests, Resource, is_scalar_resource
from .dra_scorer import DraScoring

__all__ = [
    "ResourceSpec",
    "DEFAULT_RESOURCES",
    "DraScoring",
    "default_resources",
    "allocatable_and_requested",
    "pod_request_vector",
    "resource_columns",
]


@dataclass(slots=True, frozen=True)
class ResourceSpec:
    """``config.ResourceSpec``: a scored resource and its weight. A weight left out or 0
    is the default 1 (``SetDefaults_NodeResources*Args``)."""

    name: str = ""
    weight: Int64 = 1

    def __post_init__(self) -> None:
        if self.weight == 0:
            object.__setattr__(self, "weight", 1)


DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))
"""Upstream's ``defaultResourceSpec``: cpu and memory, weight 1 each."""


def default_resources(resources: tuple[ResourceSpec, ...]) -> tuple[ResourceSpec, ...]:
    """No resources listed means the default set (``SetDefaults_NodeResources*Args``)."""
    return resources or DEFAULT_RESOURCES


def pod_request_vector(requests: PodRequests, resources: tuple[ResourceSpec, ...], use_requested: bool) -> list[int]:
    """The pod's amount of each scored resource: plain requests, or with the 100m/200Mi defaults."""
    source: Resource = requests.requests if use_requested else requests.scoring
    return [source.get(spec.name) for spec in resources]


def allocatable_and_requested(
    table: NodeTableView, rows: RowArray, name: str, pod_request: int, use_requested: bool,
    dra: DraScoring | None = None,
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
        alloc, req = alloc[rows], req[rows]
        if dra is not None:
            alloc, req = dra.totals.patch(dra.state, table, rows, name, alloc, req)
        return alloc, req + pod_request
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

