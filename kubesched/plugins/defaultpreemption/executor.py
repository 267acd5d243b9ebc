"""Carrying out a preemption (upstream's ``preemption.Executor``, ``executor.go``).

Once victims are chosen, for a pod on a node or for a pod group on the whole cluster:

* a victim waiting at Permit is rejected there (it goes back to the queue; no API call);
  one already being deleted is left alone; any other is evicted through the cluster
  client (DisruptionTarget condition, reason PreemptionByScheduler, then a delete);
* pods of lower priority nominated to the node (``"cluster"`` for a pod group, which no
  node is normally called) lose their nomination: they may no longer fit there.

With SchedulerAsyncPreemption (on by default) the evictions run off the scheduling cycle,
upstream's ``prepareCandidateAsync``: when no victim needs a delete nothing is done at all
(no nomination is cleared); otherwise the preemptor is marked as preempting, which
DefaultPreemption's PreEnqueue answers by holding it back ("waiting for the preemption for
this pod to be finished"), nominations are cleared, every victim but the last is evicted,
then the last one, whose deletion (seen through the informer: gone, or terminating) is
enough to let the preemptor in before the last call returns. Only when an eviction failed
is the preemptor activated at the end; otherwise the victims' deletions requeue it, as
upstream's queue does. Without the gate (``prepareCandidate``) the victims are evicted,
then nominations cleared whatever the victims were, and a failure seen before the cycle
ends fails the preemption with an Error.

The cluster client may finish an eviction at once (``simulate``, whose virtual clock
gives no grace period) or later (``run``); either way it calls back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ...framework import Code, Handle, Status
from ...framework.preemption import NominatedPods
from ...objects.pod import PodInfo
from ...objects.podgroup import PodGroup

__all__ = [
    "CLUSTER_CANDIDATE",
    "Executor",
    "GroupVictimEvictor",
    "Preemptor",
    "VictimEvictor",
    "group_preemptor_of",
    "pod_preemptor_of",
]

CLUSTER_CANDIDATE = "cluster"
"""The candidate's name when a pod group preempts: its domain is the whole cluster."""

Done = Callable[[bool], None]


@runtime_checkable
class VictimEvictor(Protocol):
    """A cluster client that can carry out a preemption (upstream's ``PreemptPod`` and
    ``clearNominatedNodeName``)."""

    def preempt_pod(self, victim: PodInfo, preemptor: PodInfo, node_name: str, done: Done | None = None) -> None:
        """Mark ``victim`` with the DisruptionTarget condition and delete it, now or in the
        background; ``done(ok)`` is called once that is over, on the scheduler's thread."""
        ...

    def clear_nominated_node_name(self, pod: PodInfo) -> None:
        """Empty the pod's ``status.nominatedNodeName``."""
        ...


@runtime_checkable
class GroupVictimEvictor(Protocol):
    """A cluster client that evicts for a pod group (workload-aware preemption): the
    condition's message names a "podgroup" as the preemptor."""

    def preempt_pod_for_group(self, victim: PodInfo, group: PodGroup, scheduler_name: str,
                              done: Done | None = None) -> None:
        """As ``VictimEvictor.preempt_pod``, for ``group``'s preemption."""
        ...


@dataclass(slots=True, frozen=True)
class Preemptor:
    """Who preempts (upstream's ``ExecutorPreemptor``): a pod, or a pod group and its pods."""

    kind: str  # "pod" or "podgroup", as upstream's Type() words it in messages
    uid: str
    key: str
    scheduler_name: str
    priority: int
    pods: tuple[PodInfo, ...]
    pod_group: PodGroup | None = None


def pod_preemptor_of(pod: PodInfo) -> Preemptor:
    return Preemptor("pod", pod.uid, pod.key, pod.scheduler_name, pod.priority, (pod,))


def group_preemptor_of(group: PodGroup, pods: Sequence[PodInfo], priority: int) -> Preemptor:
    """The group's uid is its key where the group has none (a hand-written snapshot)."""
    scheduler_name = pods[0].scheduler_name if pods else ""
    return Preemptor("podgroup", group.uid or group.key, group.key, scheduler_name, priority, tuple(pods), group)


