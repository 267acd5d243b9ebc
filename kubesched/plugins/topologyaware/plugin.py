"""TopologyPlacementGenerator: a pod group with a topology constraint is tried one domain at a time.

A PodGroup's ``schedulingConstraints.topology[0].key`` (v1.36 allows one) names a node
label; the plugin answers one placement per value of that label among the parent's
nodes, named after the value, so the scheduler puts the whole group inside one zone,
rack or block. Nodes without the label belong to no placement. When members of the group
are already assumed or bound, only their domain is offered (they must all be in one;
anything else is an error). A group without a constraint gets the parent placement back.

Upstream builds the placements from a map, so their order is random; kubesched answers
them sorted by domain value, so that ``simulate`` is deterministic.
"""

from __future__ import annotations

from ...framework import GeneratePlacementsResult, Handle, Placement, PodGroupCycleState, PodGroupInfo, Status
from ...framework.podgroups import pod_group_state_not_found
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ..gangscheduling.plugin import lister_not_found

__all__ = ["NAME", "TopologyPlacement", "new"]

NAME = "TopologyPlacementGenerator"


class _DomainError(Exception):
    """The group's scheduled members do not name one domain."""


class TopologyPlacement:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def generate_placements(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, parent: Placement
    ) -> tuple[GeneratePlacementsResult | None, Status | None]:
        manager = self._handle.pod_group_manager
        group = manager.pod_group(pod_group.namespace, pod_group.name)
        if group is None:
            return None, Status.as_error(LookupError(lister_not_found(pod_group.name)))
        if not group.topology_keys:
            return GeneratePlacementsResult([parent]), None
        key = group.topology_keys[0]
        group_state = manager.pod_group_states().get(pod_group.namespace, pod_group.name)
        if group_state is None:
            return None, Status.as_error(LookupError(pod_group_state_not_found(pod_group.namespace, pod_group.name)))
        required: str | None = None
        scheduled = group_state.scheduled_pods()
        if scheduled:
            try:
                required = self._scheduled_domain(key, scheduled)
            except _DomainError as err:
                return None, Status.as_error(
                    RuntimeError(f"cannot determine domain for already scheduled pods: {err}"))
        by_domain: dict[str, list[NodeInfo]] = {}
        for info in parent.nodes:
            domain = info.node.labels.get(key)
            if domain is not None and (required is None or domain == required):
                by_domain.setdefault(domain, []).append(info)
        return GeneratePlacementsResult([Placement(d, tuple(by_domain[d])) for d in sorted(by_domain)]), None

    def _scheduled_domain(self, key: str, scheduled: list[PodInfo]) -> str:
        """The one domain of the members already assumed or bound."""
        snapshot = self._handle.snapshot()
        found = ""
        for pod in scheduled:
            info = snapshot.get(pod.node_name)
            if info is None:
                raise _DomainError(f"getting node for pod {pod.key}: nodeinfo not found for node name "
                                   f"\"{pod.node_name}\"")
            domain = info.node.labels.get(key)
            if domain is None:
                raise _DomainError(f"no topology domain found for pod {pod.key}")
            if found and found != domain:
                raise _DomainError(f"more than 1 domain found for pod group: {found}, {domain}")
            found = domain
        return found


def new(args: None, handle: Handle) -> TopologyPlacement:
    return TopologyPlacement(handle)
