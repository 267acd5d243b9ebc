"""DefaultPreemption's PostFilter for pod-group members, as upstream's default_preemption_test.go
specifies it: with TopologyAwareWorkloadScheduling a member of a constrained group does not
preempt pod by pod (the constraint wins over WorkloadAwarePreemption's message) and a member
whose group is missing does not either; with WorkloadAwarePreemption no member does; otherwise
members preempt as any pod (here: they reach the evaluator)."""

from __future__ import annotations

import pytest

from kubesched.framework import CycleState
from kubesched.framework.features import Features
from kubesched.framework.status import Code
from kubesched.objects.podgroup import PodGroup
from kubesched.plugins.defaultpreemption import DefaultPreemption, DefaultPreemptionArgs

from .podgroup_fakes import FakePodGroups, group, group_handle, member

REACHES_THE_EVALUATOR = "preemption: not attached to a scheduler"
CONSTRAINED = "preemption: not eligible due to placement-based pod group scheduling limitation"
WAP = "preemption: not eligible due to workload aware preemption enabled"


def constrained(name: str) -> PodGroup:
    g = group(name, 2, topology="rack")
    return PodGroup(g.namespace, g.name, g.uid, g.generation, g.resource_version, g.min_count, g.topology_keys,
                    has_scheduling_constraints=True)


@pytest.mark.parametrize("groups, tas, wap, message", [
    pytest.param((constrained("foo"),), True, False, CONSTRAINED,
                 id="pod with SchedulingGroup with TAS with scheduling constraint enabled should not preempt"),
    pytest.param((constrained("foo"),), True, True, CONSTRAINED,
                 id="pod with SchedulingGroup with TAS with scheduling constraint enabled should not preempt even "
                    "when WAP is enabled"),
    pytest.param((group("foo", 2),), True, False, REACHES_THE_EVALUATOR,
                 id="pod with SchedulingGroup with TAS without scheduling constraint enabled should preempt"),
    pytest.param((group("foo", 2),), True, True, WAP, id="pod with SchedulingGroup with TAS with WAP enabled should not preempt"),
    pytest.param((), False, True, WAP, id="pod with SchedulingGroup with WAP enabled should not preempt"),
    pytest.param((), False, False, REACHES_THE_EVALUATOR, id="pod with SchedulingGroup with TAS and WAP disabled should preempt"),
    pytest.param((), True, False, "preemption: pod group for pod not found", id="pod whose pod group is missing with TAS"),
])
def test_post_filter_of_a_pod_group_member(groups: tuple[PodGroup, ...], tas: bool, wap: bool, message: str) -> None:
    handle = group_handle(FakePodGroups(groups))
    handle.hub.features = Features(enable_generic_workload=True, enable_topology_aware_workload_scheduling=tas,
                                   enable_workload_aware_preemption=wap)
    plugin = DefaultPreemption(DefaultPreemptionArgs(), handle.handle)
    result, status = plugin.post_filter(CycleState(), member("p-with-podgroup", "foo", priority=1000), None)  # type: ignore[arg-type]
    assert result is None
    assert status is not None and (status.code, status.message) == (Code.UNSCHEDULABLE, message)


def test_a_pod_of_no_group_is_not_refused() -> None:
    handle = group_handle(FakePodGroups())
    handle.hub.features = Features(enable_generic_workload=True, enable_topology_aware_workload_scheduling=True,
                                   enable_workload_aware_preemption=True)
    _, status = DefaultPreemption(DefaultPreemptionArgs(), handle.handle).post_filter(
        CycleState(), member("p", None), None)  # type: ignore[arg-type]
    assert status is not None and status.message == REACHES_THE_EVALUATOR
