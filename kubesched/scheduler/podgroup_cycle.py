"""The pod-group cycle (upstream's ``scheduleOnePodGroup``, GenericWorkload).

When the queue hands out a pod of a pod group, the scheduler takes every other unscheduled
member of the group out of the queue too (activeQ, backoffQ or the unschedulable pods),
orders them (priority, then the time each first entered activeQ), checks they share one
profile, skips those being deleted or already assumed, and runs the group's algorithm
(``podgroup_algorithm.py``) on one view of the cluster. Then, per pod:

* the group is feasible: each pod that fits goes to its binding cycle (assumed again,
  Reserve, Permit, bind); GangScheduling's Permit holds the first ``minCount - 1`` and the
  ``minCount``-th releases them;
* the group is not: no pod is bound; a pod that fit fails as Unschedulable with the reason
  its Permit gave ("waiting for minCount pods from a gang to be scheduled"), a pod that fit
  nowhere with its own FitError;
* an error: every pod fails with it.

Last, the ``PodGroupScheduled`` condition is written on the PodGroup (``podgroup_condition.py``).
Pods that failed because their group did are requeued after backoff, as upstream's queue
treats every member of a group.

Workload-aware preemption (upstream's ``runWorkloadAwarePreemption``, behind
WorkloadAwarePreemption) goes in through ``pod_group_post_filter``
(``podgroup_preemption.py``): a group that waits on preemption fails its cycle as
Unschedulable, and the pods that fit are nominated to the node they fit on.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Callable

from ..cache.pod_groups import PodGroupDirectory
from ..framework.cycle_state import CycleState
from ..framework.handle import ClusterClient, PodGroupStatusWriter
from ..framework.podgroups import QueuedPodGroupInfo, pod_group_state_not_found
from ..framework.queued_pod import QueuedPodInfo
from ..framework.runtime import Framework
from ..framework.status import Code, Status
from ..objects.pod import PodInfo
from .attempt import Attempt, PodGroupCycleRecord
from .fit_error import PodGroupUnschedulableError
from .podgroup_algorithm import PodGroupAlgorithm
from .podgroup_results import (
    PodGroupAlgorithmResult,
    PodResult,
    group_unschedulable,
    infeasible_reason,
    status_error_text,
)
from .podgroup_condition import condition_for, next_conditions

__all__ = ["PodGroupCycle", "PodGroupPostFilter"]

log = logging.getLogger("kubesched.scheduler.podgroups")

PodGroupPostFilter = Callable[[Framework, CycleState, QueuedPodGroupInfo], Status | None]
"""Workload-aware preemption's entry (``podgroup_preemption.py``): given a group whose cycle was
Unschedulable, Success when victims are being removed (the group then waits on preemption),
an error, or a rejection whose message is appended to the group's status."""

GROUP_CYCLE_LOG_SIZE = 10_000  # group cycles kept for reports; a long live run forgets the oldest


