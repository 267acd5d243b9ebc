"""The SchedulingQueue on a virtual clock: activeQ order, backoff, the periodic flushes,
pop from backoffQ, cluster events with queueing hints, in-flight events and gated pods.

Upstream v1.36 semantics (SchedulerQueueingHints and SchedulerPopFromBackoffQ on):
backoff is ``initial * 2^(count-1)`` capped at the maximum, where count is the pod's
consecutive errors if it has any, else its unschedulable attempts; expirations are
truncated to whole-second ordering windows, and a pod leaves backoff once the clock is
in a later window than its expiration.
"""

from __future__ import annotations

import pytest

from kubesched.clock import VirtualClock
from kubesched.framework.status import Code, Status
from kubesched.plugins.prioritysort import PrioritySort
from kubesched.framework.events import (
    NODE_ADD,
    WILDCARD_EVENT,
    ActionType,
    ClusterEvent,
    EventResource,
    QueueingHint,
)
from kubesched.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE, QueueConfig, SchedulingQueue

from ..helpers import make_pod

NODE_UPDATE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)


def queue(clock=None, hints=None, gates=True, **config):
    """A queue for the default profile. ``hints``: (event, plugin, hint fn) registrations."""
    clock = clock or VirtualClock()

    def pre_enqueue(pod):
        if pod.scheduling_gates:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated", plugin="SchedulingGates")
        return None

    return SchedulingQueue(
        clock,
        less=PrioritySort(),
        config=QueueConfig(**config),
        pre_enqueue=pre_enqueue if gates else None,
        hints={"default-scheduler": list(hints or [])},
    )


def names(q):
    out = []
    while (info := q.pop()) is not None:
        out.append(info.pod.name)
        q.done(info.uid)
    return out


def fail(q, name="p", plugins=("P",), code=Code.UNSCHEDULABLE, pending=()):
    """Pop the next pod (it must be ``name``) and hand it back as failed by ``plugins``."""
    info = q.pop()
    assert info is not None and info.pod.name == name
    info.unschedulable_plugins = set(plugins)
    info.pending_plugins = set(pending)
    return info, q.add_unschedulable_if_not_present(info, code)


# -- activeQ order ---------------------------------------------------------------------------
def test_active_queue_pops_by_priority_then_arrival():
    clock = VirtualClock()
    q = queue(clock)
    for name, prio in [("low", 1), ("high", 10), ("mid-a", 5), ("mid-b", 5), ("high-b", 10)]:
        q.add(make_pod(name, priority=prio))
        clock.advance(0.1)
    assert names(q) == ["high", "high-b", "mid-a", "mid-b", "low"]


def test_pods_added_at_the_same_instant_keep_their_arrival_order():
    q = queue()
    for i in range(5):
        q.add(make_pod(f"p{i}"))
    assert names(q) == [f"p{i}" for i in range(5)]


