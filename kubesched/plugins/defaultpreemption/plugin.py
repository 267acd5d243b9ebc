"""DefaultPreemption (upstream's ``defaultpreemption`` plugin): the PostFilter that
preempts lower-priority pods when a pod fits nowhere, and, with WorkloadAwarePreemption,
the PodGroupPostFilter that preempts for a whole pod group that fits nowhere.

The plugin holds the args and reads PodDisruptionBudgets from an object store; the
decisions are the framework's ``preemption.Evaluator`` (one pod, node by node) and
``preemption.PodGroupEvaluator`` (a pod group, on the whole cluster), which need the
profile's framework and the queue's nominator: the scheduler hands them over with
``attach`` once the profile is built (upstream's plugin gets both through its handle).
Evicting victims is the ``Executor``'s (``executor.py``): through the cluster client when
it can (``VictimEvictor``), at once in the simulator, in the background live.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from ...framework import Code, CycleState, Handle, Status
from ...framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ...framework.interfaces import NodeToStatusReader, PostFilterResult
from ...framework.podgroup_post_filter import DryRunSnapshot, PodGroupSchedulingFunc
from ...framework.preemption import (
    PDB_API_VERSION,
    PDB_KIND,
    PDB_PLURAL,
    Candidate,
    CandidateFilter,
    DisruptionBudget,
    Evaluator,
    NominatedPods,
    PodGroupEvaluator,
    parse_pdb,
    pod_group_priority,
)
from ...framework.runtime import Framework
from ...objects.pod import PodInfo
from ...objects.podgroup import PodGroup
from .args import DefaultPreemptionArgs
from .executor import CLUSTER_CANDIDATE, Executor, GroupVictimEvictor, VictimEvictor, group_preemptor_of, pod_preemptor_of

__all__ = ["NAME", "DefaultPreemption", "GroupVictimEvictor", "VictimEvictor", "new"]

NAME = "DefaultPreemption"
WAITING_MESSAGE = "waiting for the preemption for this pod to be finished"
GROUP_WAITING_MESSAGE = "waiting for the preemption for this pod group to be finished"


class DefaultPreemption:
    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._pdb_store = handle.object_store(PDB_API_VERSION, PDB_KIND, PDB_PLURAL)
        self.evaluator: Evaluator | None = None
        self.group_evaluator: PodGroupEvaluator | None = None
        self.nominator: NominatedPods | None = None
        self.executor = Executor(handle, NAME, handle.features.enable_async_preemption)
        handle.add_pod_handler(self.executor)  # a preemptor's last victim going lets it in

    def attach(self, fwk: Framework, nominator: NominatedPods | None, tie_break: str = "random",
               rng: random.Random | None = None, extenders: CandidateFilter | None = None,
               observe_victims: Callable[[int], None] | None = None) -> None:
        """Give the plugin the framework it runs in, the queue's nominator, the
        preemption-capable extenders (as a filter of candidates) and where to count the
        victims of each preemption carried out (the preemption_victims metric)."""
        self.nominator = nominator
        self.executor.nominator = nominator
        self.executor.observe_victims = observe_victims
        self.evaluator = Evaluator(fwk, self.handle.snapshot, nominator, self.pdbs,
                                   self.args.num_candidates, self._execute, tie_break, rng, extenders)
        shuffle = (rng or random.Random()) if tie_break == "random" else None
        self.group_evaluator = PodGroupEvaluator(self._pod_group, self.pdbs, shuffle)

    def pdbs(self) -> list[DisruptionBudget]:
        return [parse_pdb(obj) for obj in self._pdb_store.list()]

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Asynchronous preemption: a preemptor whose victims are still being evicted waits;
        with WorkloadAwarePreemption, a pod group's member waits while its group's are."""
        if not self.handle.features.enable_async_preemption or not self.executor.preempting:
            return None  # (the common case: no preemption under way, nothing to look up)
        if pod.pod_group_name is not None and self.handle.features.enable_workload_aware_preemption:
            group = self._pod_group(pod.namespace, pod.pod_group_name)
            if group is None:  # not ours to hold back a pod whose group is missing
                return None
            if self.executor.is_running_preemption(group.uid or group.key):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, GROUP_WAITING_MESSAGE)
            return None
        if self.executor.is_running_preemption(pod.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_MESSAGE)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """With asynchronous preemption, a pod deletion may let a held-back preemptor in.

        Upstream's hint answers Skip and leaves the decision to the plugins that rejected
        the pod before (its queue asks them about a gated pod too). kubesched's queue asks
        only the gating plugin about a gated pod, so this hint answers what upstream's
        PreEnqueue would then: Queue once the pod is no longer held back."""
        if not self.handle.features.enable_async_preemption:
            return []
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), self._after_pod_deletion)]

    def _after_pod_deletion(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        return QueueingHint.QUEUE if self.pre_enqueue(pod) is None else QueueingHint.SKIP

    def post_filter(self, state: CycleState, pod: PodInfo,
                    filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status | None]:
        refused = self._pod_group_refusal(pod)
        if refused is not None:
            return None, Status(Code.UNSCHEDULABLE, refused)
        if self.evaluator is None:
            return None, Status(Code.UNSCHEDULABLE, "preemption: not attached to a scheduler")
        result, status = self.evaluator.preempt(state, pod, filtered)
        if status.message:
            return result, Status(status.code, f"preemption: {status.message}")
        return result, status

    def _pod_group_refusal(self, pod: PodInfo) -> str | None:
        """Why a pod-group member may not preempt pod by pod (upstream's PostFilter): with
        TopologyAwareWorkloadScheduling, a member of a constrained group (preempting once per
        placement tried would evict for nothing) or of a group not found; with
        WorkloadAwarePreemption, any member (the group preempts as a whole)."""
        group_name = pod.pod_group_name
        if group_name is None:
            return None
        features = self.handle.features
        if features.enable_topology_aware_workload_scheduling:
            group = self._pod_group(pod.namespace, group_name)
            if group is None:
                return "preemption: pod group for pod not found"
            if group.has_scheduling_constraints:
                return "preemption: not eligible due to placement-based pod group scheduling limitation"
        if features.enable_workload_aware_preemption:
            return "preemption: not eligible due to workload aware preemption enabled"
        return None

    def pod_group_post_filter(self, pod_group: PodGroup, pods: Sequence[PodInfo], schedule: PodGroupSchedulingFunc,
                              snapshot: DryRunSnapshot) -> Status | None:
        """upstream's ``PodGroupPostFilter``: choose victims on the whole cluster for the group
        (``PodGroupEvaluator``) and evict them; None once they are being evicted."""
        if self.group_evaluator is None:
            return Status(Code.UNSCHEDULABLE, "preemption: not attached to a scheduler")
        victims, status = self.group_evaluator.select_victims(pod_group, pods, schedule, snapshot)
        if status is not None:
            return status
        preemptor = group_preemptor_of(pod_group, pods, pod_group_priority(pod_group))
        return self.executor.actuate(CLUSTER_CANDIDATE, victims, preemptor)

    def _pod_group(self, namespace: str, name: str) -> PodGroup | None:
        """The PodGroup lister of the moment (the scheduler sets the handle's manager up late)."""
        return self.handle.pod_group_manager.pod_group(namespace, name)

    def _execute(self, candidate: Candidate, preemptor: PodInfo) -> Status | None:
        """upstream's ``actuatePodPreemption`` on the chosen node."""
        return self.executor.actuate(candidate.node, candidate.victims, pod_preemptor_of(preemptor))


def new(args: DefaultPreemptionArgs | None, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args or DefaultPreemptionArgs(), handle)
