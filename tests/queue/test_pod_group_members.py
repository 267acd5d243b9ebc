"""The queue's part in pod-group cycles (GenericWorkload): ``pop_specific_pod`` takes a
member out wherever it waits, every pod is stamped as it first enters activeQ (the
group's order reads the stamp), and a failed member retries after backoff whatever
rejected it.
"""

from __future__ import annotations

from typing import Any

from kubesched.clock import VirtualClock
from kubesched.framework.events import NODE_ADD
from kubesched.framework.status import Code, Status
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.plugins.prioritysort import PrioritySort
from kubesched.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE, QueueConfig, SchedulingQueue

from ..helpers import pod


def member(name: str, group: str | None = "pg", **kwargs: Any) -> PodInfo:
    raw = pod(name, uid=name, **kwargs)
    if group is not None:
        raw["spec"]["schedulingGroup"] = {"podGroupName": group}
    return parse_pod(raw)


def queue(clock: VirtualClock | None = None, gated: set[str] | None = None, pod_groups: bool = True) -> SchedulingQueue:
    held = gated if gated is not None else set()

    def pre_enqueue(p: PodInfo) -> Status | None:
        if p.name in held:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting", plugin="GangScheduling")
        return None

    return SchedulingQueue(clock or VirtualClock(), less=PrioritySort(), config=QueueConfig(pod_groups=pod_groups),
                           pre_enqueue=pre_enqueue, hints={"default-scheduler": [(NODE_ADD, "P", None)]})


def fail(q: SchedulingQueue, info: Any, plugins: tuple[str, ...] = ("P",)) -> str:
    info.unschedulable_plugins = set(plugins)
    return q.add_unschedulable_if_not_present(info, Code.UNSCHEDULABLE)


def test_pop_specific_pod_takes_a_member_from_active_q_as_a_pop_would():
    q = queue()
    a, b = member("a"), member("b")
    q.add(a)
    q.add(b)
    cycle = q.scheduling_cycle
    info = q.pop_specific_pod(b)
    assert info is not None and info.pod is b and info.attempts == 1
    assert q.scheduling_cycle == cycle + 1
    assert q.where("b") == "inFlight"
    assert q.pop().pod is a


def test_pop_specific_pod_takes_a_member_from_the_unschedulable_pods_and_from_backoff():
    clock = VirtualClock()
    q = queue(clock)
    a, b = member("a"), member("b", group=None)
    q.add(a)
    q.add(b)
    info_a = q.pop()
    info_b = q.pop()
    assert fail(q, info_a, ()) == BACKOFF  # no rejecting plugin: after backoff
    assert fail(q, info_b) == UNSCHEDULABLE  # an ordinary pod waits for an event
    assert q.pop_specific_pod(a) is info_a
    assert q.pop_specific_pod(b) is info_b


def test_pop_specific_pod_leaves_a_gated_pod_and_a_pod_in_flight():
    q = queue(gated={"g"})
    g, f = member("g"), member("f")
    q.add(g)
    q.add(f)
    assert q.pop() is not None  # f, now in flight
    assert q.pop_specific_pod(g) is None
    assert q.is_gated("g")
    assert q.pop_specific_pod(f) is None
    assert q.pop_specific_pod(member("unknown")) is None


def test_a_pod_is_stamped_as_it_first_enters_active_q_not_as_it_is_popped():
    clock = VirtualClock()
    held = {"early"}
    q = queue(clock, gated=held)
    early, late = member("early"), member("late")
    q.add(early)  # gated: not in activeQ yet
    clock.advance(5)
    q.add(late)
    held.clear()
    q.activate([early])
    clock.advance(5)
    first, second = q.pop(), q.pop()
    assert (first.pod.name, first.initial_attempt_timestamp) == ("early", 5.0)  # kept its place by its queue time
    assert second.initial_attempt_timestamp == 5.0
    assert second.initial_attempt_order < first.initial_attempt_order  # late entered activeQ first


def test_a_failed_member_retries_after_backoff_whatever_rejected_it():
    q = queue()
    a = member("a")
    q.add(a)
    info = q.pop()
    assert fail(q, info) == BACKOFF  # an ordinary pod rejected by P would wait for an event


def test_with_generic_workload_off_a_member_is_an_ordinary_pod():
    q = queue(pod_groups=False)
    a = member("a")
    q.add(a)
    info = q.pop()
    assert fail(q, info) == UNSCHEDULABLE


def test_pop_counts_the_pods_it_took_from_backoff_while_active_q_was_empty():
    q = queue()
    q.add(member("a"))
    fail(q, q.pop())
    assert q.where("a") == BACKOFF
    assert q.pop() is not None
    assert q.popped_from_backoff == 1
    q.add(member("b"))
    assert q.where("b") == ACTIVE
    q.pop()
    assert q.popped_from_backoff == 1
