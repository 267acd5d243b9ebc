"""DefaultPreemption (upstream's ``defaultpreemption`` plugin): the PostFilter that
preempts lower-priority pods when a pod fits nowhere.

The plugin holds the args and reads PodDisruptionBudgets from an object store; the
decisions are the framework's ``preemption.Evaluator``, which needs the profile's
framework and the queue's nominator: the scheduler hands them over with ``attach``
once the profile is built (upstream's plugin gets both through its handle).
Evicting victims goes through the cluster client when it can (``VictimEvictor``):
the simulator removes them at once, the live client patches and deletes them.
"""

from __future__ import annotations

import random
from typing import Callable, Protocol, runtime_checkable

from ...framework import Code, CycleState, Handle, Status
from ...framework.interfaces import NodeToStatusReader, PostFilterResult
from ...framework.preemption import (
    PDB_API_VERSION,
    PDB_KIND,
    PDB_PLURAL,
    Candidate,
    CandidateFilter,
    DisruptionBudget,
    Evaluator,
    NominatedPods,
    parse_pdb,
)
from ...framework.runtime import Framework
from ...objects.pod import PodInfo
from .args import DefaultPreemptionArgs

__all__ = ["NAME", "DefaultPreemption", "VictimEvictor", "new"]

NAME = "DefaultPreemption"
WAITING_MESSAGE = "waiting for the preemption for this pod to be finished"


@runtime_checkable
class VictimEvictor(Protocol):
    """A cluster client that can carry out a preemption (upstream's ``PreemptPod`` and
    ``clearNominatedNodeName``)."""

    def preempt_pod(self, victim: PodInfo, preemptor: PodInfo, node_name: str,
                    done: Callable[[bool], None] | None = None) -> None:
        """Mark ``victim`` with the DisruptionTarget condition and delete it, now or in the
        background; ``done(ok)`` is called once that is over, on the scheduler's thread."""
        ...

    def clear_nominated_node_name(self, pod: PodInfo) -> None:
        """Empty the pod's ``status.nominatedNodeName``."""
        ...


class DefaultPreemption:
    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._pdb_store = handle.object_store(PDB_API_VERSION, PDB_KIND, PDB_PLURAL)
        self.evaluator: Evaluator | None = None
        self.nominator: NominatedPods | None = None
        self.preempted: list[tuple[PodInfo, PodInfo, str]] = []  # (victim, preemptor, node), in order
        self._in_flight: dict[str, int] = {}  # preemptor uid -> victims still being evicted

    def attach(self, fwk: Framework, nominator: NominatedPods | None, tie_break: str = "random",
               rng: random.Random | None = None, extenders: CandidateFilter | None = None) -> None:
        """Give the plugin the framework it runs in, the queue's nominator and the
        preemption-capable extenders (as a filter of candidates)."""
        self.nominator = nominator
        self.evaluator = Evaluator(fwk, self.handle.snapshot, nominator, self.pdbs,
                                   self.args.num_candidates, self._execute, tie_break, rng, extenders)

    def pdbs(self) -> list[DisruptionBudget]:
        return [parse_pdb(obj) for obj in self._pdb_store.list()]

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Asynchronous preemption: a preemptor whose victims are still being evicted waits."""
        if self._in_flight.get(pod.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_MESSAGE)
        return None

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
            group = self.handle.pod_group_manager.pod_group(pod.namespace, group_name)
            if group is None:
                return "preemption: pod group for pod not found"
            if group.has_scheduling_constraints:
                return "preemption: not eligible due to placement-based pod group scheduling limitation"
        if features.enable_workload_aware_preemption:
            return "preemption: not eligible due to workload aware preemption enabled"
        return None

    def _execute(self, candidate: Candidate, preemptor: PodInfo) -> None:
        """upstream's ``prepareCandidate``: evict the victims (a victim waiting at Permit is
        rejected instead), then clear the nominations of lower-priority pods nominated to
        the node, since they may no longer fit there."""
        client = self.handle.client
        evictor = client if isinstance(client, VictimEvictor) else None
        if self.nominator is not None and evictor is not None:
            for other in self.nominator.nominated_pods_for_node(candidate.node):
                if other.priority < preemptor.priority:
                    evictor.clear_nominated_node_name(other)
        to_evict: list[PodInfo] = []
        for victim in candidate.victims:
            self.preempted.append((victim, preemptor, candidate.node))
            if self.handle.reject_waiting_pod(victim.uid, NAME, "preempted"):
                self._preempted_event(victim, preemptor, candidate.node)
            elif not victim.terminating:  # a graceful deletion under way needs no call
                to_evict.append(victim)
        if evictor is None or not to_evict:
            return
        self._in_flight[preemptor.uid] = len(to_evict)
        cycle = [True]  # whether we are still in the scheduling cycle (evictions done at once)
        failed = [False]

        def evicted(victim: PodInfo) -> Callable[[bool], None]:
            def done(ok: bool) -> None:
                if ok:
                    self._preempted_event(victim, preemptor, candidate.node)
                failed[0] = failed[0] or not ok
                left = self._in_flight.get(preemptor.uid, 1) - 1
                if left > 0:
                    self._in_flight[preemptor.uid] = left
                    return
                self._in_flight.pop(preemptor.uid, None)
                if failed[0] or not cycle[0]:
                    # Held back meanwhile (PreEnqueue): let it try again. Upstream waits for the
                    # deletions' events, and activates the pod when an eviction failed.
                    self.handle.activate([preemptor])
            return done

        for victim in to_evict:
            evictor.preempt_pod(victim, preemptor, candidate.node, evicted(victim))
        cycle[0] = False

    def _preempted_event(self, victim: PodInfo, preemptor: PodInfo, node: str) -> None:
        self.handle.event_recorder.record_event(
            victim, "Normal", "Preempted", f"Preempted by pod {preemptor.uid} on node {node}")


def new(args: DefaultPreemptionArgs | None, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args or DefaultPreemptionArgs(), handle)
