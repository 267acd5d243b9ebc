"""The scheduler's event handlers: which cluster changes wake a pod, given which plugin rejected it."""

from __future__ import annotations

import pytest

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.queue.scheduling_queue import UNSCHEDULABLE
from kubesched.scheduler.factory import new_scheduler

from ..helpers import node, parse, config, pod, taint


def scheduler(*nodes, bound=()):
    clock = VirtualClock()
    client = SimulatedCluster(clock)
    sched = new_scheduler(parse(config()), client, clock, tie_break="name")
    for n in nodes:
        sched.on_node_add(parse_node(n))
    for b in bound:
        sched.on_pod_add(parse_pod(b))
    return sched


def rejected(sched, raw):
    p = parse_pod(raw)
    sched.on_pod_add(p)
    sched.schedule_one()
    assert sched.queue.where(p.uid) == UNSCHEDULABLE
    return p


def woken(sched, p):
    return sched.queue.where(p.uid) not in (UNSCHEDULABLE, "")


def test_a_new_node_wakes_a_pod_no_node_could_hold():
    sched = scheduler(node("small", cpu="1"))
    p = rejected(sched, pod("p", cpu="2"))
    sched.on_node_add(parse_node(node("big", cpu="4")))
    assert woken(sched, p)


def test_a_label_change_wakes_a_pod_waiting_for_that_label():
    sched = scheduler(node("n", labels={"zone": "a"}))
    p = rejected(sched, pod("p", node_selector={"zone": "b"}))
    sched.on_node_update(parse_node(node("n", labels={"zone": "a"})), parse_node(node("n", labels={"zone": "a", "x": "y"})))
    assert not woken(sched, p)
    sched.on_node_update(parse_node(node("n", labels={"zone": "a"})), parse_node(node("n", labels={"zone": "b"})))
    assert woken(sched, p)


def test_a_label_change_does_not_wake_a_pod_that_lacked_resources():
    sched = scheduler(node("n", cpu="1"))
    p = rejected(sched, pod("p", cpu="2"))
    sched.on_node_update(parse_node(node("n", cpu="1")), parse_node(node("n", cpu="1", labels={"x": "y"})))
    assert not woken(sched, p)


def test_more_allocatable_wakes_a_pod_that_lacked_resources():
    sched = scheduler(node("n", cpu="1"))
    p = rejected(sched, pod("p", cpu="2"))
    sched.on_node_update(parse_node(node("n", cpu="1")), parse_node(node("n", cpu="4")))
    assert woken(sched, p)


def test_deleting_a_bound_pod_wakes_a_pod_that_lacked_resources():
    big = pod("big", cpu="2", node_name="n")
    sched = scheduler(node("n", cpu="2"), bound=[big])
    p = rejected(sched, pod("p", cpu="1"))
    sched.on_pod_delete(parse_pod(big))
    assert woken(sched, p)


def test_removing_a_taint_wakes_a_pod_that_did_not_tolerate_it():
    tainted = node("n", taints=[taint("dedicated", "infra")])
    sched = scheduler(tainted)
    p = rejected(sched, pod("p"))
    sched.on_node_update(parse_node(tainted), parse_node(node("n")))
    assert woken(sched, p)


def test_uncordoning_wakes_a_pod_rejected_by_a_cordoned_node():
    cordoned = node("n", unschedulable=True)
    sched = scheduler(cordoned)
    p = rejected(sched, pod("p"))
    sched.on_node_update(parse_node(cordoned), parse_node(node("n")))
    assert woken(sched, p)


def test_a_bound_pod_added_to_the_cache_takes_room_from_the_next_pods():
    sched = scheduler(node("n", cpu="2"))
    sched.on_pod_add(parse_pod(pod("x", cpu="2", node_name="n")))
    rejected(sched, pod("p", cpu="1"))


def test_a_pending_pod_bound_by_someone_else_leaves_the_queue():
    sched = scheduler(node("n", cpu="1"))
    p = rejected(sched, pod("p", cpu="2"))
    bound = parse_pod(pod("p", cpu="2", node_name="n", uid=p.uid))
    sched.on_pod_update(p, bound)
    assert sched.queue.where(p.uid) == ""
    assert sched.cache.get_pod(p.uid) is not None


@pytest.mark.parametrize("scheduler_name, queued", [("default-scheduler", True), ("other", False)])
def test_only_pods_of_a_known_profile_are_queued(scheduler_name, queued):
    sched = scheduler(node("n"))
    p = parse_pod(pod("p", scheduler_name=scheduler_name))
    sched.on_pod_add(p)
    assert (sched.queue.where(p.uid) != "") is queued