def test_a_failed_pod_queues_behind_pods_of_its_priority_that_arrived_before_it_came_back():
    clock = VirtualClock()
    q = queue(clock, hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    clock.advance_to(1)
    q.add(make_pod("newer"))
    clock.advance_to(2)
    fail(q, "p")  # popped first (added at t=0), back at t=2
    clock.advance_to(10)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert names(q) == ["newer", "p"]


# -- backoff -----------------------------------------------------------------------------------
@pytest.mark.parametrize("failures, expiry", [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (6, 10), (12, 10)])
def test_backoff_doubles_from_one_second_up_to_ten(failures, expiry):
    clock = VirtualClock()
    q = queue(clock)  # no hints: an error goes straight to backoff
    q.add(make_pod("p"))
    for _ in range(failures):
        info, where = fail(q, "p", plugins=(), code=Code.ERROR)
        assert where == BACKOFF
        q.activate([info.pod])
    assert info.backoff_expiry == expiry  # failed at t=0


def test_backoff_respects_configured_initial_and_maximum():
    clock = VirtualClock()
    q = queue(clock, pod_initial_backoff=2.0, pod_max_backoff=5.0)
    q.add(make_pod("p"))
    expiries = []
    for _ in range(3):
        info, _ = fail(q, "p", plugins=(), code=Code.ERROR)
        expiries.append(info.backoff_expiry)
        q.activate([info.pod])
    assert expiries == [2.0, 4.0, 5.0]


def test_unschedulable_and_error_failures_count_separately():
    clock = VirtualClock()
    q = queue(clock, hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    for _ in range(3):
        info, _ = fail(q, "p")  # unschedulable: 1s, 2s, 4s
        q.activate([info.pod])
    info, _ = fail(q, "p", plugins=(), code=Code.ERROR)
    assert info.backoff_expiry == 1.0  # the first error backs off 1s, not 8s
    q.activate([info.pod])
    info, _ = fail(q, "p")
    assert info.consecutive_errors_count == 0
    assert info.backoff_expiry == 8.0  # the fourth unschedulable attempt


def test_a_backing_off_pod_moves_to_active_only_after_its_window_ends():
    clock = VirtualClock()
    q = queue(clock)
    q.add(make_pod("p"))
    clock.advance_to(0.5)
    info, where = fail(q, "p", plugins=(), code=Code.ERROR)  # expires at 1.5, in the window [1, 2)
    assert where == BACKOFF and info.backoff_expiry == 1.0
    for t, expected in [(1.0, BACKOFF), (1.9, BACKOFF), (2.0, ACTIVE)]:
        clock.advance_to(t)
        q.run_due_flushes()
        assert q.where(info.uid) == expected, t


def test_backoff_flushes_run_on_whole_seconds():
    clock = VirtualClock()
    q = queue(clock)
    q.add(make_pod("p"))
    info, _ = fail(q, "p", plugins=(), code=Code.ERROR)  # expires at 1.0: done in the window [2, 3)
    for t, expected in [(1.0, BACKOFF), (1.5, BACKOFF), (2.5, ACTIVE)]:
        clock.advance_to(t)
        q.run_due_flushes()  # at 2.5 the flush of t=2 is due
        assert q.where(info.uid) == expected, t


def test_next_wakeup_is_the_flush_that_completes_the_backoff():
    clock = VirtualClock()
    q = queue(clock)
    q.add(make_pod("p"))
    fail(q, "p", plugins=(), code=Code.ERROR)
    assert q.next_wakeup() == 2.0


def test_backoff_queue_orders_a_window_by_priority():
    clock = VirtualClock()
    q = queue(clock, hints=[(NODE_ADD, "P", None)])
    for i, (name, prio) in enumerate([("a", 1), ("c", 3), ("b", 5)]):
        clock.advance_to(0.1 * (i + 1))  # each fails at once; all expire in the window [1, 2)
        q.add(make_pod(name, priority=prio))
        fail(q, name)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.counts()[BACKOFF] == 3
    assert names(q) == ["b", "c", "a"]  # popped from backoffQ: one window, by priority


# -- pop from backoffQ ----------------------------------------------------------------------------
def test_pop_takes_a_backing_off_pod_when_active_queue_is_empty():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    fail(q, "p")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(q.pending_pods()[BACKOFF][0].uid) == BACKOFF
    info = q.pop()
    assert info is not None and info.pod.name == "p"
    assert info.attempts == 2


def test_pop_prefers_active_pods_over_backing_off_ones():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p", priority=100))
    fail(q, "p")
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.add(make_pod("low", priority=1))
    assert q.pop().pod.name == "low"


def test_pop_never_takes_a_pod_backing_off_after_an_error():
    q = queue()
    q.add(make_pod("p"))
    fail(q, "p", plugins=(), code=Code.ERROR)
    assert q.pop() is None
    assert not q.has_ready()


def test_pop_finds_an_unschedulable_backing_off_pod_behind_an_erroring_one():
    clock = VirtualClock()
    q = queue(clock, hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("err"))
    q.add(make_pod("unsched"))
    fail(q, "err", plugins=(), code=Code.ERROR)  # expires at 1
    clock.advance_to(0.5)
    fail(q, "unsched")  # expires at 1.5
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.counts()[BACKOFF] == 2
    info = q.pop()
    assert info is not None and info.pod.name == "unsched"


# -- unschedulable pods and cluster events --------------------------------------------------------
def queue_hint(answer):
    return lambda pod, old, new: answer


@pytest.mark.parametrize(
    "registrations, event, moved",
    [
        pytest.param([(NODE_ADD, "P", None)], NODE_ADD, True, id="the rejecting plugin registered the event"),
        pytest.param([(NODE_ADD, "P", queue_hint(QueueingHint.QUEUE))], NODE_ADD, True, id="its hint says QUEUE"),
        pytest.param([(NODE_ADD, "P", queue_hint(QueueingHint.SKIP))], NODE_ADD, False, id="its hint says SKIP"),
        pytest.param([(NODE_ADD, "Q", None)], NODE_ADD, False, id="only another plugin registered the event"),
        pytest.param([(NODE_ADD, "P", None)], POD_DELETE, False, id="an event nobody registered"),
        pytest.param(
            [(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), "P", None)],
            NODE_UPDATE_LABEL,
            True,
            id="a registration covers each of its action types",
        ),
        pytest.param([(NODE_ADD, "P", None)], WILDCARD_EVENT, True, id="a wildcard event moves every pod"),
        pytest.param(
            [(NODE_ADD, "P", queue_hint(QueueingHint.SKIP)), (NODE_ADD, "P", queue_hint(QueueingHint.QUEUE))],
            NODE_ADD,
            True,
            id="one QUEUE among the plugin's hints is enough",
        ),
    ],
)
def test_unschedulable_pods_move_only_on_events_their_rejectors_care_about(registrations, event, moved):
    q = queue(hints=registrations)
    q.add(make_pod("p"))
    info, where = fail(q, "p")
    assert where == UNSCHEDULABLE
    q.move_all_to_active_or_backoff(event)
    assert q.where(info.uid) == (BACKOFF if moved else UNSCHEDULABLE)


def test_a_hint_that_raises_counts_as_queue():
    def broken(pod, old, new):
        raise ValueError("bad object")

    q = queue(hints=[(NODE_ADD, "P", broken)])
    q.add(make_pod("p"))
    info, _ = fail(q, "p")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(info.uid) == BACKOFF


def test_hints_receive_the_pod_and_the_changed_objects():
    seen = []
    q = queue(hints=[(NODE_ADD, "P", lambda pod, old, new: seen.append((pod.name, old, new)) or QueueingHint.QUEUE)])
    q.add(make_pod("p"))
    fail(q, "p")
    q.move_all_to_active_or_backoff(NODE_ADD, None, "node-object")
    assert seen == [("p", None, "node-object")]


def test_a_pod_whose_backoff_is_over_moves_straight_to_active():
    clock = VirtualClock()
    q = queue(clock, hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    info, _ = fail(q, "p")
    clock.advance_to(5.0)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(info.uid) == ACTIVE


def test_queue_from_a_pending_plugin_skips_the_backoff():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    info, where = fail(q, "p", plugins=(), pending=("P",))
    assert where == UNSCHEDULABLE
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(info.uid) == ACTIVE


def test_an_erroring_pod_goes_to_backoff_not_to_the_unschedulable_pods():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    info, where = fail(q, "p", plugins=(), code=Code.ERROR)
    assert where == BACKOFF
    assert info.consecutive_errors_count == 1


def test_hints_are_looked_up_for_the_pods_profile():
    q = SchedulingQueue(
        VirtualClock(), less=PrioritySort(),
        hints={"default-scheduler": [], "other": [(NODE_ADD, "P", None)]},
    )
    q.add(make_pod("mine"))
    q.add(make_pod("theirs", scheduler_name="other"))
    mine, _ = fail(q, "mine")
    theirs, _ = fail(q, "theirs")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert (q.where(mine.uid), q.where(theirs.uid)) == (UNSCHEDULABLE, BACKOFF)


def test_pre_check_filters_the_pods_an_event_may_move():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    a, _ = fail(q, "a")
    b, _ = fail(q, "b")
    q.move_all_to_active_or_backoff(NODE_ADD, pre_check=lambda pod: pod.name == "b")
    assert (q.where(a.uid), q.where(b.uid)) == (UNSCHEDULABLE, BACKOFF)


# -- in-flight pods ---------------------------------------------------------------------------------
def test_an_event_during_the_attempt_is_replayed_when_the_pod_fails():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    info = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD)  # while p is being scheduled
    info.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(info, Code.UNSCHEDULABLE) == BACKOFF


@pytest.mark.parametrize(
    "registrations, event",
    [
        pytest.param([(NODE_ADD, "P", queue_hint(QueueingHint.SKIP))], NODE_ADD, id="the hint says SKIP"),
        pytest.param([(NODE_ADD, "Q", None)], NODE_ADD, id="another plugin's event"),
        pytest.param([(NODE_ADD, "P", None)], POD_DELETE, id="an unregistered event"),
    ],
)
def test_an_irrelevant_event_during_the_attempt_leaves_the_pod_unschedulable(registrations, event):
    q = queue(hints=registrations)
    q.add(make_pod("p"))
    info = q.pop()
    q.move_all_to_active_or_backoff(event)
    info.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(info, Code.UNSCHEDULABLE) == UNSCHEDULABLE


def test_an_event_before_the_pod_was_popped_is_not_replayed():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    q.add(make_pod("other"))
    first = q.pop()  # "p": in flight
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.done(first.uid)
    second = q.pop()  # "other" was popped after the event
    second.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(second, Code.UNSCHEDULABLE) == UNSCHEDULABLE


def test_events_are_kept_while_any_pod_that_saw_them_is_in_flight():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    a = q.pop()
    b = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.done(a.uid)  # a bound: its attempt is over
    b.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(b, Code.UNSCHEDULABLE) == BACKOFF


def test_pending_plugin_events_during_the_attempt_send_the_pod_to_active():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    info = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD)
    info.pending_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(info, Code.PENDING) == ACTIVE


