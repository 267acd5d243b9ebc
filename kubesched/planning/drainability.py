"""Which pods cluster-autoscaler's scale-down may move, by its drainability rules.

cluster-autoscaler (``simulator/drainability/rules``) asks every pod of a node whether it
can be drained, rule by rule, the first rule with an answer deciding: a mirror pod is
skipped (it goes with the node); a DaemonSet pod, a pod annotated
``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`` or a finished pod may go; then
a pod blocks the node's removal when it has no controller (or, by default, a controller
of a kind it does not know to recreate pods: ``--skip-nodes-with-custom-controller-pods``),
lives in ``kube-system`` with no PodDisruptionBudget (``--skip-nodes-with-system-pods``),
is annotated ``safe-to-evict: "false"``, has local storage (a ``hostPath`` or a disk-backed
``emptyDir`` not listed in ``safe-to-evict-local-volumes``: ``--skip-nodes-with-local-storage``),
or is covered by a budget that allows no more disruptions. ``on-completion`` makes scale-down
wait for the pod to finish: the node is kept.

Budgets are counted down as scale-down picks nodes (its ``RemainingPdbTracker``): a budget
that allowed one disruption lets the first node go and keeps the next.

Not modelled: the rules that read controllers through listers (a missing ReplicaSet,
a replica count below ``--min-replica-count``, default 0) and long-terminating pods
(no clock in a snapshot).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cluster.what_if import disruptions_allowed
from ..framework.preemption.pdb import DisruptionBudget, parse_pdb
from ..objects.pod import OwnerRef, PodInfo

__all__ = ["DrainOptions", "Drainability", "BudgetTracker", "pod_drainability", "local_volumes", "is_daemonset_pod",
           "is_mirror_pod", "SAFE_TO_EVICT", "SAFE_TO_EVICT_LOCAL_VOLUMES", "DAEMONSET_POD_ANNOTATION",
           "MOVE", "DAEMONSET", "SKIP", "BLOCKED", "WAIT"]

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
DAEMONSET_POD_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
ON_COMPLETION = "on-completion"
# Controllers cluster-autoscaler counts on to recreate a pod (its ``replicatedKind``).
REPLICATED_KINDS = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet"})

# Outcomes.
MOVE = "move"  # evicted and rescheduled elsewhere
DAEMONSET = "daemonset"  # evicted with the node, not rescheduled
SKIP = "skip"  # a mirror pod: goes with the node
BLOCKED = "blocked"
WAIT = "wait"  # safe-to-evict: on-completion: scale-down waits for it


@dataclass(frozen=True, slots=True)
class DrainOptions:
    """cluster-autoscaler's ``NodeDeleteOptions`` (its flags' defaults)."""

    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True


@dataclass(frozen=True, slots=True)
class Drainability:
    """One pod's answer: ``outcome`` (MOVE, DAEMONSET, SKIP, BLOCKED, WAIT) and, when it keeps
    the node, cluster-autoscaler's ``BlockingPodReason`` name and a sentence saying why."""

    outcome: str
    reason: str = ""
    message: str = ""

    @property
    def blocks(self) -> bool:
        return self.outcome in (BLOCKED, WAIT)


def is_mirror_pod(pod: PodInfo) -> bool:
    return MIRROR_ANNOTATION in pod.annotations


def _controller(pod: PodInfo) -> OwnerRef | None:
    for owner in pod.owner_references:
        if owner.controller:
            return owner
    return None


def is_daemonset_pod(pod: PodInfo) -> bool:
    """``pod_util.IsDaemonSetPod``: a DaemonSet controller, or the annotation saying so."""
    owner = _controller(pod)
    return (owner is not None and owner.kind == "DaemonSet") or pod.annotations.get(DAEMONSET_POD_ANNOTATION) == "true"


