"""``SchedulingQueue.on_incoming``: every pod entering a sub-queue is reported with
upstream's labels of ``scheduler_queue_incoming_pods_total{queue,event}`` (v1.36
``backend/queue``: ``active``, ``backoff``, ``unschedulable``; the event is the queue's
own move or the moving cluster event's ``Label()``)."""

from __future__ import annotations

from kubesched.clock import VirtualClock
from kubesched.framework.events import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
)
from kubesched.framework.status import Code

from ..helpers import make_pod
from .test_scheduling_queue import fail, queue


def recorded(q):
    seen: list[tuple[str, str]] = []
    q.on_incoming = lambda where, event: seen.append((where, event))
    return seen


def test_a_new_pod_enters_active_as_an_unscheduled_pod_add():
    q = queue()
    seen = recorded(q)
    q.add(make_pod("p"))
    assert seen == [("active", "UnschedulablePodAdd")]


def test_a_new_gated_pod_enters_the_unschedulable_pods():
    q = queue()
    seen = recorded(q)
    q.add(make_pod("g", gates=["hold"]))
    assert seen == [("unschedulable", "UnschedulablePodAdd")]


def test_a_failed_attempt_is_a_schedule_attempt_failure():
    q = queue()
    q.add(make_pod("p"))
    seen = recorded(q)
    fail(q, "p")
    assert seen == [("unschedulable", "ScheduleAttemptFailure")]


def test_an_erroring_pod_enters_backoff_as_a_schedule_attempt_failure():
    q = queue()
    q.add(make_pod("p"))
    seen = recorded(q)
    fail(q, "p", plugins=(), code=Code.ERROR)
    assert seen == [("backoff", "ScheduleAttemptFailure")]


def test_a_cluster_event_names_the_move_by_its_label():
    clock = VirtualClock()
    q = queue(clock, hints=[(NODE_ADD, "P", None), (ASSIGNED_POD_DELETE, "Q", None)])
    a, b = make_pod("a"), make_pod("b")
    q.add(a)
    q.add(b)
    fail(q, "a", plugins=("P",))
    fail(q, "b", plugins=("Q",))
    seen = recorded(q)
    q.move_all_to_active_or_backoff(NODE_ADD)  # a is still backing off
    clock.advance(5)
    q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)  # b's backoff is over
    assert seen == [("backoff", "NodeAdd"), ("active", "AssignedPodDelete")]


def test_a_node_update_is_labelled_resource_then_action():
    update = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
    q = queue(hints=[(update, "P", None)])
    q.add(make_pod("a"))
    fail(q, "a")
    seen = recorded(q)
    q.move_all_to_active_or_backoff(update)
    assert seen == [("backoff", "NodeUpdateNodeLabel")]


def test_backoff_completion_and_pop_from_backoff_are_named():
    clock = VirtualClock()
    q = queue(clock)
    for name in ("a", "b"):
        q.add(make_pod(name))
    fail(q, "a", plugins=(), code=Code.ERROR)
    fail(q, "b", plugins=(), code=Code.ERROR)
    seen = recorded(q)
    clock.advance(3)
    q.flush_backoff_completed()
    assert seen == [("active", "BackoffComplete"), ("active", "BackoffComplete")]
    del seen[:]
    q.add(make_pod("c"))
    fail(q, "a")  # pops a (first in activeQ) ...
    q.move_all_to_active_or_backoff(ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "WildCardEvent"))
    assert q.pop().pod.name == "b"
    q.pop()  # c; then a from backoffQ while it still backs off
    assert q.pop().pod.name == "a"
    assert seen[-1] == ("active", "PopFromBackoffQ")


def test_the_leftover_flush_is_an_unschedulable_timeout():
    clock = VirtualClock()
    q = queue(clock)
    q.add(make_pod("p"))
    fail(q, "p")
    seen = recorded(q)
    clock.advance(330)
    q.flush_unschedulable_leftover()
    assert seen == [("active", "UnschedulableTimeout")]


def test_activation_is_a_force_activate():
    q = queue()
    p = make_pod("p")
    q.add(p)
    fail(q, "p")
    seen = recorded(q)
    q.activate([p])
    assert seen == [("active", "ForceActivate")]


def test_an_update_names_the_first_change_upstream_extracts():
    pod_label = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
    q = queue(hints=[(pod_label, "P", None)])
    p = make_pod("p", labels={"a": "1"})
    q.add(p)
    fail(q, "p")
    seen = recorded(q)
    q.update(p, make_pod("p", uid=p.uid, labels={"a": "2"}))
    assert seen == [("backoff", "UnschedulablePodUpdatePodLabel")]


def test_an_update_of_a_pod_in_no_queue_adds_it_as_an_unscheduled_pod_update():
    q = queue()
    seen = recorded(q)
    p = make_pod("p")
    q.update(None, p)
    assert seen == [("active", "UnschedulablePodUpdate")]


def test_a_gated_pod_an_event_leaves_gated_counts_as_incoming_again():
    gates = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    q = queue(hints=[(gates, "SchedulingGates", None)])
    q.add(make_pod("g", gates=["hold"]))
    seen = recorded(q)
    q.move_all_to_active_or_backoff(gates)
    assert seen == [("unschedulable", "PodUpdatePodSchedulingGatesEliminated")]
    assert q.gated_count() == 1


def test_re_filing_a_waiting_pod_is_not_counted():
    q = queue()
    p = make_pod("g", gates=["hold"])
    q.add(p)
    seen = recorded(q)
    q.update(p, make_pod("g", uid=p.uid, gates=["hold", "other"]))
    assert seen == []


def test_without_an_observer_nothing_is_reported_and_the_queue_works():
    q = queue()
    q.add(make_pod("p"))
    assert q.on_incoming is None
    assert q.pop().pod.name == "p"