# -- leftover unschedulable pods ---------------------------------------------------------------------
def test_unschedulable_pods_are_retried_after_five_minutes_checked_every_thirty_seconds():
    clock = VirtualClock()
    q = queue(clock)
    q.add(make_pod("p"))
    info, _ = fail(q, "p")
    assert q.next_wakeup() == 330.0
    for t, expected in [(30, UNSCHEDULABLE), (270, UNSCHEDULABLE), (300, UNSCHEDULABLE), (329, UNSCHEDULABLE), (330, ACTIVE)]:
        clock.advance_to(t)
        q.run_due_flushes()
        assert q.where(info.uid) == expected, t


def test_the_leftover_duration_is_configurable():
    clock = VirtualClock()
    q = queue(clock, pod_max_in_unschedulable=60.0)
    q.add(make_pod("p"))
    info, _ = fail(q, "p")
    clock.advance_to(90)
    q.run_due_flushes()
    assert q.where(info.uid) == ACTIVE


# -- gated pods ---------------------------------------------------------------------------------------
def test_a_gated_pod_waits_among_the_unschedulable_pods():
    q = queue()
    assert q.add(make_pod("g", gates=["example.com/wait"])) == UNSCHEDULABLE
    assert q.counts() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, "gated": 1}
    assert q.pop() is None


