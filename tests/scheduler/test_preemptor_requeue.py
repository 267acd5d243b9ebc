"""When a preemptor comes back after asynchronous preemption (upstream's prepareCandidateAsync and
its queue): its victims' deletions, seen through the watch, requeue it; the eviction calls
returning do not (upstream activates the preemptor only when an eviction failed), so a pod is
not retried before the room it made is seen. Driven as the live driver drives the scheduler
(``live_like.py``: a victim is marked terminating, as its grace period starts, and goes when
the test deletes it), the watch and the API's answers in the order each test says."""

from __future__ import annotations

from tests.helpers import node, pod
from tests.scheduler.live_like import LiveLike


def _preempted() -> tuple[LiveLike, str, str]:
    """One node full of a low-priority pod; a high-priority pod preempts it; nothing of the
    eviction reported yet."""
    sim = LiveLike([node("n1", cpu="2")])
    low = sim.add(pod("low", cpu="2", priority=0, node_name="n1"))
    sim.deliver()
    high = sim.add(pod("high", cpu="2", priority=100))
    sim.deliver(1)
    assert sim.cycles(1) == 1
    assert sim.api.evictions_done, "the eviction is under way"
    return sim, low.uid, high.uid


def test_the_eviction_call_returning_does_not_send_the_preemptor_back_to_be_tried() -> None:
    sim, _, high = _preempted()
    where = sim.scheduler.queue.where(high)
    sim.api.evictions_done.popleft()()  # the API answered; the watch has not told of the deletion yet
    assert sim.scheduler.queue.where(high) == where == "unschedulablePods"


def test_the_victim_s_deletion_seen_requeues_the_preemptor_which_then_binds() -> None:
    sim, low, high = _preempted()
    sim.api.evictions_done.popleft()()
    sim.deliver()  # the victim terminating: it holds its room until it is gone
    assert sim.scheduler.queue.where(high) == "unschedulablePods"
    sim.api.delete(low)
    sim.run(5)
    assert sim.node_of(high) == "n1"


def test_a_victim_seen_going_before_the_eviction_call_returns_does_not_hold_the_preemptor_back() -> None:
    sim, low, high = _preempted()
    while sim.api.watch:  # the victim terminating (and the nomination) reported before the call returns
        _, delivery = sim.api.watch.popleft()
        delivery(sim.scheduler)
    sim.api.delete(low)
    _, delivery = sim.api.watch.popleft()
    delivery(sim.scheduler)  # its deletion: the preemptor goes back to be tried, not held at PreEnqueue
    assert sim.scheduler.queue.where(high) in ("activeQ", "backoffQ")
    sim.run(5)
    assert sim.node_of(high) == "n1"
