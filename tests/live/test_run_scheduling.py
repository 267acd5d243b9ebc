"""`kubesched run` end to end against the test API server: what it schedules and how it reports."""

from __future__ import annotations

from pathlib import Path

from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, events, node, node_of, pod, scheduled_condition, scheduler_config, wait_until


def _start(server: APIServer, kubeconfig: Path, started: list[Kubesched], **kwargs: object) -> Kubesched:
    sched = Kubesched(server, kubeconfig, **kwargs).start()  # type: ignore[arg-type]
    started.append(sched)
    return sched


def _events(server: APIServer, pod_name: str, reason: str) -> list[dict]:
    return [e for e in events(server) if (e.get("regarding") or {}).get("name") == pod_name
            and e.get("reason") == reason]


def test_pods_created_before_start_are_bound(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.create(node("n2"))
    for i in range(20):
        server.create(pod(f"p{i}"))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: all(node_of(server, f"p{i}") for i in range(20)), what="all pods bound")
    assert_invariants(server, sched)


def test_pods_created_after_start_are_bound(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    sched = _start(server, kubeconfig, started)
    for i in range(10):
        server.create(pod(f"late{i}"))
    wait_until(lambda: all(node_of(server, f"late{i}") == "n1" for i in range(10)), what="late pods bound")
    assert_invariants(server, sched)


def test_a_bound_pod_gets_a_scheduled_event(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.create(pod("web"))
    _start(server, kubeconfig, started)
    wait_until(lambda: _events(server, "web", "Scheduled"), what="the Scheduled event")
    event = _events(server, "web", "Scheduled")[0]
    assert event["note"] == "Successfully assigned default/web to n1"
    assert event["type"] == "Normal"
    assert event["action"] == "Binding"
    assert event["reportingController"] == "default-scheduler"


def test_pods_of_another_scheduler_are_left_alone(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.create(pod("theirs", scheduler="other-scheduler"))
    server.create(pod("ours"))
    _start(server, kubeconfig, started)
    wait_until(lambda: node_of(server, "ours"), what="our pod bound")
    assert node_of(server, "theirs") is None
    assert scheduled_condition(server, "theirs") is None


def test_a_second_scheduler_serves_only_its_own_profile(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.create(pod("for-kubesched", scheduler="kubesched"))
    server.create(pod("for-default"))
    config = scheduler_config({"profiles": [{"schedulerName": "kubesched"}]})
    _start(server, kubeconfig, started, config=config)
    wait_until(lambda: node_of(server, "for-kubesched"), what="the kubesched pod bound")
    assert node_of(server, "for-default") is None


def test_an_unschedulable_pod_gets_its_condition_and_event(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("small", cpu="1"))
    server.create(pod("big", cpu="2"))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: scheduled_condition(server, "big"), what="the PodScheduled condition")
    cond = scheduled_condition(server, "big")
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    wait_until(lambda: _events(server, "big", "FailedScheduling"), what="the FailedScheduling event")
    event = _events(server, "big", "FailedScheduling")[0]
    assert event["type"] == "Warning"
    assert event["note"] == cond["message"]
    assert_invariants(server, sched)


def test_an_unschedulable_pod_is_scheduled_when_a_node_appears(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("small", cpu="1"))
    server.create(pod("big", cpu="2"))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: scheduled_condition(server, "big"), what="the pod reported unschedulable")
    server.create(node("large", cpu="8"))
    wait_until(lambda: node_of(server, "big") == "large", what="the pod bound to the new node")
    assert_invariants(server, sched)


def test_a_pod_deleted_while_queued_leaves_the_queue(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("small", cpu="1"))
    server.create(pod("big", cpu="2"))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: scheduled_condition(server, "big"), what="the pod reported unschedulable")
    uid = server.get("Pod", "default", "big")["metadata"]["uid"]
    server.delete("Pod", "default", "big")
    wait_until(lambda: sched.call(lambda live: live.scheduler.queue.where(uid)) == "", what="the pod out of the queue")
    server.create(node("large", cpu="8"))
    assert_invariants(server, sched)


def test_a_pod_bound_by_someone_else_leaves_the_queue(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("small", cpu="1"))
    server.create(pod("big", cpu="2"))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: scheduled_condition(server, "big"), what="the pod reported unschedulable")
    uid = server.get("Pod", "default", "big")["metadata"]["uid"]
    obj = server.get("Pod", "default", "big")
    obj["spec"]["nodeName"] = "small"
    server.update(obj)
    wait_until(lambda: sched.call(lambda live: live.scheduler.queue.where(uid)) == "", what="the pod out of the queue")
    assert sched.call(lambda live: live.scheduler.cache.get_pod(uid) is not None)


def test_a_cordoned_node_gets_no_new_pods(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("a"))
    server.create(node("b"))
    sched = _start(server, kubeconfig, started)
    cordoned = server.get("Node", None, "a")
    cordoned["spec"]["unschedulable"] = True
    server.update(cordoned)
    wait_until(lambda: sched.call(lambda live: live.scheduler.cache.snapshot().get("a").node.unschedulable),
               what="the cordon seen")
    for i in range(6):
        server.create(pod(f"p{i}"))
    wait_until(lambda: all(node_of(server, f"p{i}") for i in range(6)), what="pods bound")
    assert {node_of(server, f"p{i}") for i in range(6)} == {"b"}


def test_a_deleted_node_leaves_the_cache(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("a"))
    server.create(node("b"))
    sched = _start(server, kubeconfig, started)
    server.delete("Node", None, "a")
    wait_until(lambda: sched.call(lambda live: live.scheduler.cache.snapshot().get("a")) is None, what="node a gone")
    for i in range(4):
        server.create(pod(f"p{i}"))
    wait_until(lambda: all(node_of(server, f"p{i}") for i in range(4)), what="pods bound")
    assert {node_of(server, f"p{i}") for i in range(4)} == {"b"}


def test_higher_priority_pods_are_scheduled_first(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("one-slot", cpu="1"))
    server.create(pod("low", cpu="800m", priority=10))
    server.create(pod("high", cpu="800m", priority=1000))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: node_of(server, "high") == "one-slot", what="the high-priority pod bound")
    wait_until(lambda: scheduled_condition(server, "low"), what="the low-priority pod reported")
    assert node_of(server, "low") is None
    assert_invariants(server, sched)