def test_a_gated_pod_ignores_cluster_events_and_the_leftover_flush():
    clock = VirtualClock()
    q = queue(clock, hints=[(NODE_ADD, "SchedulingGates", None)])
    gated = make_pod("g", gates=["example.com/wait"])
    q.add(gated)
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.move_all_to_active_or_backoff(WILDCARD_EVENT)
    clock.advance_to(3600)
    q.run_due_flushes()
    assert q.where(gated.uid) == UNSCHEDULABLE


def test_removing_the_gates_moves_the_pod_to_active_at_once():
    q = queue()
    gated = make_pod("g", gates=["example.com/wait"])
    q.add(gated)
    ungated = make_pod("g", uid=gated.uid)
    q.update(gated, ungated)
    assert q.where(gated.uid) == ACTIVE
    assert q.pop().pod is ungated


# -- updates, deletes, activation ------------------------------------------------------------------------
def test_updating_a_queued_pod_replaces_it_in_place():
    q = queue()
    old = make_pod("p", priority=1)
    q.add(old)
    q.add(make_pod("other", priority=5))
    new = make_pod("p", uid=old.uid, priority=10)
    q.update(old, new)
    assert names(q) == ["p", "other"]


def test_deleting_a_pod_removes_it_from_every_queue():
    q = queue(hints=[(NODE_ADD, "P", None)])
    pods = [make_pod(n) for n in ("a", "b", "c")]
    for p in pods:
        q.add(p)
    fail(q, "a")  # unschedulable
    fail(q, "b", plugins=(), code=Code.ERROR)  # backoff
    for p in pods:
        q.delete(p)
    assert len(q) == 0 and q.pop() is None


