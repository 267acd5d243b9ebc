"""Pod-group state (upstream's ``podgroupstate_test.go``) and how the cache keeps it.

A group's members are unscheduled, assumed or assigned; assuming and forgetting move a
pending member between the first two, a bound member stays assigned whatever happens,
and a pod the state does not know is ignored. The cache keeps every group's state as pods
are assumed, forgotten, bound and removed, only while GenericWorkload is on.
"""

from __future__ import annotations

from typing import Any

from kubesched.cache.cache import Cache
from kubesched.cache.pod_groups import PodGroupState, PodGroupStates
from kubesched.objects.pod import PodInfo, parse_pod
from tests.helpers import make_node, pod


def member(name: str, group: str = "pg", node: str | None = None, **kwargs: Any) -> PodInfo:
    raw = pod(name, uid=name, node_name=node, **kwargs)
    raw["spec"]["schedulingGroup"] = {"podGroupName": group}
    return parse_pod(raw)


def counts(state: PodGroupState) -> tuple[int, int]:
    return state.all_pods_count(), state.scheduled_pods_count()


def test_assume_moves_a_member_from_unscheduled_to_assumed_and_forget_moves_it_back():
    state = PodGroupState("ns1", "pg1")
    p1 = member("p1", "pg1")
    state.add_pod(p1)
    assert "p1" not in state.assumed_pods()
    assert state.unscheduled_pods() == [p1]

    state.assume_pod(p1.copy_with(node_name="node1"))
    assert "p1" in state.assumed_pods()
    assert state.unscheduled_pods() == []

    state.forget_pod("p1")
    assert "p1" not in state.assumed_pods()
    assert state.unscheduled_pods() == [p1]


def test_counts_follow_assume_and_forget_and_ignore_bound_and_unknown_pods():
    state = PodGroupState("ns1", "pg1")
    p1, p2, p4 = member("p1", "pg1"), member("p2", "pg1"), member("p4", "pg1")
    p3 = member("p3", "pg1", node="node1")
    assert counts(state) == (0, 0)
    for p in (p1, p2, p3):
        state.add_pod(p)
    assert counts(state) == (3, 1)

    state.assume_pod(p1)
    assert counts(state) == (3, 2)
    state.assume_pod(p3)  # already bound: stays assigned
    assert counts(state) == (3, 2)
    state.assume_pod(p4)  # not a known member
    assert counts(state) == (3, 2)
    state.forget_pod(p3.uid)  # bound: stays assigned
    assert counts(state) == (3, 2)
    state.forget_pod(p1.uid)
    assert counts(state) == (3, 1)
    state.forget_pod(p1.uid)  # not assumed any more
    assert counts(state) == (3, 1)
    state.assume_pod(p2)
    assert counts(state) == (3, 2)
    state.forget_pod(p4.uid)
    assert counts(state) == (3, 2)


def test_scheduled_pods_are_the_assigned_then_the_assumed_as_assumed():
    state = PodGroupState("ns", "pg")
    unscheduled, assumed, assigned = member("p1"), member("p2"), member("p3", node="node1")
    for p in (assigned, unscheduled, assumed):
        state.add_pod(p)
    on_node2 = assumed.copy_with(node_name="node2")
    state.assume_pod(on_node2)
    assert state.scheduled_pods() == [assigned, on_node2]


def test_readers_list_members_in_the_order_first_seen():
    state = PodGroupState("ns", "pg")
    pods = [member(f"p{i}") for i in (3, 1, 2)]
    for p in pods:
        state.add_pod(p)
    state.assume_pod(pods[2])
    state.assume_pod(pods[0])
    assert list(state.all_pods()) == ["p3", "p1", "p2"]
    assert list(state.assumed_pods()) == ["p2", "p3"]
    state.forget_pod("p3")
    assert [p.name for p in state.unscheduled_pods()] == ["p3", "p1"]


def test_a_member_that_gets_a_node_in_an_update_is_assigned():
    state = PodGroupState("ns", "pg")
    p1 = member("p1")
    state.add_pod(p1)
    state.assume_pod(p1.copy_with(node_name="n1"))
    state.update_pod(p1, p1.copy_with(node_name="n1"))
    assert list(state.assigned_pods()) == ["p1"]
    assert list(state.assumed_pods()) == []


def test_every_change_moves_the_generation_and_readers_do_not():
    state = PodGroupState("ns", "pg")
    seen = [state.generation]
    p1 = member("p1")
    for change in (lambda: state.add_pod(p1), lambda: state.assume_pod(p1), lambda: state.forget_pod("p1"),
                   lambda: state.delete_pod("p1")):
        change()
        seen.append(state.generation)
    state.all_pods_count()
    state.unscheduled_pods()
    assert seen == sorted(set(seen)) and state.generation == seen[-1]


def test_states_drop_a_group_whose_last_member_is_removed():
    states = PodGroupStates()
    p1, p2 = member("p1"), member("p2")
    states.add_member(p1)
    states.add_member(p2)
    states.remove_member(p1)
    assert states.get("default", "pg") is not None
    states.remove_member(p2)
    assert states.get("default", "pg") is None


def test_assuming_a_member_of_a_group_never_seen_starts_the_group_with_it():
    states = PodGroupStates()
    states.assume_member(member("p1", node="n1"))
    found = states.get("default", "pg")
    assert found is not None and found.all_pods_count() == 1


# -- the cache --------------------------------------------------------------------------
def cache_with_node(generic_workload: bool = True) -> Cache:
    cache = Cache()
    cache.generic_workload = generic_workload
    cache.add_node(make_node("n1"))
    return cache


def test_the_cache_tracks_a_member_from_pending_to_assumed_to_bound():
    cache = cache_with_node()
    p1 = member("p1")
    cache.add_pod_group_member(p1)
    state = cache.pod_groups.get("default", "pg")
    assert state is not None and [p.name for p in state.unscheduled_pods()] == ["p1"]

    assumed = p1.copy_with(node_name="n1")
    cache.assume_pod(assumed, "n1")
    assert list(state.assumed_pods()) == ["p1"]

    cache.remove_pod_group_member(p1)  # the informer: no longer a pending pod
    cache.add_pod(assumed)  # ... but a bound one
    state = cache.pod_groups.get("default", "pg")
    assert state is not None and list(state.assigned_pods()) == ["p1"] and state.scheduled_pods_count() == 1


def test_forgetting_an_assumed_member_makes_it_unscheduled_again():
    cache = cache_with_node()
    p1 = member("p1")
    cache.add_pod_group_member(p1)
    cache.assume_pod(p1.copy_with(node_name="n1"), "n1")
    cache.forget_pod(p1)
    state = cache.pod_groups.get("default", "pg")
    assert state is not None and state.scheduled_pods_count() == 0 and len(state.unscheduled_pods()) == 1


def test_bound_members_count_and_leave_with_their_pod():
    cache = cache_with_node()
    bound = member("b1", node="n1")
    cache.add_pod(bound)
    state = cache.pod_groups.get("default", "pg")
    assert state is not None and list(state.assigned_pods()) == ["b1"]
    cache.remove_pod(bound)
    assert cache.pod_groups.get("default", "pg") is None


def test_with_generic_workload_off_the_cache_tracks_no_group():
    cache = cache_with_node(generic_workload=False)
    p1 = member("p1")
    cache.add_pod_group_member(p1)
    cache.assume_pod(p1.copy_with(node_name="n1"), "n1")
    cache.add_pod(member("b1", node="n1"))
    assert len(cache.pod_groups) == 0
