"""What a pod group's members and its condition say when one member's algorithm fails with an error.

Upstream's ``podGroupSchedulingDefaultAlgorithm`` stops at the member whose algorithm failed
with an error and fails the group with ``fwk.AsStatus(fmt.Errorf("failed to schedule other pod
from a pod group: %w", ...))``. ``submitPodGroupAlgorithmResult`` then fails that member with
its own status and every other member with the group's, whose message is the wrapping error's
text; ``updatePodGroupCondition`` writes ``SchedulerError`` with ``status.AsError().Error()``,
the same text.
"""

from __future__ import annotations

from kubesched.framework.status import Code, Status

from .podgroup_support import FakePodGroupPlugin, group, member, scripted_scheduler, wait

OWN = 'running "FakePodGroupPlugin" filter plugin: boom'
GROUP = "failed to schedule other pod from a pod group: " + OWN


def test_a_members_error_fails_the_others_with_the_groups_wrapped_error() -> None:
    plugin = FakePodGroupPlugin(filter_status={"p1": None, "p2": Status(Code.ERROR, "boom"), "p3": None},
                                permit_status={"p1": wait(), "p3": wait()})
    sched, cluster = scripted_scheduler(plugin, groups=[group(min_count=3)])
    for name in ("p1", "p2", "p3"):
        sched.on_pod_add(member(name))
    sched.schedule_one()
    assert sched.group_cycles[-1].condition == ("False", "SchedulerError", GROUP)
    assert cluster.conditions == {
        "default/p1": ("SchedulerError", GROUP),  # fit, failed with its group
        "default/p2": ("SchedulerError", OWN),  # the error's own pod
        "default/p3": ("SchedulerError", GROUP),  # never tried
    }
    assert [(pod, message) for pod, _, _, message in cluster.events] == [
        ("default/p1", GROUP), ("default/p2", OWN), ("default/p3", GROUP)]
