"""What a pod-group cycle does with its algorithm's result (upstream's
``TestSubmitPodGroupAlgorithmResult``): a feasible group's fitting pods are bound; an
unschedulable group binds nothing and fails every pod, those placed only by a nomination
failing as waiting on preemption; an error fails every pod; the ``PodGroupScheduled``
condition follows the group's status and a True condition never regresses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.objects.podgroup import PodGroup
from kubesched.scheduler.attempt import PodGroupCycleRecord
from kubesched.scheduler.podgroup_results import PodGroupAlgorithmResult, PodResult

from kubesched.framework.podgroups import QueuedPodGroupInfo

from .podgroup_support import FakePodGroupPlugin, group, member, scripted_scheduler

SCHEDULED = {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": "All pods scheduled",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}


@dataclass
class Pod:
    """One pod's algorithm result: its host ("" none), status, preemption, nomination."""

    host: str = "node1"
    status: Status | None = None
    requires_preemption: bool = False
    nominated: str | None = ""


@dataclass
class Case:
    name: str
    status: Status | None
    pods: list[Pod]
    bound: set[str] = field(default_factory=set)
    preempting: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    condition: tuple[str, str, str] = ("True", "Scheduled", "")
    waiting_on_preemption: bool = False
    existing: PodGroup | None = None


ALL = {"p1", "p2", "p3"}
UNSCHEDULABLE = Status(Code.UNSCHEDULABLE)
ALREADY = group(conditions=[SCHEDULED])

CASES = [
    Case("All pods feasible", None, [Pod(), Pod(), Pod()], bound=ALL),
    Case("All pods feasible, but all waiting", Status(Code.UNSCHEDULABLE, "not enough capacity for the gang"),
         [Pod(), Pod(), Pod()], failed=ALL, condition=("False", "Unschedulable", "not enough capacity for the gang")),
    Case("All pods require preemption", Status(Code.UNSCHEDULABLE, "waiting for preemption to complete"),
         [Pod(status=UNSCHEDULABLE, requires_preemption=True, nominated="node1")] * 3, preempting=ALL,
         condition=("False", "Unschedulable", "waiting for preemption to complete"), waiting_on_preemption=True),
    Case("All pods require preemption, but the group does not wait on it",
         Status(Code.UNSCHEDULABLE, "not enough capacity for the gang"),
         [Pod(status=UNSCHEDULABLE, requires_preemption=True, nominated="node1")] * 3, failed=ALL,
         condition=("False", "Unschedulable", "not enough capacity for the gang")),
    Case("All pods unschedulable", Status(Code.UNSCHEDULABLE, "0/3 nodes are available: insufficient cpu"),
         [Pod(host="", status=UNSCHEDULABLE)] * 3, failed=ALL,
         condition=("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    Case("All pods unschedulable with no nomination", Status(Code.UNSCHEDULABLE, "0/3 nodes are available: insufficient cpu"),
         [Pod(host="", status=UNSCHEDULABLE, nominated=None)] * 3, failed=ALL,
         condition=("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    Case("Unschedulable for the entire pod group", Status(Code.UNSCHEDULABLE, "node affinity mismatch"), [],
         failed=ALL, condition=("False", "Unschedulable", "node affinity mismatch")),
    Case("Error for one pod", Status(Code.ERROR, "plugin returned error"),
         [Pod(), Pod(host="", status=Status(Code.ERROR, "plugin returned error"))], failed=ALL,
         condition=("False", "SchedulerError", "plugin returned error")),
    Case("Error for one pod while waiting on preemption", Status(Code.ERROR, "internal failure"),
         [Pod(status=UNSCHEDULABLE, requires_preemption=True, nominated="node1"),
          Pod(host="", status=Status(Code.ERROR, "internal failure"))], failed=ALL,
         condition=("False", "SchedulerError", "internal failure")),
    Case("Already Scheduled, successful cycle keeps condition", None, [Pod(), Pod(), Pod()], bound=ALL,
         condition=("True", "Scheduled", ""), existing=ALREADY),
    Case("Already Scheduled, rejected cycle does not regress condition",
         Status(Code.UNSCHEDULABLE, "extra pods could not be placed"), [Pod(host="", status=UNSCHEDULABLE)] * 3,
         failed=ALL, condition=("True", "Scheduled", "All pods scheduled"), existing=ALREADY),
    Case("Already Scheduled, error cycle does not regress condition", Status(Code.ERROR),
         [Pod(), Pod(host="", status=Status(Code.ERROR))], failed=ALL,
         condition=("True", "Scheduled", "All pods scheduled"), existing=ALREADY),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_submit_pod_group_algorithm_result(case: Case) -> None:
    existing = case.existing or group()
    allow = {n: None for n in ("p1", "p2", "p3")}  # the binding cycle's Permit lets every pod through
    sched, cluster = scripted_scheduler(FakePodGroupPlugin(permit_status=dict(allow)), {"GenericWorkload": True},
                                        [existing])
    pods = [member(n) for n in ("p1", "p2", "p3")]
    for p in pods:
        sched.on_pod_add(p)
    info = QueuedPodGroupInfo("default", "pg")
    info.set_queued_pods([q for p in pods if (q := sched.queue.pop_specific_pod(p)) is not None])
    failures: dict[str, str | None] = {}
    handle_failure = sched._handle_failure

    def record(fwk, queued, status, err, nominated, binding=False):  # type: ignore[no-untyped-def]
        failures[queued.pod.name] = nominated
        handle_failure(fwk, queued, status, err, nominated, binding)

    sched._handle_failure = record  # type: ignore[method-assign]
    result = PodGroupAlgorithmResult(status=case.status, waiting_on_preemption=case.waiting_on_preemption)
    for queued, spec in zip(info.queued_pods, case.pods):
        result.pod_results.append(PodResult(queued, CycleState(), status=spec.status, host=spec.host,
                                            requires_preemption=spec.requires_preemption, nominated=spec.nominated))
    fwk = sched.profiles["default-scheduler"]
    sched._submit_pod_group_result(fwk, info, result, PodGroupCycleRecord("default/pg", 1), 0.0)

    assert {p.name for p, _ in cluster.bindings} == case.bound
    assert {n for n, nominated in failures.items() if nominated} == case.preempting
    assert {n for n, nominated in failures.items() if not nominated} == case.failed
    updates = cluster.take_pod_group_updates()
    final = updates[-1][1] if updates else existing
    condition = final.condition("PodGroupScheduled")
    assert condition is not None and (condition.status, condition.reason, condition.message) == case.condition
    if case.existing is not None and case.status is not None:
        assert updates == []  # a True condition is never regressed: nothing written