def local_volumes(raw: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The names of a pod's local volumes, as ``drain.isLocalVolume`` sees them: ``hostPath``,
    and ``emptyDir`` not backed by memory. Read from the pod's document (the compact record
    keeps volume names only)."""
    spec = raw.get("spec") if raw is not None else None
    volumes = spec.get("volumes") if isinstance(spec, Mapping) else None
    names: list[str] = []
    for volume in volumes if isinstance(volumes, list) else ():
        if not isinstance(volume, Mapping):
            continue
        empty_dir = volume.get("emptyDir")
        in_memory = isinstance(empty_dir, Mapping) and empty_dir.get("medium") == "Memory"
        if volume.get("hostPath") is not None or (empty_dir is not None and not in_memory):
            names.append(str(volume.get("name") or ""))
    return tuple(names)


@dataclass(slots=True)
class _Budget:
    budget: DisruptionBudget
    remaining: int


@dataclass(slots=True)
class BudgetTracker:
    """cluster-autoscaler's ``RemainingPdbTracker``: the budgets, and how many more
    disruptions each allows as pods are taken off removed nodes."""

    budgets: list[_Budget] = field(default_factory=list)

    @classmethod
    def from_objects(cls, raw_budgets: Iterable[Mapping[str, Any]], bound: Sequence[PodInfo]) -> "BudgetTracker":
        """The budgets of a snapshot: ``status.disruptionsAllowed`` when the disruption controller
        wrote it, otherwise what it would write with every matching bound pod healthy."""
        out = cls()
        for raw in raw_budgets:
            budget = parse_pdb(raw)
            healthy = sum(1 for pod in bound if budget.covers(pod))
            out.budgets.append(_Budget(budget, disruptions_allowed(raw, budget, healthy)))
        return out

    def matching(self, pod: PodInfo) -> list[_Budget]:
        return [b for b in self.budgets if b.budget.covers(pod)]

    def exhausted(self, pod: PodInfo) -> _Budget | None:
        """A budget of ``pod`` that allows no more disruptions (the first)."""
        for found in self.matching(pod):
            if found.remaining < 1:
                return found
        return None

    def can_remove_together(self, pods: Sequence[PodInfo]) -> bool:
        """``CanRemovePods``' second answer: the budgets allow all of ``pods`` at once."""
        left = {id(b): b.remaining for b in self.budgets}
        for pod in pods:
            for found in self.matching(pod):
                left[id(found)] -= 1
                if left[id(found)] < 0:
                    return False
        return True

    def remove(self, pods: Iterable[PodInfo]) -> None:
        """``RemovePods``: the pods are gone; their budgets allow that many fewer disruptions."""
        for pod in pods:
            for found in self.matching(pod):
                found.remaining -= 1


def pod_drainability(pod: PodInfo, local: Sequence[str], budgets: BudgetTracker, options: DrainOptions) -> Drainability:
    """cluster-autoscaler's default rules on ``pod`` (``local``: its local volumes' names), in
    their order."""
    if is_mirror_pod(pod):
        return Drainability(SKIP)
    annotation = pod.annotations.get(SAFE_TO_EVICT)
    if is_daemonset_pod(pod):
        return Drainability(DAEMONSET)
    if annotation == "true":
        return Drainability(MOVE)
    if annotation == ON_COMPLETION:
        return Drainability(WAIT, "OnCompletion", f'pod {pod.key} is annotated {SAFE_TO_EVICT}: "{ON_COMPLETION}": '
                                                  "scale-down waits for it to complete")
    owner = _controller(pod)
    if owner is None:
        return Drainability(BLOCKED, "NotReplicated", f"pod {pod.key} has no controller")
    if options.skip_nodes_with_custom_controller_pods and owner.kind not in REPLICATED_KINDS:
        return Drainability(BLOCKED, "NotReplicated",
                            f"pod {pod.key} is controlled by a {owner.kind}, not a kind cluster-autoscaler knows to "
                            "recreate pods (ReplicaSet, StatefulSet, Job, ReplicationController)")
    if options.skip_nodes_with_system_pods and pod.namespace == "kube-system" and not budgets.matching(pod):
        return Drainability(BLOCKED, "UnmovableKubeSystemPod", f"pod {pod.key} has no PDB (a kube-system pod needs one)")
    if annotation == "false":
        return Drainability(BLOCKED, "NotSafeToEvictAnnotation", f'pod {pod.key} is annotated {SAFE_TO_EVICT}: "false"')
    if options.skip_nodes_with_local_storage:
        allowed = set(pod.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(","))
        blocking = [name for name in local if name not in allowed]
        if blocking:
            return Drainability(BLOCKED, "LocalStorageRequested",
                                f"pod {pod.key} has local storage (volume {', '.join(blocking)})")
    exhausted = budgets.exhausted(pod)
    if exhausted is not None:
        budget = exhausted.budget
        return Drainability(BLOCKED, "NotEnoughPdb", f"pod {pod.key}: not enough pod disruption budget "
                                                     f"(PDB {budget.namespace}/{budget.name} allows no more disruptions)")
    return Drainability(MOVE)
