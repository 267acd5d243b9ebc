"""Which nodes cluster-autoscaler's scale-down would remove, and where their pods would go.

cluster-autoscaler's planner (``core/scaledown/planner``, ``eligibility``,
``simulator/cluster.go``) in one pass over a snapshot:

1. Every node is checked for eligibility first, on the cluster as it is: a node annotated
   ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"``, or already tainted
   ``ToBeDeletedByClusterAutoscaler``, is kept; so is one whose utilisation
   (``utilization``) is not below the threshold.
2. The candidates are taken in order, empty ones first (nothing to move), each as
   cluster-autoscaler's ``SimulateNodeRemoval`` does: its pods go through the
   drainability rules (``drainability``), a blocking pod keeping the node; otherwise the
   node is tainted ``ToBeDeletedByClusterAutoscaler:NoSchedule`` and the pods to move are
   scheduled elsewhere; if every one fits, the node is removed (with its DaemonSet and
   mirror pods) and the pods stay where they went, so the next candidate is checked with
   them there, its budgets counted down and this node no destination any more (the
   greedy choice of cluster-autoscaler's ``categorizeNodes``); if one does not fit, the
   node is kept and its pods go back.

Where cluster-autoscaler checks only the scheduler's filters and takes the first node that
passes, the pods here are placed by the real scheduler (the configuration's profiles,
filters and scores, in queue order), so the answer also says where each would go. A moved
pod never preempts (``preemptionPolicy: Never`` on the copy), as cluster-autoscaler's
simulation does not; a pod that tolerates the ``ToBeDeletedByClusterAutoscaler`` taint
(a catch-all toleration) is kept off the node being removed by a ``metadata.name NotIn``
node affinity term, as cluster-autoscaler keeps it off by excluding the node from the
destinations. Pods still pending after the run are not part of the simulation.

Not modelled: node groups (their minimum sizes, which nodes are autoscaled: every node
is a candidate), ``--scale-down-unneeded-time`` and the other delays, unready nodes,
resource limits, and the parallelism caps on how many nodes one loop deletes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..cluster.simulated import PodOutcome, Simulation, SimulationResult
from ..cluster.snapshot import ClusterSnapshot
from ..framework.config import SchedulerConfig
from ..framework.preemption.pdb import PDB_KIND
from ..framework.registry import Registry
from ..objects.node import Node
from ..objects.pod import PodInfo
from ..objects.selectors import NODE_NAME_FIELD, NodeSelector, NodeSelectorTerm, Requirement
from ..objects.taints import Taint
from .drainability import DAEMONSET, MOVE, BudgetTracker, DrainOptions, local_volumes, pod_drainability
from .utilization import Utilization, node_utilization

__all__ = ["ScaleDownOptions", "ScaleDownResult", "RemovableNode", "KeptNode", "PodMove", "plan_scale_down",
           "cluster_after", "SCALE_DOWN_DISABLED", "TO_BE_DELETED_TAINT"]

SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
_NEVER = "Never"


@dataclass(frozen=True, slots=True)
class ScaleDownOptions:
    """cluster-autoscaler's scale-down flags, with their defaults."""

    utilization_threshold: float = 0.5  # --scale-down-utilization-threshold
    gpu_utilization_threshold: float = 0.5  # --scale-down-gpu-utilization-threshold
    ignore_daemonsets_utilization: bool = False
    ignore_mirror_pods_utilization: bool = False
    drain: DrainOptions = DrainOptions()


@dataclass(slots=True)
class PodMove:
    pod: str  # namespace/name
    node: str  # where it goes


@dataclass(slots=True)
class RemovableNode:
    """A node scale-down removes: its pods to move and where each goes, the DaemonSet pods
    that go with it. ``risky``: its budgets do not allow all its pods at once
    (cluster-autoscaler's ``IsRisky``: the evictions wait for replacements)."""

    node: str
    utilization: Utilization
    moves: list[PodMove] = field(default_factory=list)
    daemonset_pods: list[str] = field(default_factory=list)
    risky: bool = False


@dataclass(slots=True)
class KeptNode:
    """A node scale-down keeps: cluster-autoscaler's ``UnremovableReason`` name and a sentence;
    for a pod that keeps it, the pod and cluster-autoscaler's ``BlockingPodReason``."""

    node: str
    reason: str
    message: str
    utilization: Utilization | None = None
    pod: str = ""
    pod_reason: str = ""


