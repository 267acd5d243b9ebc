"""The queue's bookkeeping without walks: the next timeout, the timed-out pods, the
backoffQ membership the simulator follows, and counts, all kept as pods move.

The specs compare the incremental answer with what a walk over the queue
gives (the definition), on sequences of failures, events, timeouts and deletions.
"""

from __future__ import annotations

import math
import random

from kubesched.clock import VirtualClock
from kubesched.framework.events import NODE_ADD, WILDCARD_EVENT
from kubesched.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE

from ..helpers import make_pod
from .test_scheduling_queue import fail, queue


def walked_earliest(q):
    """The definition: the oldest failure time of the waiting pods that are not gated."""
    waiting = [i.timestamp for i in q.pending_pods()[UNSCHEDULABLE] if not i.gated]
    return min(waiting) if waiting else None


def test_the_next_unschedulable_timeout_follows_the_oldest_waiting_pod():
    clock = VirtualClock()
    q = queue(clock)
    pods = {name: make_pod(name) for name in ("a", "b", "c")}
    for pod in pods.values():
        q.add(pod)
    for name in pods:
        fail(q, name)
        clock.advance(10)
    assert q._unschedulable.earliest_timestamp() == walked_earliest(q) == 0.0
    q.delete(pods["a"])  # the oldest leaves: the next one is the earliest
    assert q._unschedulable.earliest_timestamp() == walked_earliest(q) == 10.0
    due = 10.0 + 300
    assert q.next_wakeup() == 30 * math.ceil(math.nextafter(due, math.inf) / 30)


def test_gated_pods_never_set_the_next_timeout():
    q = queue()
    q.add(make_pod("g", gates=["hold"]))
    assert q._unschedulable.earliest_timestamp() is None
    assert q.next_wakeup() is None


def test_the_leftover_flush_takes_exactly_the_pods_past_the_limit_in_arrival_order():
    clock = VirtualClock()
    q = queue(clock)
    pods = {name: make_pod(name) for name in ("a", "b", "c", "d")}
    for pod in pods.values():
        q.add(pod)
    for name in pods:
        fail(q, name)
        clock.advance(100)  # failed at 0, 100, 200, 300
    clock.advance_to(420)  # a (420 s) and b (320 s) are past 300 s; c (220 s) is not
    assert [i.pod.name for i in q._unschedulable.timed_out(clock.now(), 300)] == ["a", "b"]


def test_the_leftover_flush_moves_the_timed_out_pods_only():
    clock = VirtualClock()
    q = queue(clock)
    pods = {name: make_pod(name) for name in ("a", "b", "c")}
    for pod in pods.values():
        q.add(pod)
    for name in pods:
        fail(q, name)
        clock.advance(100)  # failed at 0, 100, 200
    clock.advance_to(420)  # a and b are past 300 s; backed off long ago, they go to activeQ
    assert q.flush_unschedulable_leftover() == 2
    assert [q.where(pods[n].uid) for n in pods] == [ACTIVE, ACTIVE, UNSCHEDULABLE]


def test_a_pod_failing_again_is_timed_from_its_last_failure():
    clock = VirtualClock()
    q = queue(clock)
    q.add(make_pod("a"))
    fail(q, "a")
    clock.advance(200)
    q.move_all_to_active_or_backoff(WILDCARD_EVENT)
    clock.advance(20)
    q.flush_backoff_completed()
    fail(q, "a")  # failed again at 220: the entry of 0 is stale
    assert q._unschedulable.earliest_timestamp() == 220.0
    clock.advance_to(510)
    assert q.flush_unschedulable_leftover() == 0


def test_incremental_answers_agree_with_walks_on_random_histories():
    rng = random.Random(7)
    clock = VirtualClock()
    q = queue(clock)
    entered: set[str] = set()

    def watch(uid, into):
        assert (uid in entered) != into  # enters only when out, leaves only when in
        (entered.add if into else entered.discard)(uid)

    q.watch_backoff(watch)
    pods = [make_pod(f"p{i}", gates=["hold"] if i % 7 == 0 else None) for i in range(60)]
    for pod in pods:
        q.add(pod)
    for _ in range(600):
        roll = rng.random()
        if roll < 0.4:
            info = q.pop()
            if info is not None:
                info.unschedulable_plugins = {"P"}
                q.add_unschedulable_if_not_present(info)
        elif roll < 0.55:
            q.move_all_to_active_or_backoff(NODE_ADD if rng.random() < 0.5 else WILDCARD_EVENT)
        elif roll < 0.65:
            pod = rng.choice(pods)
            q.delete(pod)
            q.add(pod)
        else:
            clock.advance(rng.choice([0.5, 1, 7, 31]))
            q.run_due_flushes()
        listed = q.pending_pods()
        assert entered == {i.uid for i in listed[BACKOFF]}
        assert q._unschedulable.earliest_timestamp() == walked_earliest(q)
        counts = q.counts()
        assert counts[ACTIVE] == len(listed[ACTIVE]) and counts[BACKOFF] == len(listed[BACKOFF])
        assert counts["gated"] == q.gated_count() == sum(i.gated for i in listed[UNSCHEDULABLE])
        assert counts[UNSCHEDULABLE] == len(listed[UNSCHEDULABLE]) - counts["gated"]


def test_the_timeout_heap_stays_bounded_when_pods_come_and_go():
    clock = VirtualClock()
    q = queue(clock)
    q.add(make_pod("old"))
    fail(q, "old")  # stays at the top of the heap all along
    for i in range(500):
        pod = make_pod(f"p{i}")
        q.add(pod)
        fail(q, f"p{i}")
        q.delete(pod)
    assert len(q._unschedulable._stamps) <= 2 * len(q) + 64 + 1