def test_activate_moves_waiting_pods_to_active():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    a, _ = fail(q, "a")
    b, _ = fail(q, "b", plugins=(), code=Code.ERROR)
    q.activate([a.pod, b.pod])
    assert (q.where(a.uid), q.where(b.uid)) == (ACTIVE, ACTIVE)


def test_a_pod_already_queued_is_not_added_twice():
    q = queue()
    p = make_pod("p")
    q.add(p)
    info = q.pop()
    q.add(p)  # the informer re-delivered it while in flight
    info.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(info, Code.UNSCHEDULABLE) == ""
    assert len(q) == 1


def test_each_pop_counts_an_attempt_and_clears_the_last_rejectors():
    q = queue(hints=[(NODE_ADD, "P", None)])
    q.add(make_pod("p"))
    info, _ = fail(q, "p")
    q.activate([info.pod])
    again = q.pop()
    assert again is info
    assert again.attempts == 2 and not again.unschedulable_plugins
    assert again.initial_attempt_timestamp == 0.0


# -- pod updates ---------------------------------------------------------------------------------------------
POD_UPDATE_TOLERATIONS = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS)


def test_an_update_of_an_unschedulable_pod_requeues_it_when_its_rejector_cares():
    q = queue(hints=[(POD_UPDATE_TOLERATIONS, "P", None)])
    old = make_pod("p")
    q.add(old)
    fail(q, "p")
    new = make_pod("p", uid=old.uid, tolerations=[{"operator": "Exists"}])
    q.update(old, new)
    assert q.where(old.uid) == BACKOFF
    assert q.pending_pods()[BACKOFF][0].pod is new


def test_an_update_from_a_pending_plugins_view_requeues_at_once():
    q = queue(hints=[(POD_UPDATE_TOLERATIONS, "P", None)])
    old = make_pod("p")
    q.add(old)
    fail(q, "p", plugins=(), pending=("P",))
    q.update(old, make_pod("p", uid=old.uid, tolerations=[{"operator": "Exists"}]))
    assert q.where(old.uid) == ACTIVE


def test_an_update_that_changes_nothing_scheduling_reads_leaves_the_pod_unschedulable():
    # The scheduler's own PodScheduled condition comes back as such an update: upstream's
    # generic Update, which no specific registration hears.
    q = queue(hints=[(POD_UPDATE_TOLERATIONS, "P", None),
                     (ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN), "P", None)])
    old = make_pod("p")
    q.add(old)
    fail(q, "p")
    q.update(old, make_pod("p", uid=old.uid))
    assert q.where(old.uid) == UNSCHEDULABLE


def test_a_generic_update_registration_hears_any_update_of_the_pod():
    q = queue(hints=[(ClusterEvent(EventResource.POD, ActionType.UPDATE), "P", None)])
    old = make_pod("p")
    q.add(old)
    fail(q, "p")
    q.update(old, make_pod("p", uid=old.uid))
    assert q.where(old.uid) == BACKOFF


def test_an_update_during_the_attempt_is_replayed_when_the_pod_fails():
    q = queue(hints=[(POD_UPDATE_TOLERATIONS, "P", None)])
    old = make_pod("p")
    q.add(old)
    info = q.pop()
    q.update(old, make_pod("p", uid=old.uid, tolerations=[{"operator": "Exists"}]))
    assert q.where(old.uid) == "inFlight"  # not queued twice
    info.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(info, Code.UNSCHEDULABLE) == BACKOFF


def test_another_pods_update_during_the_attempt_is_not_replayed():
    q = queue(hints=[(POD_UPDATE_TOLERATIONS, "P", None)])
    a, b = make_pod("a"), make_pod("b")
    q.add(a)
    q.add(b)
    first = q.pop()
    second = q.pop()
    q.update(b, make_pod("b", uid=b.uid, tolerations=[{"operator": "Exists"}]))  # b changes while both are in flight
    first.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(first, Code.UNSCHEDULABLE) == UNSCHEDULABLE
    second.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(second, Code.UNSCHEDULABLE) == BACKOFF
