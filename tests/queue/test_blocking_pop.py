"""A blocking ``pop`` (the live scheduling loop's): it waits for a pod to become ready,
from another thread, and ``close`` releases every waiter. Timeouts here only keep a
broken queue from hanging the run; nothing asserts how long anything took."""

from __future__ import annotations

import threading

from kubesched.framework.events import WILDCARD_EVENT
from kubesched.framework.status import Code

from ..helpers import make_pod
from .test_scheduling_queue import fail, queue

WAIT = 10.0  # seconds: generous, to avoid a hang, never a measurement


def _pop_in_thread(q):
    got: list = []
    started = threading.Event()

    def run():
        started.set()
        got.append(q.pop(block=True, timeout=WAIT))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(WAIT)
    return thread, got


def test_a_blocked_pop_returns_the_pod_another_thread_adds():
    q = queue()
    thread, got = _pop_in_thread(q)
    q.add(make_pod("p"))
    thread.join(WAIT)
    assert not thread.is_alive() and got[0].pod.name == "p"


def test_a_blocked_pop_takes_a_pod_an_event_moves_to_backoff():
    q = queue()
    q.add(make_pod("p"))
    fail(q, "p")  # unschedulable, waiting for an event
    thread, got = _pop_in_thread(q)
    q.move_all_to_active_or_backoff(WILDCARD_EVENT)  # to backoffQ: Pop may take it from there
    thread.join(WAIT)
    assert not thread.is_alive() and got[0].pod.name == "p"


def test_a_pod_backing_off_after_an_error_does_not_wake_a_blocked_pop():
    q = queue()
    q.add(make_pod("p"))
    fail(q, "p", plugins=(), code=Code.ERROR)
    assert q.pop(block=True, timeout=0.05) is None  # only the backoff flush releases it


def test_close_releases_a_blocked_pop_with_nothing():
    q = queue()
    thread, got = _pop_in_thread(q)
    q.close()
    thread.join(WAIT)
    assert not thread.is_alive() and got == [None]


def test_a_pop_without_blocking_answers_at_once_when_nothing_is_ready():
    q = queue()
    assert q.pop() is None
