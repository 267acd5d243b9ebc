"""What the scheduler's informer handlers do for pod groups: pending members join, change
and leave their group's state (upstream's Add/Update/RemovePodGroupMember), a binding makes
a member assigned, PodGroups are kept for the plugins and their arrival wakes the members
waiting for them; a member already assumed is skipped by a cycle; workload-aware
preemption's hook is asked only about unschedulable groups."""

from __future__ import annotations

from kubesched.framework.status import Code, Status

from .podgroup_support import FakePodGroupPlugin, default_scheduler, group, member, scripted_scheduler

GANG = {"GenericWorkload": True, "GangScheduling": True}


def test_pending_members_join_change_and_leave_their_group() -> None:
    sched, _ = scripted_scheduler(FakePodGroupPlugin())
    a, b = member("a"), member("b")
    sched.on_pod_add(a)
    sched.on_pod_add(b)
    state = sched.cache.pod_groups.get("default", "pg")
    assert state is not None and [p.name for p in state.unscheduled_pods()] == ["a", "b"]
    relabelled = a.copy_with(labels={"x": "y"})
    sched.on_pod_update(a, relabelled)
    assert state.unscheduled_pods()[0] is relabelled
    sched.on_pod_delete(b)
    assert state.all_pods_count() == 1


def test_a_bound_member_is_assigned() -> None:
    sched, _ = scripted_scheduler(FakePodGroupPlugin())
    a = member("a")
    sched.on_pod_add(a)
    sched.on_pod_update(a, a.copy_with(node_name="node1"))  # bound elsewhere, as the informer reports it
    state = sched.cache.pod_groups.get("default", "pg")
    assert state is not None and list(state.assigned_pods()) == ["a"] and state.unscheduled_pods() == []


def test_pod_groups_are_kept_and_their_arrival_wakes_their_members() -> None:
    sched, _ = default_scheduler(GANG)
    for name in ("a", "b"):
        sched.on_pod_add(member(name))
    assert sched.queue.is_gated("a")  # GangScheduling: "waiting for pods's pod group "pg" to appear ..."
    sched.on_pod_group_add(group(min_count=2))
    assert sched.pod_groups.pod_group("default", "pg") is not None
    assert not sched.queue.is_gated("a") and not sched.queue.is_gated("b")
    sched.on_pod_group_delete(group(min_count=2))
    assert sched.pod_groups.pod_group("default", "pg") is None


def test_with_generic_workload_off_pod_groups_are_not_kept() -> None:
    sched, _ = scripted_scheduler(FakePodGroupPlugin(), {})
    sched.on_pod_group_add(group())
    assert sched.pod_groups.pod_group("default", "pg") is None


def test_a_member_already_assumed_is_skipped() -> None:
    fake = FakePodGroupPlugin(filter_status={"a": None, "b": None}, permit_status={"a": None, "b": None})
    sched, cluster = scripted_scheduler(fake, groups=[group()])
    a, b = member("a"), member("b")
    sched.on_pod_add(a)
    sched.on_pod_add(b)
    sched.cache.assume_pod(b.copy_with(node_name="node1"), "node1")  # b's binding is under way
    sched.schedule_one()
    assert [c.order for c in sched.group_cycles] == [["default/a"]]
    assert [p.name for p, _ in cluster.bindings] == ["a"]


def test_the_preemption_hook_is_asked_about_unschedulable_groups_only() -> None:
    asked: list[str] = []

    def hook(fwk, state, info):  # type: ignore[no-untyped-def]
        asked.append(info.key)
        return None  # victims on their way: the group waits on preemption

    fake = FakePodGroupPlugin(filter_status={"ok": None}, permit_status={"ok": None})
    sched, cluster = scripted_scheduler(fake, groups=[group("good"), group("bad")])
    sched.pod_group_post_filter = hook
    sched.on_pod_add(member("ok", "good"))
    sched.on_pod_add(member("no", "bad"))
    sched.schedule_one()
    sched.schedule_one()
    assert asked == ["default/bad"]
    [_, bad] = list(sched.group_cycles)
    assert bad.condition == ("False", "Unschedulable", "pod group is unschedulable")
    assert cluster.conditions["default/no"][0] == "Unschedulable"


def test_a_preemption_hook_error_fails_the_group_with_it() -> None:
    sched, cluster = scripted_scheduler(FakePodGroupPlugin(), groups=[group()])
    sched.pod_group_post_filter = lambda fwk, state, info: Status(Code.ERROR, "no victims today")
    sched.on_pod_add(member("a"))
    sched.schedule_one()
    assert cluster.conditions["default/a"] == ("SchedulerError", "no victims today")
