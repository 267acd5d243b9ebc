"""The pod-group scheduling algorithm (upstream's ``TestPodGroupSchedulingAlgorithm``): three
pods of one group tried in turn on ``node1`` with a scripted Filter, PostFilter and Permit.

The group is feasible once some pod's Permit answers Success; pods that fit nowhere are
passed over; a pod that needs preemption counts as placed on its nominated node and makes
the whole group wait on preemption; an error stops the algorithm at that pod. Every case
runs with and without placements (TopologyAwareWorkloadScheduling), where the only
placement is the whole cluster; preemption cases only without, as upstream's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PostFilterResult
from kubesched.framework.status import Code, Status

from .podgroup_support import FakePodGroupPlugin, group_info, member, scripted_scheduler, unschedulable, wait

NOMINATE = PostFilterResult("node1")
OK = None


@dataclass
class Case:
    name: str
    plugin: FakePodGroupPlugin
    group_code: Code
    pods: dict[str, Code]  # each tried pod's status code (a pod not listed was not tried)
    waiting_on_preemption: bool = False
    preemption: dict[str, bool] = field(default_factory=dict)
    skip_for_placements: bool = False


def plugin(filter_: tuple[Status | None, ...], permit: tuple[Status | None, ...] | None = None,
           post_filter: dict[str, tuple[PostFilterResult, Status | None]] | None = None) -> FakePodGroupPlugin:
    names = ("p1", "p2", "p3")
    fake = FakePodGroupPlugin(filter_status=dict(zip(names, filter_)))
    if permit is not None:
        fake.permit_status = {n: s for n, s in zip(names, permit)}
    for name, (result, status) in (post_filter or {}).items():
        fake.post_filter_result[name] = result
        fake.post_filter_status[name] = status
    return fake


S, U, E = Code.SUCCESS, Code.UNSCHEDULABLE, Code.ERROR

CASES = [
    Case("All pods feasible", plugin((OK, OK, OK), (OK, OK, OK)), S, {"p1": S, "p2": S, "p3": S}),
    Case("All pods feasible, two waiting", plugin((OK, OK, OK), (wait(), wait(), OK)), S, {"p1": S, "p2": S, "p3": S}),
    Case("All pods feasible, but all waiting", plugin((OK, OK, OK), (wait(), wait(), wait())), U,
         {"p1": S, "p2": S, "p3": S}),
    Case("All pods feasible, but last waiting", plugin((OK, OK, OK), (OK, OK, wait())), S, {"p1": S, "p2": S, "p3": S}),
    Case("All pods feasible, one waiting, one unschedulable", plugin((OK, OK, OK), (wait(), unschedulable(), OK)), S,
         {"p1": S, "p2": U, "p3": S}),
    Case("All pods require preemption",
         plugin((unschedulable(),) * 3, (OK, OK, OK), {n: (NOMINATE, OK) for n in ("p1", "p2", "p3")}), U,
         {"p1": U, "p2": U, "p3": U}, True, {"p1": True, "p2": True, "p3": True}, True),
    Case("All pods require preemption, but waiting",
         plugin((unschedulable(),) * 3, (wait(), wait(), wait()), {n: (NOMINATE, OK) for n in ("p1", "p2", "p3")}), U,
         {"p1": U, "p2": U, "p3": U}, False, {"p1": True, "p2": True, "p3": True}, True),
    Case("One pod requires preemption, but waiting, two are feasible",
         plugin((unschedulable(), OK, OK), (wait(), wait(), OK), {"p1": (NOMINATE, OK)}), U,
         {"p1": U, "p2": S, "p3": S}, True, {"p1": True, "p2": False, "p3": False}, True),
    Case("One pod unschedulable, one requires preemption, one feasible",
         plugin((unschedulable(), unschedulable(), OK), (OK, None, OK),
                {"p1": (NOMINATE, OK), "p2": (PostFilterResult(""), unschedulable())}), U,
         {"p1": U, "p2": U, "p3": S}, True, {"p1": True, "p2": False, "p3": False}, True),
    Case("All pods unschedulable",
         plugin((Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), unschedulable(), unschedulable())), U,
         {"p1": U, "p2": U, "p3": U}),
    Case("Any filter returned Error", plugin((OK, Status(Code.ERROR), OK), (OK, OK, OK)), E, {"p1": S, "p2": E}),
    Case("Any permit returned Error", plugin((OK, OK, OK), (OK, Status(Code.ERROR), OK)), E, {"p1": S, "p2": E}),
    Case("Any filter returned Error while waiting on preemption",
         plugin((unschedulable(), Status(Code.ERROR), OK), (OK, OK, OK), {"p1": (NOMINATE, OK)}), E,
         {"p1": U, "p2": E}),
    Case("Any permit returned Error while waiting on preemption",
         plugin((unschedulable(), OK, OK), (OK, Status(Code.ERROR), OK), {"p1": (NOMINATE, OK)}), E,
         {"p1": U, "p2": E}),
]

PARAMS = [pytest.param(case, placements, id=f"{case.name} (placements={placements})")
          for placements in (True, False) for case in CASES if not (placements and case.skip_for_placements)]


@pytest.mark.parametrize("case, placements", PARAMS)
def test_pod_group_scheduling_algorithm(case: Case, placements: bool) -> None:
    # p3's Permit is left unscripted in one case: the algorithm must not reach it there.
    if case.name == "One pod unschedulable, one requires preemption, one feasible":
        del case.plugin.permit_status["p2"]
    gates = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": placements}
    sched, _ = scripted_scheduler(case.plugin, gates)
    pods = [member(n) for n in ("p1", "p2", "p3")]
    fwk = sched.profiles["default-scheduler"]
    result = sched._pod_group_algorithm(fwk, CycleState(), group_info(pods), True, placements)

    assert (result.status.code if result.status is not None else Code.SUCCESS) == case.group_code
    assert result.waiting_on_preemption == case.waiting_on_preemption
    got = {r.queued.pod.name: (r.status.code if r.status is not None else Code.SUCCESS) for r in result.pod_results}
    assert got == case.pods
    for r in result.pod_results:
        name = r.queued.pod.name
        if r.status is None or r.requires_preemption:
            assert r.host == "node1"
            expected_permit = case.plugin.permit_status.get(name)
            assert (r.permit_status.code if r.permit_status is not None else None) == \
                   (expected_permit.code if expected_permit is not None else None)
        else:
            assert r.host == "" and r.permit_status is None
        if name in case.preemption:
            assert r.requires_preemption == case.preemption[name]
    # Whatever happened, nothing stays assumed: binding assumes the pods again.
    assert not any(sched.cache.is_assumed(p) for p in pods)