@dataclass(slots=True)
class ScaleDownResult:
    options: ScaleDownOptions
    removable: list[RemovableNode]  # in the order chosen
    kept: list[KeptNode]  # in the snapshot's node order

    @property
    def destinations(self) -> dict[str, str]:
        """Every moved pod's last node: a pod moved onto a node removed later moves again."""
        out: dict[str, str] = {}
        for node in self.removable:
            for move in node.moves:
                out[move.pod] = move.node
        return out


def cluster_after(snapshot: ClusterSnapshot, result: SimulationResult) -> ClusterSnapshot:
    """The cluster once a run is over: the snapshot's bound pods but those preempted, the
    pending pods the run placed where it placed them, nothing pending."""
    victims = {victim for victim, _, _ in result.preemptions}
    placed = {key: outcome.node for key, outcome in result.outcomes.items() if outcome.node}
    bound = [pod for pod in snapshot.bound_pods if pod.key not in victims]
    bound += [pod.copy_with(node_name=placed[pod.key]) for pod in snapshot.pending_pods if pod.key in placed]
    return dataclasses.replace(snapshot, bound_pods=bound, pending_pods=[])


def plan_scale_down(snapshot: ClusterSnapshot, config: SchedulerConfig, registry: Registry | None = None,
                    options: ScaleDownOptions = ScaleDownOptions(), tie_break: str = "heap",
                    seed: int | None = None) -> ScaleDownResult:
    """The nodes of ``snapshot`` (its bound pods; pending pods are left out) that scale-down
    removes, in the order it picks them, and the ones it keeps, with why. Local storage is
    read from the bound pods' documents: load the snapshot with ``keep_raw_objects``."""
    return _Planner(snapshot, config, registry, options, tie_break, seed).plan()


