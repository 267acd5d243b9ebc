"""How many more whole pod groups of a shape fit: ``capacity``'s question for gangs.

cluster-capacity's loop, with a group for a replica: a copy of the PodGroup and all its
pods are created at once (as a controller creates them), the real scheduler schedules
them (its pod-group cycle: all or nothing for a gang, one placement per topology domain
when the group has a constraint), and the next copy is created once they are bound,
until one copy does not fit whole. That copy is withdrawn with its pods (a basic group,
which is not all or nothing, may have bound some: they go too, so that the cluster holds
whole groups only), and the report says why: the ``PodGroupScheduled`` condition's
message, the placements it was tried in and why each was infeasible, and its pods' own
message.

Copies are named ``<group>-<n>``, their pods ``<copy>-<i>`` (``<copy>-<template>-<i>``
when the group has pods of several templates), skipping names the snapshot has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..objects.pod import PodInfo
from ..objects.podgroup import REASON_SCHEDULER_ERROR, PodGroup
from ..scheduler.attempt import PodGroupCycleRecord
from ..scheduler.podgroup_results import POD_GROUP_UNSCHEDULABLE
from .capacity_types import (
    FAILED,
    LIMIT_REACHED,
    SCHEDULING_GATED,
    UNSCHEDULABLE,
    PodRequirements,
    Termination,
    requirements_of,
)
from .gang_shapes import GangShape
from .replicas import ReplicaSimulation

__all__ = ["GangCapacity", "GangCounter", "GangMemberCapacity", "PlacementVerdict"]


@dataclass(slots=True)
class GangMemberCapacity:
    """Pods of one template in each group, and what each asks for."""

    title: str  # e.g. "Job ml/train"
    count: int
    requirements: PodRequirements


@dataclass(slots=True)
class PlacementVerdict:
    """A placement (topology domain) the group that did not fit was tried in."""

    name: str
    nodes: int
    feasible: bool
    reason: str = ""  # why the group did not fit it
    score: int | None = None


@dataclass(slots=True)
class GangCapacity:
    name: str  # the PodGroup's name
    namespace: str
    source: str
    policy: str  # "gang" or "basic"
    min_count: int | None
    topology_keys: list[str]
    pods_per_group: int
    members: list[GangMemberCapacity]
    groups: int  # how many whole groups fit
    per_domain: dict[str, int]  # topology domain -> groups placed there (constrained groups), most first
    per_node: dict[str, int]  # node -> pods of the groups placed there, most first
    termination: Termination
    placements: list[PlacementVerdict] = field(default_factory=list)  # the group that did not fit, per placement
    pod_message: str = ""  # the first of its pods left pending: the scheduler's message
    withdrawn_bound: int = 0  # pods of that group that were bound, withdrawn with it (basic groups)
    notes: list[str] = field(default_factory=list)  # gates that change what the shape means

    @property
    def title(self) -> str:
        return f"PodGroup {self.namespace}/{self.name}"


def _gate_notes(shape: GangShape, gang_scheduling: bool, placements: bool) -> list[str]:
    notes = []
    if shape.group.is_gang and not gang_scheduling:
        notes.append("GangScheduling is off: the group is scheduled in one cycle but not all or nothing "
                     "(upstream's behaviour with the gate off); only whole groups are counted")
    if shape.group.topology_keys and not placements:
        notes.append("TopologyAwareWorkloadScheduling is off: the topology constraint is not applied, as upstream")
    return notes


class GangCounter:
    """One shape's copies: their names, where their pods went, and why the last did not fit."""

    def __init__(self, shape: GangShape, index: int, taken_pods: set[str], taken_groups: set[str],
                 node_labels: Mapping[str, Mapping[str, str]], gang_scheduling: bool, placements: bool) -> None:
        self.shape = shape
        self._index = index
        self._taken_pods = taken_pods
        self._taken_groups = taken_groups
        self._node_labels = node_labels
        self._next = 0
        self.count = 0  # whole groups placed
        self.per_domain: dict[str, int] = {}
        self.per_node: dict[str, int] = {}
        self.termination = Termination(LIMIT_REACHED, "")
        self.placements: list[PlacementVerdict] = []
        self.pod_message = ""
        self.withdrawn_bound = 0
        self.notes = _gate_notes(shape, gang_scheduling, placements)

    @property
    def name(self) -> str:
        return self.shape.group.name

    def stop_at_limit(self, limit: int) -> None:
        self.termination = Termination(LIMIT_REACHED, f"the limit of {limit} group(s) was reached")

    def _free(self, name: str) -> bool:
        ns = self.shape.group.namespace
        if f"{ns}/{name}" in self._taken_groups:
            return False
        return all(f"{ns}/{pod}" not in self._taken_pods for pod in self._pod_names(name))

    def _pod_names(self, group_name: str) -> list[str]:
        members = self.shape.members
        if len(members) == 1:
            return [f"{group_name}-{i}" for i in range(members[0].count)]
        return [f"{group_name}-{m.template.name}-{i}" for m in members for i in range(m.count)]

    def next_copy(self) -> tuple[PodGroup, list[PodInfo]]:
        """The next copy of the PodGroup and its pods, named apart from the snapshot's."""
        group = self.shape.group
        while not self._free(f"{group.name}-{self._next}"):
            self._next += 1
        ordinal = self._next
        self._next += 1
        name = f"{group.name}-{ordinal}"
        uid = f"capacity-group-{self._index}-{ordinal}"
        raw: dict[str, Any] = dict(group.raw or {})
        raw["metadata"] = {**dict(raw.get("metadata") or {}), "name": name, "uid": uid}
        raw.pop("status", None)
        copy = replace(group, name=name, uid=uid, raw=raw, conditions=(), resource_claim_statuses=())
        names = iter(self._pod_names(name))
        pods = []
        for m, member in enumerate(self.shape.members):
            t = member.template
            for i in range(member.count):
                pod_name = next(names)
                pod_uid = f"{uid}-{m}-{i}"
                labels = t.labels_for(pod_name, i)
                spec = {**t.pod["spec"], "schedulingGroup": {"podGroupName": name}}
                meta = {**t.pod["metadata"], "name": pod_name, "uid": pod_uid, "labels": labels}
                pods.append(t.parsed.copy_with(name=pod_name, uid=pod_uid, labels=labels, pod_group_name=name,
                                               raw={**t.pod, "metadata": meta, "spec": spec}))
        return copy, pods

    def place_next(self, sim: ReplicaSimulation) -> bool:
        """Create the next copy and schedule it: True when every pod of it is bound."""
        group, pods = self.next_copy()
        outcomes = sim.place_group(group, pods)
        nodes = [o.node for o in outcomes if o.node]
        if len(nodes) == len(pods):
            self.count += 1
            for node in nodes:
                self.per_node[node] = self.per_node.get(node, 0) + 1
            for key in self.shape.group.topology_keys[:1]:
                domains = {self._node_labels.get(node, {}).get(key, "") for node in nodes}
                if len(domains) == 1:
                    domain = domains.pop()
                    self.per_domain[domain] = self.per_domain.get(domain, 0) + 1
            return True
        self.withdrawn_bound = len(nodes)
        left = [o for o in outcomes if not o.node]
        pending = next((o for o in left if not o.message.startswith(POD_GROUP_UNSCHEDULABLE)), left[0] if left else None)
        self.pod_message = pending.message if pending is not None else ""  # one that fit nowhere, rather than one that waited
        self.termination = self._termination(_last_cycle(sim, group.key), len(nodes), len(pods),
                                             pending.gated if pending is not None else False)
        sim.withdraw_group(group, pods)
        return False

    def _termination(self, cycle: PodGroupCycleRecord | None, bound: int, size: int, gated: bool) -> Termination:
        if cycle is None:  # no group cycle ran: its pods wait at PreEnqueue
            return Termination(SCHEDULING_GATED if gated else FAILED, self.pod_message or "the group was never tried")
        self.placements = [PlacementVerdict(t.name, t.nodes, t.feasible, t.reason, t.score) for t in cycle.placements]
        if cycle.condition is not None and cycle.condition[1] == REASON_SCHEDULER_ERROR:
            return Termination(FAILED, cycle.condition[2] or cycle.status)
        if cycle.status:
            message = cycle.condition[2] if cycle.condition is not None and cycle.condition[2] else cycle.status
            return Termination(UNSCHEDULABLE, message)
        return Termination(UNSCHEDULABLE, f"{bound}/{size} pods of the group were bound: {self.pod_message}")

    def result(self) -> GangCapacity:
        s, g = self.shape, self.shape.group
        members = [GangMemberCapacity(m.template.title, m.count, requirements_of(m.template.parsed)) for m in s.members]
        return GangCapacity(
            g.name, g.namespace, s.source, "gang" if g.is_gang else "basic", g.min_count, list(g.topology_keys), s.size,
            members, self.count, _most_first(self.per_domain), _most_first(self.per_node), self.termination,
            self.placements, self.pod_message, self.withdrawn_bound, self.notes)


def _most_first(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _last_cycle(sim: ReplicaSimulation, group_key: str) -> PodGroupCycleRecord | None:
    for cycle in reversed(sim.scheduler.group_cycles):
        if cycle.group == group_key:
            return cycle
    return None