class PodGroupCycle(PodGroupAlgorithm):
    """``Scheduler``'s pod-group cycle."""

    profiles: dict[str, Framework]
    pods: dict[str, PodInfo]
    client: ClusterClient
    on_attempt: Callable[[Attempt], None] | None
    binding_records: bool
    pod_groups: PodGroupDirectory
    placements_enabled: bool  # TopologyAwareWorkloadScheduling
    pod_group_post_filter: PodGroupPostFilter | None
    group_cycles: "deque[PodGroupCycleRecord]"
    _group_from_backoff: bool
    group_backoff_retries: dict[str, int]  # group -> its cycles begun by a pop from backoffQ
    _cycle_started: dict[str, float]

    if TYPE_CHECKING:  # the scheduler's own (``Scheduler``, ``FailureHandling``); declared, not shadowed
        def _handle_failure(self, fwk: Framework, queued: QueuedPodInfo, status: Status, err: Exception | None,
                            nominated: str | None, binding: bool = False) -> None: ...

        def _skip(self, pod: PodInfo) -> bool: ...

        def _prepare_for_binding(self, fwk: Framework, state: CycleState, queued: QueuedPodInfo, host: str,
                                 attempt: Attempt | None) -> None: ...

    # -- scheduleOnePodGroup ------------------------------------------------------------
    def _schedule_one_pod_group(self, queued: QueuedPodInfo) -> None:
        self._group_from_backoff = self.queue.last_pop_from_backoff
        info = self._pod_group_info_for_pod(queued)
        if info is None:
            return
        fwk, problem = self._framework_for_pod_group(info)
        if fwk is None:
            for member in info.queued_pods:
                pod_fwk = self.profiles.get(member.pod.scheduler_name)
                if pod_fwk is None:  # only pods of our profiles are queued: cannot happen
                    self.queue.done(member.uid)
                    return
                self._handle_failure(pod_fwk, member, Status(Code.ERROR, problem), RuntimeError(problem), "")
            return
        kept = [member for member in info.queued_pods if not self._skip_member(member)]
        if len(kept) != len(info.queued_pods):
            info.set_queued_pods(kept)
        if not info.queued_pods:
            return
        self._pod_group_cycle(fwk, CycleState(), info)

    def _skip_member(self, member: QueuedPodInfo) -> bool:
        """upstream's ``skipPodSchedule`` for a member: deleted or already assumed pods are done."""
        if self._skip(member.pod):
            self.queue.done(member.uid)
            return True
        return False

    def _pod_group_info_for_pod(self, queued: QueuedPodInfo) -> QueuedPodGroupInfo | None:
        """The group of the popped pod with every other unscheduled member popped too, in the
        cycle's order; None (the pod failed) when the cache knows no such group."""
        pod = queued.pod
        name = pod.pod_group_name
        assert name is not None
        state = self.cache.pod_groups.get(pod.namespace, name)
        if state is None:
            problem = f"error while retrieving pod group state: {pod_group_state_not_found(pod.namespace, name)}"
            fwk = self.profiles.get(pod.scheduler_name)
            if fwk is None:
                self.queue.done(pod.uid)
            else:
                self._handle_failure(fwk, queued, Status(Code.ERROR, problem), RuntimeError(problem), None)
            return None
        members = [queued]
        for other in state.unscheduled_pods():
            if other.name == pod.name:
                continue
            popped = self.queue.pop_specific_pod(other)
            if popped is not None:
                members.append(popped)
        members.sort(key=_member_order)
        info = QueuedPodGroupInfo(pod.namespace, name)
        info.set_queued_pods(members)
        return info

    def _framework_for_pod_group(self, info: QueuedPodGroupInfo) -> tuple[Framework | None, str]:
        scheduler_name = ""
        for member in info.queued_pods:
            found = member.pod.scheduler_name
            if not scheduler_name:
                scheduler_name = found
            elif found != scheduler_name:
                return None, ("all pods in a single pod group should have the same .spec.schedulerName set, "
                              f'got: "{found}" and "{scheduler_name}"')
        fwk = self.profiles.get(scheduler_name)
        if fwk is None:
            return None, f'profile not found for scheduler name "{scheduler_name}"'
        return fwk, ""

    # -- podGroupCycle ------------------------------------------------------------------
    def _pod_group_cycle(self, fwk: Framework, group_state: CycleState, info: QueuedPodGroupInfo) -> None:
        started = self.clock.now()
        record = PodGroupCycleRecord(info.key, self.queue.scheduling_cycle, [m.pod.key for m in info.queued_pods],
                                     from_backoff=self._group_from_backoff)
        if record.from_backoff:
            self.group_backoff_retries[info.key] = self.group_backoff_retries.get(info.key, 0) + 1
        if self.metrics is not None:
            for member in info.queued_pods:
                self._cycle_started[member.uid] = started
        # The cycle's one snapshot (upstream's UpdateSnapshot here): its lists stay as they are
        # while members are assumed, through workload-aware preemption's dry run too.
        self.cache.begin_pod_group_cycle()
        try:
            result = self._pod_group_algorithm(fwk, group_state, info, True, self.placements_enabled)
            if self.metrics is not None:
                self.metrics.pod_group_algorithm(self.clock.now() - started)
            post_filter = self.pod_group_post_filter
            if post_filter is not None and result.status is not None and result.status.code == Code.UNSCHEDULABLE:
                status = post_filter(fwk, group_state, info)
                if status is None or status.is_success():
                    result.waiting_on_preemption = True
                elif status.code == Code.ERROR:
                    result.status = status
                else:
                    result.status = Status(result.status.code, *result.status.reasons, status.message,
                                           plugin=result.status.plugin, error=result.status.error)
        finally:
            self.cache.end_pod_group_cycle()
        record.placements = result.trials
        record.placement = result.placement.name if result.placement is not None and result.status is None else None
        record.tied, record.tie_break = result.tied, result.tie_break
        group = self.pod_groups.pod_group(info.namespace, info.name)
        if group is not None:  # the group's shape, for the explain output
            record.policy = "gang" if group.is_gang else "basic"
            record.min_count, record.topology_keys = group.min_count, group.topology_keys
        if result.status is not None and result.pod_results and not result.trials:  # why, pod by pod (explain)
            record.reason = infeasible_reason(result)
        self._submit_pod_group_result(fwk, info, result, record, started)

    # -- submitPodGroupAlgorithmResult ------------------------------------------------
    def _submit_pod_group_result(self, fwk: Framework, info: QueuedPodGroupInfo, result: PodGroupAlgorithmResult,
                                 record: PodGroupCycleRecord, started: float) -> None:
        group_status = result.status
        record.status = group_status.message if group_status is not None else ""
        condition = condition_for(group_status, status_error_text(group_status) if group_status is not None else "")
        record.condition = (condition.status, condition.reason, condition.message)
        self.group_cycles.append(record)
        for i, member in enumerate(info.queued_pods):
            if i < len(result.pod_results):
                pr = result.pod_results[i]
            else:  # the group failed as a whole before this pod was tried
                pr = PodResult(member, CycleState(), status=group_status)
            if group_status is not None and group_status.code == Code.ERROR:
                own = pr.status is not None and pr.status.code == Code.ERROR
                status = pr.status if own and pr.status is not None else group_status
                self._member_failed(fwk, pr, record, status, status.error or RuntimeError(status.message), "")
                continue
            if pr.status is None or pr.status.is_success():
                if group_status is None:
                    pr.state.pod_group_cycle_state = None  # the binding cycle is the pod's own
                    attempt = self._member_attempt(fwk, pr, record, None)
                    self._prepare_for_binding(fwk, pr.state, member, pr.host, attempt)
                elif group_status.is_rejected():
                    if result.waiting_on_preemption:
                        self._member_failed(fwk, pr, record, group_status, group_status.error, pr.host)
                    else:
                        status = _rejected_with_permit_reasons(pr)
                        self._member_failed(fwk, pr, record, status, status.error, "")
                else:
                    problem = f"received unexpected pod group scheduling algorithm status code: {group_status.code.label}"
                    self._member_failed(fwk, pr, record, Status(Code.ERROR, problem), RuntimeError(problem), "")
            elif pr.requires_preemption and not result.waiting_on_preemption:
                status = _rejected_with_permit_reasons(pr)
                self._member_failed(fwk, pr, record, status, status.error, "")
            else:
                status = pr.status
                self._member_failed(fwk, pr, record, status, pr.error, pr.nominated)
        if self.metrics is not None:
            outcome = ("scheduled" if group_status is None else "waiting_on_preemption" if result.waiting_on_preemption
                       else "unschedulable" if group_status.is_rejected() else "error")
            self.metrics.pod_group_attempt(outcome, fwk.profile_name, self.clock.now() - started)
        self._update_pod_group_condition(info, group_status)

    def _member_attempt(self, fwk: Framework, pr: PodResult, record: PodGroupCycleRecord,
                        error: Exception | None) -> Attempt | None:
        """Tell the attempt observer (explain output, the simulator) how the member fared."""
        if self.on_attempt is None:
            return None
        queued = pr.queued
        now = self.clock.now()
        result = pr.result if error is None else None
        attempt = Attempt(queued.pod, queued.attempts, fwk.profile_name, result, error,
                          self.cache.snapshot().table.frozen_names(), now - pr.seconds, now,
                          post_filter=pr.post_filter, walk=pr.walk, pod_group=record)
        if result is not None and self.binding_records:
            attempt.binding = {"result": "pending"}
        self.on_attempt(attempt)
        return attempt

    def _member_failed(self, fwk: Framework, pr: PodResult, record: PodGroupCycleRecord, status: Status,
                       error: BaseException | None, nominated: str | None) -> None:
        err: Exception = error if isinstance(error, Exception) else RuntimeError(status.message)
        self._member_attempt(fwk, pr, record, err)
        self._handle_failure(fwk, pr.queued, status, err, nominated)

    def _update_pod_group_condition(self, info: QueuedPodGroupInfo, status: Status | None) -> None:
        """upstream's ``updatePodGroupCondition``: never a True condition regressed, nothing
        written when nothing changed."""
        group = self.pod_groups.pod_group(info.namespace, info.name)
        if group is None:
            log.warning("Failed to get PodGroup for status update", extra={"podGroup": info.key})
            return
        condition = condition_for(status, status_error_text(status) if status is not None else "")
        conditions = next_conditions(group, condition)
        if conditions is None:
            return
        client = self.client
        if isinstance(client, PodGroupStatusWriter):
            client.patch_pod_group_conditions(group, conditions)


def _member_order(member: QueuedPodInfo) -> tuple[int, float, int]:
    """Priority descending, then the time the pod first entered activeQ (and, on a virtual
    clock that gives many pods one instant, the order they entered it)."""
    first = member.initial_attempt_timestamp
    return (-member.pod.priority, first if first is not None else 0.0, member.initial_attempt_order)


def _rejected_with_permit_reasons(pr: PodResult) -> Status:
    """A pod that fit in a group that did not: Unschedulable with its Permit's message."""
    permit = pr.permit_status
    status = group_unschedulable(*(permit.reasons if permit is not None else ("",)))
    assert isinstance(status.error, PodGroupUnschedulableError)
    return status
