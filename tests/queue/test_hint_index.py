"""Cluster events look only at the waiting pods they may wake: pods are filed under the
plugins that rejected them, and an event reaches the pods of the plugins that registered
it (and pods without a rejecting plugin). Which pods move is unchanged."""

from __future__ import annotations

import random

from kubesched.framework.events import NODE_ADD, WILDCARD_EVENT, ActionType, ClusterEvent, EventResource
from kubesched.queue.hints import SKIP
from kubesched.queue.scheduling_queue import UNSCHEDULABLE

from ..helpers import make_pod
from .test_scheduling_queue import fail, queue

POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
NODE_TAINT = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)


def _looked_at(q, event) -> list[str]:
    seen: list[str] = []

    def pre_check(pod) -> bool:
        seen.append(pod.name)
        return False  # look, but move nothing

    q.move_all_to_active_or_backoff(event, pre_check=pre_check)
    return seen


def test_an_event_looks_only_at_pods_whose_rejectors_registered_it():
    q = queue(hints=[(NODE_ADD, "NodeAffinity", None), (POD_DELETE, "NodePorts", None)])
    for i in range(6):
        q.add(make_pod(f"p{i}"))
    for i in range(6):
        fail(q, f"p{i}", plugins=("NodeAffinity",) if i < 2 else ("NodePorts",))
    assert _looked_at(q, NODE_ADD) == ["p0", "p1"]
    assert _looked_at(q, POD_DELETE) == ["p2", "p3", "p4", "p5"]
    assert _looked_at(q, NODE_TAINT) == []


def test_gated_pods_are_not_looked_at_by_node_events():
    q = queue(hints=[(NODE_ADD, "NodeAffinity", None)])
    for i in range(50):
        q.add(make_pod(f"g{i}", gates=["example.com/gate"]))
    q.add(make_pod("p"))
    fail(q, "p", plugins=("NodeAffinity",))
    assert _looked_at(q, NODE_ADD) == ["p"]
    assert q.counts()["gated"] == 50


def test_pods_without_a_rejecting_plugin_and_wildcard_events_reach_every_pod():
    q = queue(hints=[(NODE_ADD, "NodeAffinity", None)])
    for name in ("a", "b"):
        q.add(make_pod(name))
    fail(q, "a", plugins=("NodeAffinity",))
    fail(q, "b", plugins=("Other",))
    assert _looked_at(q, WILDCARD_EVENT) == ["a", "b"]


def test_the_index_moves_exactly_the_pods_a_full_pass_would():
    plugins = ("A", "B", "C", "D")
    events = [NODE_ADD, NODE_TAINT, POD_DELETE, ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL),
              ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)]
    rng = random.Random(7)
    for _ in range(30):
        registrations = [(rng.choice(events), rng.choice(plugins), None) for _ in range(rng.randint(0, 5))]
        q = queue(hints=registrations)
        count = rng.randint(1, 12)
        for i in range(count):
            q.add(make_pod(f"p{i}"))
        for i in range(count):
            fail(q, f"p{i}", plugins=tuple(rng.sample(plugins, rng.randint(0, 2))))
        event = rng.choice(events)
        waiting = q.pending_pods()[UNSCHEDULABLE]
        expected = sorted(i.pod.name for i in waiting if q._hints.strategy(i, event, None, None) != SKIP)
        q.move_all_to_active_or_backoff(event)
        left = {i.pod.name for i in q.pending_pods()[UNSCHEDULABLE]}
        assert sorted(i.pod.name for i in waiting if i.pod.name not in left) == expected