class Executor:
    """One DefaultPreemption's evictions; also its PreEnqueue's memory of preemptors at work
    (a ``PodEventHandler``: it watches for the deletion of each preemptor's last victim)."""

    def __init__(self, handle: Handle, plugin: str, asynchronous: bool) -> None:
        self.handle = handle
        self.plugin = plugin
        self.asynchronous = asynchronous
        self.nominator: NominatedPods | None = None
        self.observe_victims: Callable[[int], None] | None = None  # preemption_victims, when kept
        self.preempting: set[str] = set()  # preemptor uids whose evictions are under way
        self.last_victims: dict[str, str] = {}  # preemptor uid -> its last victim's uid, once that is evicted
        self._last_victim_gone: set[str] = set()  # those last victims seen deleted or terminating since

    # -- upstream's actuatePodPreemption / actuatePodGroupPreemption -------------------
    def actuate(self, node_name: str, victims: Sequence[PodInfo], preemptor: Preemptor) -> Status | None:
        """Evict ``victims`` for ``preemptor`` placed on ``node_name``; None, or the Error a
        synchronous preemption met."""
        if self.asynchronous:
            self._prepare_async(node_name, victims, preemptor)
            return None
        return self._prepare(node_name, victims, preemptor)

    def _prepare_async(self, node_name: str, victims: Sequence[PodInfo], preemptor: Preemptor) -> None:
        to_delete = [v for v in victims if not v.terminating]
        if not to_delete:  # every victim is already going: nothing to do, nothing to clear
            return
        self._observe(len(victims))
        self.preempting.add(preemptor.uid)
        self._clear_nominations(node_name, preemptor)
        _AsyncEvictions(self, node_name, preemptor, to_delete).start()

    def _prepare(self, node_name: str, victims: Sequence[PodInfo], preemptor: Preemptor) -> Status | None:
        self._observe(len(victims))
        failed: list[PodInfo] = []

        def note(victim: PodInfo) -> Done:
            def done(ok: bool) -> None:
                if not ok:
                    failed.append(victim)
            return done

        for victim in victims:
            if not victim.terminating:  # a graceful deletion under way needs no call
                self.preempt_one(victim, node_name, preemptor, note(victim))
        if failed:
            return Status(Code.ERROR, f"preempting {failed[0].key} for {preemptor.kind} {preemptor.key} failed")
        self._clear_nominations(node_name, preemptor)
        return None

    def _observe(self, victims: int) -> None:
        """upstream's ``PreemptionVictims.Observe``: every victim of a preemption acted on."""
        if self.observe_victims is not None:
            self.observe_victims(victims)

    def preempt_one(self, victim: PodInfo, node_name: str, preemptor: Preemptor, done: Done) -> None:
        """upstream's ``PreemptPod``: a waiting pod is rejected in memory, any other evicted."""
        if self.handle.reject_waiting_pod(victim.uid, self.plugin, "preempted"):
            self._event(victim, preemptor, node_name, " (in kube-scheduler memory).")
            done(True)
            return
        client = self.handle.client

        def evicted(ok: bool) -> None:
            if ok:
                self._event(victim, preemptor, node_name, "")
            done(ok)

        if preemptor.pod_group is not None and isinstance(client, GroupVictimEvictor):
            client.preempt_pod_for_group(victim, preemptor.pod_group, preemptor.scheduler_name, evicted)
        elif isinstance(client, VictimEvictor):
            client.preempt_pod(victim, preemptor.pods[0], node_name, evicted)
        else:  # no cluster to evict from
            done(True)

    def _event(self, victim: PodInfo, preemptor: Preemptor, node_name: str, suffix: str) -> None:
        self.handle.event_recorder.record_event(
            victim, "Normal", "Preempted", f"Preempted by {preemptor.kind} {preemptor.uid} on node {node_name}{suffix}")

    def _clear_nominations(self, node_name: str, preemptor: Preemptor) -> None:
        """upstream's ``getLowerPriorityNominatedPods`` and ``clearNominatedNodeName``."""
        client = self.handle.client
        if self.nominator is None or not isinstance(client, VictimEvictor):
            return
        for other in self.nominator.nominated_pods_for_node(node_name):
            if other.priority < preemptor.priority:
                client.clear_nominated_node_name(other)

    def finished(self, preemptor: Preemptor, failed: bool) -> None:
        """The evictions are over: the preemptor may be scheduled again; after a failure it is
        activated, since no deletion may come to requeue it."""
        self.preempting.discard(preemptor.uid)
        last = self.last_victims.pop(preemptor.uid, None)
        if last is not None:
            self._last_victim_gone.discard(last)
        if failed:
            self.handle.activate(preemptor.pods)

    # -- upstream's IsPodRunningPreemption / IsPodGroupRunningPreemption ---------------
    def is_running_preemption(self, uid: str) -> bool:
        """Whether the preemptor (a pod's or a PodGroup's uid) still waits for its evictions:
        under way, and not yet at a last victim that is gone or terminating."""
        if uid not in self.preempting:
            return False
        last = self.last_victims.get(uid)
        return last is None or last not in self._last_victim_gone

    # -- PodEventHandler: last victims leaving -------------------------------------------
    def on_pod_add(self, pod: PodInfo) -> None:
        if pod.terminating:
            self._seen_going(pod)

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None:
        if new.terminating:
            self._seen_going(new)

    def on_pod_delete(self, pod: PodInfo) -> None:
        self._seen_going(pod)

    def _seen_going(self, pod: PodInfo) -> None:
        if self.last_victims and pod.uid in self.last_victims.values():
            self._last_victim_gone.add(pod.uid)


class _AsyncEvictions:
    """One asynchronous preemption: every victim but the last at once, then the last."""

    def __init__(self, executor: Executor, node_name: str, preemptor: Preemptor, victims: list[PodInfo]) -> None:
        self.executor = executor
        self.node_name = node_name
        self.preemptor = preemptor
        self.victims = victims
        self.waiting = 0
        self.failed = False

    def start(self) -> None:
        head = self.victims[:-1]
        if not head:
            self._evict_last()
            return
        self.waiting = len(head)
        for victim in head:
            self.executor.preempt_one(victim, self.node_name, self.preemptor, self._head_done)

    def _head_done(self, ok: bool) -> None:
        self.failed = self.failed or not ok
        self.waiting -= 1
        if self.waiting:
            return
        if self.failed:  # upstream skips the last victim to let the preemptor retry sooner
            self.executor.finished(self.preemptor, True)
        else:
            self._evict_last()

    def _evict_last(self) -> None:
        last = self.victims[-1]
        self.executor.last_victims[self.preemptor.uid] = last.uid
        self.executor.preempt_one(last, self.node_name, self.preemptor, self._last_done)

    def _last_done(self, ok: bool) -> None:
        self.executor.finished(self.preemptor, self.failed or not ok)
