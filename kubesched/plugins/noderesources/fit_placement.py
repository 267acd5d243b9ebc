"""NodeResourcesFit at PlacementScore (TopologyAwareWorkloadScheduling): MostAllocated over a placement.

Upstream's ``Fit.ScorePlacement`` scores a feasible placement as one big node: the
group's proposed pods' requests (with the 100m/200Mi defaults for containers without
requests) plus what the placement's nodes already hold, against the sum of their
allocatable, by the MostAllocated formula whatever the profile's scoring strategy (its
resources and weights are the profile's). A fuller placement scores higher, so a group
goes where it fills the domain most, leaving others whole for larger groups. An extended
resource the proposed pods do not ask for is left out, as are resources no node of the
placement has. DRA-backed extended resources are not counted here (upstream's placement
scorer reads no DRA). Nor are pod-level resources (``spec.resources``): upstream makes the
placement scorer apart from the plugin's own, without its feature flags, so its requests
are the containers' (with the defaults) and the overhead, PodLevelResources or not.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from ...framework import MAX_SCORE, Handle, PodGroupAssignments, PodGroupCycleState, PodGroupInfo, Status
from ...objects.nodeinfo import NodeInfo
from ...objects.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PodRequests, Resource, is_scalar_resource
from .dra_scorer import dra_scorer
from .fit import NodeResourcesFit, extended_index_of
from .fit import new as fit_new
from .fit_args import FitArgs
from .resource_allocation import ResourceSpec

__all__ = ["NodeResourcesFitPlacement", "new", "placement_requests", "placement_score"]


def _node_amounts(info: NodeInfo, name: str) -> tuple[int, int]:
    """(allocatable, requested) of one resource on a node, as the Score strategies read them:
    non-zero requests for cpu and memory, plain ones for the rest; (0, 0) when the node lacks it."""
    if name == CPU:
        return info.allocatable.milli_cpu, info.non_zero_requested.milli_cpu
    if name == MEMORY:
        return info.allocatable.memory, info.non_zero_requested.memory
    if name == EPHEMERAL_STORAGE:
        return info.allocatable.ephemeral_storage, info.requested.ephemeral_storage
    if name in info.allocatable.scalar:
        return info.allocatable.scalar[name], info.requested.scalar.get(name, 0)
    return 0, 0


_AMOUNT_GETTERS = {
    CPU: (operator.attrgetter("allocatable.milli_cpu"), operator.attrgetter("non_zero_requested.milli_cpu")),
    MEMORY: (operator.attrgetter("allocatable.memory"), operator.attrgetter("non_zero_requested.memory")),
    EPHEMERAL_STORAGE: (operator.attrgetter("allocatable.ephemeral_storage"),
                        operator.attrgetter("requested.ephemeral_storage")),
}


def _summed_amounts(nodes: Sequence[NodeInfo], name: str) -> tuple[int, int]:
    """``_node_amounts`` summed over the nodes that have the resource (allocatable above 0).

    A placement is scored once per feasible placement of every group cycle, over all its
    nodes: cpu, memory and ephemeral storage are read in C-level passes, not node by node."""
    getters = _AMOUNT_GETTERS.get(name)
    if getters is None:  # an extended resource: few placements ask for one
        allocatable = held = 0
        for info in nodes:
            node_allocatable, node_requested = _node_amounts(info, name)
            if node_allocatable:
                allocatable += node_allocatable
                held += node_requested
        return allocatable, held
    read_allocatable, read_requested = getters
    allocatables = list(map(read_allocatable, nodes))
    if 0 not in allocatables:  # every node has it (the usual case)
        return sum(allocatables), sum(map(read_requested, nodes))
    return sum(allocatables), sum(r for a, r in zip(allocatables, map(read_requested, nodes)) if a)


def placement_requests(requests: PodRequests) -> Resource:
    """A proposed pod's requests as upstream's placement scorer reads them: with the
    100m/200Mi container defaults, without pod-level resources."""
    return requests.scoring if requests.container_scoring is None else requests.container_scoring


def placement_score(resources: tuple[ResourceSpec, ...], assignments: PodGroupAssignments) -> int:
    """MostAllocated of the placement's nodes taken together with the proposed pods on them."""
    requested = [0] * len(resources)
    for proposed in assignments.proposed_assignments:
        asked = placement_requests(proposed.pod.requests)
        for i, spec in enumerate(resources):
            requested[i] += asked.get(spec.name)
    allocatable = [0] * len(resources)
    nodes = assignments.placement.nodes
    for i, spec in enumerate(resources):
        if requested[i] == 0 and is_scalar_resource(spec.name):
            continue  # an extended resource the group does not ask for: not scored
        allocatable[i], held = _summed_amounts(nodes, spec.name)
        requested[i] += held
    score = weight_sum = 0
    for spec, wanted, capacity in zip(resources, requested, allocatable):
        if capacity == 0:
            continue
        score += min(wanted, capacity) * MAX_SCORE // capacity * spec.weight
        weight_sum += spec.weight
    return score // weight_sum if weight_sum else 0


class NodeResourcesFitPlacement(NodeResourcesFit):
    """NodeResourcesFit with its PlacementScore (the plugin the factory makes with
    TopologyAwareWorkloadScheduling on; with it off the profile has no placement points)."""

    def score_placement(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, assignments: PodGroupAssignments
    ) -> tuple[int, Status | None]:
        return placement_score(self.args.resources, assignments), None


def new(args: FitArgs, handle: Handle) -> NodeResourcesFit:
    """NodeResourcesFit's factory in the registry: with TopologyAwareWorkloadScheduling on, the
    plugin also scores placements (upstream builds its placement scorer only then)."""
    if not handle.features.enable_topology_aware_workload_scheduling:
        return fit_new(args, handle)
    return NodeResourcesFitPlacement(args, extended_index_of(handle), dra_scorer(handle, tuple(s.name for s in args.resources)))
