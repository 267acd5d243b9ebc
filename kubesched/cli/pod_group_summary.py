"""Pod groups (GenericWorkload) as the simulation left them: one row per group for the
summary, ``-o json`` and the HTML report.

A user who runs gangs asks first "did my gang land, and where?", then "which gangs got
nothing, and why?". So each group says its policy (gang with ``minCount``, or basic), its
topology constraint, how many of its pods are placed and which are still pending, the
domain it landed in (the values of the constraint's label on its members' nodes), and the
``PodGroupScheduled`` condition the scheduler left on it. A gang none of whose pods is
bound is the all-or-nothing rule at work: it is marked so that reports call it out.

Groups are read from the scheduler's PodGroup directory (the snapshot's PodGroups with
their conditions as the run wrote them), then groups that pods name but the snapshot
lacks (their pods wait at PreEnqueue). With GenericWorkload off the scheduler keeps no
PodGroups: ``ignored_pod_groups`` counts the snapshot's, so the report can say why its
gangs were scheduled pod by pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..cluster.simulated import Simulation, SimulationResult
from ..objects.pod import PodInfo
from ..objects.podgroup import POD_GROUP_SCHEDULED, PodGroup
from ..scheduler.attempt import PodGroupCycleRecord
from ..scheduler.podgroup_results import POD_GROUP_UNSCHEDULABLE

__all__ = ["GroupCondition", "PodGroupSummary", "pod_group_summaries", "ignored_pod_groups", "POLICY_GANG",
           "POLICY_BASIC", "POLICY_MISSING"]

POLICY_GANG = "gang"
POLICY_BASIC = "basic"
POLICY_MISSING = "missing"  # pods name the group; the snapshot has no PodGroup of that name


@dataclass(slots=True, frozen=True)
class GroupCondition:
    """The group's ``PodGroupScheduled`` condition."""

    status: str  # True, False, Unknown
    reason: str
    message: str


@dataclass(slots=True)
class PodGroupSummary:
    key: str  # namespace/name
    policy: str  # POLICY_GANG, POLICY_BASIC or POLICY_MISSING
    min_count: int | None
    topology_keys: tuple[str, ...]
    members: list[str] = field(default_factory=list)  # its pods the simulation saw, pending and bound
    bound_before: list[str] = field(default_factory=list)  # already bound in the snapshot
    placed: dict[str, str] = field(default_factory=dict)  # pod -> node, placed by this run
    pending: list[str] = field(default_factory=list)  # still pending at the end (gated ones included)
    pod_message: str = ""  # the message most of its pending pods ended with, those that fit nowhere first
    domains: list[str] = field(default_factory=list)  # constraint label values of its members' nodes
    nodes: int = 0  # distinct nodes its bound members are on
    condition: GroupCondition | None = None
    cycles: int = 0  # pod-group cycles run for it
    placement: str | None = None  # the placement its last successful cycle bound
    backoff_retries: int = 0  # cycles begun by a pop from backoffQ (SchedulerPopFromBackoffQ)

    @property
    def running(self) -> int:
        """Members bound at the end: those bound before and those placed."""
        return len(self.bound_before) + len(self.placed)

    @property
    def wholly_unbound(self) -> bool:
        """A gang with pending pods and not one bound: all or nothing came out nothing."""
        return self.policy == POLICY_GANG and not self.running and bool(self.pending)

    @property
    def policy_text(self) -> str:
        if self.policy == POLICY_GANG:
            return f"gang, minCount {self.min_count}"
        if self.policy == POLICY_MISSING:
            return "no PodGroup object"
        return self.policy


def _condition(group: PodGroup) -> GroupCondition | None:
    found = group.condition(POD_GROUP_SCHEDULED)
    return GroupCondition(found.status, found.reason, found.message) if found is not None else None


def _members(pods: Iterable[PodInfo]) -> dict[str, list[PodInfo]]:
    by_group: dict[str, list[PodInfo]] = {}
    for pod in pods:
        if pod.pod_group_name:
            by_group.setdefault(f"{pod.namespace}/{pod.pod_group_name}", []).append(pod)
    return by_group


def pod_group_summaries(sim: Simulation, result: SimulationResult) -> list[PodGroupSummary]:
    """Every pod group of the run (empty with GenericWorkload off), in the snapshot's order."""
    scheduler = sim.scheduler
    if not scheduler.generic_workload:
        return []
    snap = sim.snapshot
    pending_by_group = _members(snap.pending_pods)
    bound_by_group = _members(snap.bound_pods)
    node_labels = {node.name: node.labels for node in snap.nodes}
    groups: dict[str, PodGroupSummary] = {}
    for group in scheduler.pod_groups.groups():
        groups[group.key] = PodGroupSummary(
            group.key, POLICY_GANG if group.is_gang else POLICY_BASIC, group.min_count, group.topology_keys,
            condition=_condition(group))
    for key in list(pending_by_group) + list(bound_by_group):
        if key not in groups:
            groups[key] = PodGroupSummary(key, POLICY_MISSING, None, ())
    for summary in groups.values():
        _fill_members(summary, pending_by_group.get(summary.key, []), bound_by_group.get(summary.key, []), result,
                      node_labels)
    _fill_cycles(groups, scheduler.group_cycles, result.group_backoff_retries)
    return list(groups.values())


def _fill_members(summary: PodGroupSummary, pending: list[PodInfo], bound: list[PodInfo], result: SimulationResult,
                  node_labels: Mapping[str, Mapping[str, str]]) -> None:
    nodes: list[str] = []
    for pod in bound:
        summary.members.append(pod.key)
        summary.bound_before.append(pod.key)
        nodes.append(pod.node_name or "")
    for pod in pending:
        summary.members.append(pod.key)
        outcome = result.outcomes.get(pod.key)
        if outcome is not None and outcome.node:
            summary.placed[pod.key] = outcome.node
            nodes.append(outcome.node)
        else:
            summary.pending.append(pod.key)
    summary.nodes = len(set(nodes))
    messages: dict[str, int] = {}
    for key in summary.pending:
        outcome = result.outcomes.get(key)
        if outcome is not None and outcome.message:
            messages[outcome.message] = messages.get(outcome.message, 0) + 1
    # A pod that fit nowhere says more than one that fit and waited for the rest of its gang.
    telling = {m: n for m, n in messages.items() if not m.startswith(POD_GROUP_UNSCHEDULABLE)} or messages
    if telling:
        summary.pod_message = max(telling, key=lambda m: telling[m])
    if summary.topology_keys:
        key = summary.topology_keys[0]
        summary.domains = sorted({node_labels.get(n, {}).get(key, "") for n in nodes} - {""})


def _fill_cycles(groups: dict[str, PodGroupSummary], cycles: Iterable[PodGroupCycleRecord],
                 retries: Mapping[str, int]) -> None:
    for cycle in cycles:
        summary = groups.get(cycle.group)
        if summary is None:
            continue
        summary.cycles += 1
        if cycle.placement is not None:
            summary.placement = cycle.placement
    for key, count in retries.items():
        if key in groups:
            groups[key].backoff_retries = count


def ignored_pod_groups(sim: Simulation) -> int:
    """PodGroups in the snapshot the scheduler did not keep (GenericWorkload off)."""
    return 0 if sim.scheduler.generic_workload else len(sim.snapshot.pod_groups)
