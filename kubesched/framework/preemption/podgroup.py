"""Preemption for a whole pod group (upstream's ``PodGroupEvaluator``, WorkloadAwarePreemption:
``podgrouppreemption.go`` and ``types.go``).

A pod group that fits nowhere is one preemptor, with the PodGroup's priority (0 when it
has none) and preemption policy Never if any of its pods says Never. Its domain is the
whole cluster, and what it may evict are *victims*, atomic units:

* a pod, alone;
* every pod of a PodGroup whose ``disruptionMode`` is ``PodGroup``, together, with the
  group's priority (a group with ``disruptionMode: Pod``, or none, or a PodGroup not
  found, leaves its pods to be victims one by one, each with its own priority).

The victims of lower priority than the preemptor are all taken off the cluster, and the
group's algorithm is run again without PostFilter plugins (``schedule``); if the group
does not fit even then, that run's status is the answer. Otherwise victims are reprieved
one at a time, the most important first, those whose eviction would violate a
PodDisruptionBudget before the others: a victim put back stays when the group still fits.
The ones that do not stay are evicted, the most important first.

Importance (``more_important_victim``): higher priority; at equal priority a pod group
before a single pod; two single pods, the one started first; two groups, the larger, then
the one whose earliest pod started first. A victim is a "pod group" here when its first
pod names a group at all, whatever its disruption mode, as upstream tests it.

Upstream collects the victims in a Go map, so victims equally important on every count
reach its (unstable) sort in a random order. ``PodGroupEvaluator`` takes them in the
cluster's order (nodes in snapshot order, pods in each node's order, a group where its
first pod is) and sorts them as Go's ``sort.Slice`` does: deterministic. Given a random
source it shuffles them first, as upstream's map iteration would.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ...objects.podgroup import DISRUPTION_MODE_POD_GROUP, PodGroup
from ..podgroup_post_filter import DryRunSnapshot, PodGroupSchedulingFunc
from ..status import Code, Status
from .gosort import go_sort_slice
from .pdb import DisruptionBudget
from .victims import started

__all__ = [
    "GROUP_NOT_ELIGIBLE_NEVER",
    "NO_GROUP_VICTIMS",
    "GroupPreemptor",
    "PodGroupEvaluator",
    "PodGroupLookup",
    "Victim",
    "domain_victims",
    "group_preemptor",
    "more_important_victim",
    "pod_group_priority",
    "preemptible_group",
    "split_victims_by_pdb_violation",
]

GROUP_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NO_GROUP_VICTIMS = "No preemption victims found for incoming preemptor"

PodGroupLookup = Callable[[str, str], "PodGroup | None"]
"""A PodGroup by namespace and name (the PodGroup informer's lister); None: not found."""


def pod_group_priority(group: PodGroup) -> int:
    """upstream's ``PodGroupPriority``: ``spec.priority``, or 0 when the group has none."""
    return group.priority if group.priority is not None else 0


@dataclass(slots=True)
class GroupPreemptor:
    """The group making room (upstream's ``podGroupPreemptor``)."""

    pod_group: PodGroup
    pods: list[PodInfo]
    priority: int
    preemption_policy: str


def group_preemptor(group: PodGroup, pods: Sequence[PodInfo]) -> GroupPreemptor:
    """The group's priority; its policy is Never when any of its pods' is."""
    never = any(p.preemption_policy == "Never" for p in pods)
    return GroupPreemptor(group, list(pods), pod_group_priority(group), "Never" if never else "PreemptLowerPriority")


@dataclass(slots=True)
class Victim:
    """What is evicted as one unit: a pod, or every placed pod of a PodGroup whose
    disruption mode is ``PodGroup``; ``nodes`` are those its pods are on."""

    pods: list[PodInfo]
    priority: int
    nodes: dict[str, NodeInfo] = field(default_factory=dict)

    @property
    def is_pod_group(self) -> bool:
        """upstream's ``IsPodGroup``: the first pod names a group (even with disruptionMode Pod)."""
        return self.pods[0].pod_group_name is not None

    @property
    def earliest_start(self) -> float:
        """The earliest start among its pods (a pod not started yet counts as starting now)."""
        return min(started(p) for p in self.pods) if self.pods else math.inf


def more_important_victim(a: Victim, b: Victim) -> bool:
    """upstream's ``moreImportantVictim``: whether ``a`` should be kept before ``b``."""
    if a.priority != b.priority:
        return a.priority > b.priority
    if a.is_pod_group != b.is_pod_group:
        return a.is_pod_group
    if not a.is_pod_group:
        return a.earliest_start < b.earliest_start
    if len(a.pods) != len(b.pods):
        return len(a.pods) > len(b.pods)
    return a.earliest_start < b.earliest_start


def preemptible_group(pod: PodInfo, lookup: PodGroupLookup) -> PodGroup | None:
    """upstream's ``isPodGroupPreemptiblePod``: the pod's PodGroup when it is evicted as a
    whole (found, ``disruptionMode: PodGroup``); None when the pod is a victim alone."""
    if pod.pod_group_name is None:
        return None
    group = lookup(pod.namespace, pod.pod_group_name)
    if group is None or group.disruption_mode != DISRUPTION_MODE_POD_GROUP:
        return None
    return group


def domain_victims(nodes: Sequence[NodeInfo], lookup: PodGroupLookup) -> list[Victim]:
    """upstream's ``newDomainForWorkloadPreemption``: every pod on ``nodes`` in its unit, in
    the cluster's order (see the module's docstring)."""
    by_key: dict[str, Victim] = {}
    for node in nodes:
        for pod in node.pods.values():
            group = preemptible_group(pod, lookup)
            if group is None:
                by_key["pod/" + pod.uid] = Victim([pod], pod.priority, {node.name: node})
                continue
            key = "group/" + (group.uid or group.key)
            found = by_key.get(key)
            if found is None:
                by_key[key] = Victim([pod], pod_group_priority(group), {node.name: node})
            else:
                found.pods.append(pod)
                found.nodes[node.name] = node
    return list(by_key.values())


def split_victims_by_pdb_violation(victims: Sequence[Victim],
                                   pdbs: Sequence[DisruptionBudget]) -> tuple[list[Victim], list[Victim]]:
    """upstream's ``filterVictimsWithPDBViolation``, each list in the order given. A unit
    violates when one of its pods does: a pod uses up one disruption of each budget that
    covers it (and does not list it as disrupted) until one goes below zero; the pods of
    a unit after its first violating one use nothing up."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]

    def violates(pod: PodInfo) -> bool:
        if not pod.labels:
            return False
        for i, pdb in enumerate(pdbs):
            if not pdb.covers(pod) or pod.name in pdb.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                return True
        return False

    violating: list[Victim] = []
    fine: list[Victim] = []
    for victim in victims:
        (violating if any(violates(p) for p in victim.pods) else fine).append(victim)
    return violating, fine


class PodGroupEvaluator:
    """Chooses a pod group's victims (upstream's ``PodGroupEvaluator.selectVictimsOnDomain``);
    the plugin's executor evicts them. ``rng`` given: equally important victims are first
    put in a random order, as upstream's map gives them."""

    def __init__(self, lookup: PodGroupLookup, pdbs: Callable[[], list[DisruptionBudget]],
                 rng: random.Random | None = None) -> None:
        self.lookup = lookup
        self._pdbs = pdbs
        self.rng = rng

    def select_victims(self, group: PodGroup, pods: Sequence[PodInfo], schedule: PodGroupSchedulingFunc,
                       snapshot: DryRunSnapshot) -> tuple[list[PodInfo], Status | None]:
        """The pods to evict, most important unit first (a unit's pods together), and None;
        or no pods and why the group cannot preempt (Unschedulable for its policy,
        UnschedulableAndUnresolvable when nothing may be evicted, the dry run's status when
        even evicting everything allowed does not make it fit, an Error)."""
        preemptor = group_preemptor(group, pods)
        if preemptor.preemption_policy == "Never":
            return [], Status(Code.UNSCHEDULABLE, GROUP_NOT_ELIGIBLE_NEVER)
        potential = [v for v in domain_victims(snapshot.list(), self.lookup) if v.priority < preemptor.priority]
        if not potential:
            return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_GROUP_VICTIMS)
        try:
            for victim in potential:
                for pod in victim.pods:
                    snapshot.remove_pod(pod)
            status = schedule()
            if status is not None and not status.is_success():
                return [], status
            if self.rng is not None:
                self.rng.shuffle(potential)
            go_sort_slice(potential, more_important_victim)
            violating, fine = split_victims_by_pdb_violation(potential, self._pdbs())
            evicted: list[Victim] = []
            for victim in violating + fine:
                for pod in victim.pods:
                    snapshot.add_pod(pod)
                status = schedule()
                if status is None or status.is_success():
                    continue  # reprieved: the group fits beside it
                for pod in victim.pods:
                    snapshot.remove_pod(pod)
                evicted.append(victim)
        except Exception as err:  # the snapshot refused a change: upstream's AsStatus(err)
            return [], Status.as_error(err)
        go_sort_slice(evicted, more_important_victim)
        return [pod for victim in evicted for pod in victim.pods], None
