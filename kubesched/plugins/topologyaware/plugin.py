"""TopologyPlacementGenerator: a pod group with a topology constraint is tried one domain at a time.

A PodGroup's ``schedulingConstraints.topology[0].key`` (v1.36 allows one) names a node
label; the plugin answers one placement per value of that label among the parent's
nodes, named after the value, so the scheduler puts the whole group inside one zone,
rack or block. Nodes without the label belong to no placement. When members of the group
are already assumed or bound, only their domain is offered (they must all be in one;
anything else is an error). A group without a constraint gets the parent placement back.

Upstream builds the placements from a map, so their order is random; kubesched answers
them sorted by domain value, so that ``simulate`` is deterministic.

The domains are read from the node table's label index (one id per row), not by walking
the parent's nodes in Python, and kept until a node changes or another parent comes: the
scheduler hands the same parent (the snapshot's node tuple) to every group cycle, so a
cycle of a constrained group costs a few array operations however many nodes there are.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ...framework import GeneratePlacementsResult, Handle, Placement, PodGroupCycleState, PodGroupInfo, Status
from ...framework.podgroups import pod_group_state_not_found
from ...framework.views import NodeTableView
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ..gangscheduling.plugin import lister_not_found

__all__ = ["NAME", "TopologyPlacement", "new"]

NAME = "TopologyPlacementGenerator"


_ROW = operator.attrgetter("row")

Domains = list[tuple[str, tuple[NodeInfo, ...]]]
"""Each value of the key among a parent's nodes, sorted, with its nodes in the parent's order."""


class _DomainError(Exception):
    """The group's scheduled members do not name one domain."""


@dataclass(slots=True)
class _Memo:
    """A parent's domains for one key, valid while the table's nodes stay as they were."""

    parent: tuple[NodeInfo, ...]
    table: NodeTableView
    generation: int
    domains: Domains


class TopologyPlacement:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._memo: dict[str, _Memo] = {}  # by topology key

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
        domains = self._domains(key, parent.nodes)
        return GeneratePlacementsResult([Placement(d, nodes) for d, nodes in domains
                                         if required is None or d == required]), None

    def _domains(self, key: str, parent: tuple[NodeInfo, ...]) -> Domains:
        """The domains of ``key`` among ``parent``, from the memo when nothing changed."""
        table = self._handle.snapshot().table
        memo = self._memo.get(key)
        if memo is not None and memo.parent is parent and memo.table is table and \
                memo.generation == table.node_generation:
            return memo.domains
        domains = self._indexed_domains(key, parent, table)
        if domains is None:  # nodes that are not the snapshot's: read their labels one by one
            return _walked_domains(key, parent)
        self._memo[key] = _Memo(parent, table, table.node_generation, domains)
        return domains

    def _indexed_domains(self, key: str, parent: tuple[NodeInfo, ...], table: NodeTableView) -> Domains | None:
        """The domains from the table's label index; None unless every parent node is the
        snapshot's own NodeInfo at its row (then the index speaks for its labels)."""
        by_row = self._handle.snapshot().node_infos
        rows = list(map(_ROW, parent))
        try:
            if not all(map(operator.is_, map(by_row.__getitem__, rows), parent)):
                return None
        except IndexError:
            return None
        ids, vocab = table.label_column(key)
        parent_ids = ids[np.asarray(rows, dtype=np.int64)] if rows else np.zeros(0, dtype=np.int32)
        order = np.argsort(parent_ids, kind="stable")  # positions in the parent, by domain id
        sorted_ids = parent_ids[order]
        starts = np.flatnonzero(np.diff(sorted_ids, prepend=-2)).tolist()
        values = {i: v for v, i in vocab.items()}
        found: Domains = []
        for k, start in enumerate(starts):
            domain_id = int(sorted_ids[start])
            if domain_id < 0:
                continue  # nodes without the label
            end = starts[k + 1] if k + 1 < len(starts) else len(order)
            positions = order[start:end].tolist()
            found.append((values[domain_id], tuple(map(parent.__getitem__, positions))))
        found.sort(key=_domain_name)
        return found

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


def _domain_name(entry: tuple[str, tuple[NodeInfo, ...]]) -> str:
    return entry[0]


def _walked_domains(key: str, parent: tuple[NodeInfo, ...]) -> Domains:
    by_domain: dict[str, list[NodeInfo]] = {}
    for info in parent:
        domain = info.node.labels.get(key)
        if domain is not None:
            by_domain.setdefault(domain, []).append(info)
    return [(d, tuple(by_domain[d])) for d in sorted(by_domain)]


def new(args: None, handle: Handle) -> TopologyPlacement:
    return TopologyPlacement(handle)
