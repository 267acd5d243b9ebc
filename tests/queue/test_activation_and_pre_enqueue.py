"""Points of upstream's v1.36 queue semantics (``backend/queue/scheduling_queue.go``):
``Activate`` of a pod that is being scheduled records a ForceActivate event aimed at it,
with ``SchedulerPopFromBackoffQ`` PreEnqueue is asked when a pod enters backoffQ
(``moveToBackoffQ``), not when it leaves it (``moveToActiveQ`` with ``movesFromBackoffQ``),
and a wildcard event skips gated pods whose gate did not register one."""

from __future__ import annotations

from kubesched.clock import VirtualClock
from kubesched.framework.events import NODE_ADD, WILDCARD_EVENT
from kubesched.framework.status import Code, Status
from kubesched.plugins.prioritysort import PrioritySort
from kubesched.queue.labels import BACKOFF_Q
from kubesched.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE, QueueConfig, SchedulingQueue

from ..helpers import make_pod
from .test_scheduling_queue import fail, queue


# -- activating a pod that is being scheduled (upstream's Activate for in-flight pods) --------
def test_activating_a_pod_in_flight_requeues_it_when_its_attempt_fails():
    q = queue(hints=[(NODE_ADD, "P", None)])
    p = make_pod("p")
    q.add(p)
    info = q.pop()
    q.activate([p])  # while it is being scheduled
    info.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(info) == BACKOFF  # not left waiting for a node


def test_activating_another_in_flight_pod_does_not_requeue_this_one():
    q = queue(hints=[(NODE_ADD, "P", None)])
    a, b = make_pod("a"), make_pod("b")
    q.add(a)
    q.add(b)
    first, second = q.pop(), q.pop()
    q.activate([second.pod])
    first.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(first) == UNSCHEDULABLE
    second.unschedulable_plugins = {"P"}
    assert q.add_unschedulable_if_not_present(second) == BACKOFF


def test_activating_an_unknown_pod_does_nothing():
    q = queue()
    q.activate([make_pod("ghost")])
    assert len(q) == 0 and q.pending_pods() == {ACTIVE: [], BACKOFF: [], UNSCHEDULABLE: []}


# -- PreEnqueue at backoffQ's door (SchedulerPopFromBackoffQ) -------------------------------
class _Gate:
    """A PreEnqueue that gates the pods named in ``closed`` and counts what it is asked."""

    def __init__(self) -> None:
        self.closed: set[str] = set()
        self.asked: list[str] = []

    def __call__(self, pod):
        self.asked.append(pod.name)
        if pod.name in self.closed:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "closed", plugin="Gate")
        return None


def _gated_queue(clock, gate, **config):
    return SchedulingQueue(clock, less=PrioritySort(), config=QueueConfig(**config), pre_enqueue=gate,
                           hints={"default-scheduler": [(NODE_ADD, "P", None)]})


def test_a_pod_entering_backoff_is_asked_pre_enqueue_and_waits_if_gated():
    clock, gate = VirtualClock(), _Gate()
    q = _gated_queue(clock, gate)
    p = make_pod("p")
    q.add(p)
    fail(q, "p")
    gate.closed.add("p")
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0
    assert q.where(p.uid) == UNSCHEDULABLE and q.gated_count() == 1


def test_a_pod_leaving_backoff_is_not_asked_again():
    clock, gate = VirtualClock(), _Gate()
    q = _gated_queue(clock, gate)
    q.add(make_pod("p"))
    fail(q, "p")
    q.move_all_to_active_or_backoff(NODE_ADD)
    asked = len(gate.asked)
    gate.closed.add("p")  # too late: it passed at backoffQ's door
    clock.advance(3)
    q.flush_backoff_completed()
    assert len(gate.asked) == asked
    assert q.pop().pod.name == "p"


def test_without_pop_from_backoff_the_pod_is_asked_when_it_leaves_backoff():
    clock, gate = VirtualClock(), _Gate()
    q = _gated_queue(clock, gate, pop_from_backoff_q=False)
    p = make_pod("p")
    q.add(p)
    fail(q, "p")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(p.uid) == BACKOFF
    gate.closed.add("p")
    clock.advance(3)
    q.flush_backoff_completed()
    assert q.where(p.uid) == UNSCHEDULABLE and q.gated_count() == 1


def test_a_wildcard_event_leaves_gated_pods_alone_unless_their_gate_registered_one():
    q = queue()
    g = make_pod("g", gates=["hold"])
    q.add(g)
    q.add(make_pod("p"))
    fail(q, "p")
    asked = []
    q.on_incoming = lambda where, event: asked.append(where)
    assert q.move_all_to_active_or_backoff(WILDCARD_EVENT) == 1  # p only
    assert q.where(g.uid) == UNSCHEDULABLE and asked == [BACKOFF_Q]