class _Planner:
    def __init__(self, snapshot: ClusterSnapshot, config: SchedulerConfig, registry: Registry | None,
                 options: ScaleDownOptions, tie_break: str, seed: int | None) -> None:
        self.options = options
        self.order = [node.name for node in snapshot.nodes]
        self.sim = Simulation(dataclasses.replace(snapshot, pending_pods=[]), config, registry, tie_break=tie_break,
                              seed=seed)
        self.local = {pod.uid: found for pod in snapshot.bound_pods if (found := local_volumes(pod.raw))}
        self.budgets = BudgetTracker.from_objects(snapshot.objects.get(PDB_KIND, []), snapshot.bound_pods)
        self.profile = next(iter(self.sim.scheduler.profiles))
        self.moved = 0

    def plan(self) -> ScaleDownResult:
        kept: dict[str, KeptNode] = {}
        candidates: list[tuple[str, Utilization]] = []
        for name in self.order:
            found = self._eligibility(name)
            if isinstance(found, KeptNode):
                kept[name] = found
            else:
                candidates.append((name, found))
        candidates.sort(key=lambda c: not self._empty(c[0]))  # stable: empty nodes first, each in node order
        removable: list[RemovableNode] = []
        for name, utilization in candidates:
            outcome = self._simulate_removal(name, utilization)
            if isinstance(outcome, KeptNode):
                kept[name] = outcome
            else:
                removable.append(outcome)
        return ScaleDownResult(self.options, removable, [kept[n] for n in self.order if n in kept])

    # --- eligibility ----------------------------------------------------------------------
    def _eligibility(self, name: str) -> KeptNode | Utilization:
        info = self.sim.scheduler.cache.nodes[name]
        node = info.node
        if any(t.key == TO_BE_DELETED_TAINT for t in node.taints):
            return KeptNode(name, "CurrentlyBeingDeleted", f"already tainted {TO_BE_DELETED_TAINT}: being deleted")
        if node.annotations.get(SCALE_DOWN_DISABLED) == "true":
            return KeptNode(name, "ScaleDownDisabledAnnotation", f'annotated {SCALE_DOWN_DISABLED}: "true"')
        utilization = node_utilization(node.allocatable, info.pods.values(), self.options.ignore_daemonsets_utilization,
                                       self.options.ignore_mirror_pods_utilization)
        threshold = (self.options.gpu_utilization_threshold if utilization.gpu is not None
                     else self.options.utilization_threshold)
        if utilization.value >= threshold:
            return KeptNode(name, "NotUnderutilized", f"not underutilized: {utilization.value:.2f} "
                                                      f"({utilization.resource}, threshold {threshold:g})", utilization)
        return utilization

    def _empty(self, name: str) -> bool:
        """cluster-autoscaler's empty-first sorting: no pod to move and none blocking."""
        for pod in self.sim.scheduler.cache.nodes[name].pods.values():
            verdict = pod_drainability(pod, self.local.get(pod.uid, ()), self.budgets, self.options.drain)
            if verdict.outcome == MOVE or verdict.blocks:
                return False
        return True

    # --- one node -------------------------------------------------------------------------
    def _simulate_removal(self, name: str, utilization: Utilization) -> RemovableNode | KeptNode:
        info = self.sim.scheduler.cache.nodes[name]
        to_move: list[PodInfo] = []
        daemonset: list[str] = []
        for pod in list(info.pods.values()):
            verdict = pod_drainability(pod, self.local.get(pod.uid, ()), self.budgets, self.options.drain)
            if verdict.blocks:
                return KeptNode(name, "BlockedByPod", verdict.message, utilization, pod.key, verdict.reason)
            if verdict.outcome == MOVE:
                to_move.append(pod)
            elif verdict.outcome == DAEMONSET:
                daemonset.append(pod.key)
        moves, failure = self._move(info.node, to_move)
        if failure:
            return KeptNode(name, "NoPlaceToMovePods", failure, utilization)
        risky = not self.budgets.can_remove_together(to_move)
        self.budgets.remove(to_move)
        self._remove(name)
        return RemovableNode(name, utilization, moves, daemonset, risky)

    def _move(self, node: Node, pods: Sequence[PodInfo]) -> tuple[list[PodMove], str]:
        """Schedule ``pods`` off ``node`` (tainted meanwhile): where each went, or why the
        first that did not fit could not (then everything is as before)."""
        if not pods:
            return [], ""
        s = self.sim.scheduler
        tainted = dataclasses.replace(node, taints=(*node.taints, Taint(TO_BE_DELETED_TAINT, "", "NoSchedule")))
        s.on_node_update(node, tainted)
        copies: list[PodInfo] = []
        for pod in pods:
            s.on_pod_delete(pod)
            copies.append(self._copy(pod, node.name))
        for copy in copies:
            self.sim.outcomes[copy.key] = PodOutcome(copy.key)
            s.on_pod_add(copy)
        self.sim.run()
        self.sim.cluster.bindings.clear()  # each run lists every binding so far: keep that to this node's
        outcomes = [self.sim.outcomes[copy.key] for copy in copies]
        if all(outcome.node for outcome in outcomes):
            return [PodMove(copy.key, str(outcome.node)) for copy, outcome in zip(copies, outcomes)], ""
        failed = next(o for o in outcomes if not o.node)
        why = f"pod {failed.pod} cannot move: {failed.message or 'not scheduled'}"
        for copy in copies:  # back as it was
            bound = s.cache.get_pod(copy.uid)
            s.on_pod_delete(bound if bound is not None else copy)
        for pod in pods:
            s.on_pod_add(pod)
        s.on_node_update(tainted, node)
        return [], why

    def _copy(self, pod: PodInfo, leaving: str) -> PodInfo:
        """``pod`` as its controller recreates it: unbound, a new uid, never preempting, ours
        to schedule; kept off ``leaving`` when it tolerates the taint marking it."""
        self.moved += 1
        changes: dict[str, object] = {"node_name": "", "uid": f"{pod.uid}/moved-{self.moved}", "nominated_node_name": "",
                                      "preemption_policy": _NEVER, "terminating": False, "start_time": None}
        if pod.scheduler_name not in self.sim.scheduler.profiles:
            changes["scheduler_name"] = self.profile  # cluster-autoscaler's simulation ignores schedulerName
        taint = Taint(TO_BE_DELETED_TAINT, "", "NoSchedule")
        if any(t.tolerates(taint) for t in pod.tolerations):
            changes["required_node_affinity"] = _excluding(pod.required_node_affinity, leaving)
            changes["node_affinity_set"] = True
        copy = pod.copy_with(**changes)
        if pod.uid in self.local:
            self.local[copy.uid] = self.local[pod.uid]
        return copy

    def _remove(self, name: str) -> None:
        """The node goes, with what is left on it (DaemonSet and mirror pods)."""
        s = self.sim.scheduler
        info = s.cache.nodes[name]
        for pod in list(info.pods.values()):
            s.on_pod_delete(pod)
        s.on_node_delete(info.node)


def _excluding(selector: NodeSelector | None, node: str) -> NodeSelector:
    """``selector`` ANDed with ``metadata.name NotIn [node]`` (each non-empty term; an empty
    term matches no node and stays so)."""
    excluded = Requirement(NODE_NAME_FIELD, "NotIn", frozenset({node}), 0, (node,))
    if selector is None:
        return NodeSelector((NodeSelectorTerm((), (excluded,)),))
    return NodeSelector(tuple(term if term.is_empty() else NodeSelectorTerm(term.expressions, (*term.fields, excluded))
                              for term in selector.terms))
