"""What `kubesched run` writes about the pods it schedules, as upstream writes it: one
attempt and one event for a pod that fits nowhere, upstream's binding-failure message,
the condition's observedGeneration, and the event's reference to the pod's version."""

from __future__ import annotations

import time
from pathlib import Path

from kubesched.cluster.kube.driver import LiveOptions
from kubesched.scheduler.attempt import Attempt
from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, events, node, node_of, pod, scheduled_condition, wait_until

BINDING = "/api/v1/namespaces/default/pods/p/binding"


def _start(server: APIServer, kubeconfig: Path, started: list[Kubesched], attempts: list[str] | None = None) -> Kubesched:
    def seen(attempt: Attempt) -> None:
        if attempts is not None:
            attempts.append(attempt.pod.name)

    sched = Kubesched(server, kubeconfig, options=LiveOptions(binding_workers=4, on_attempt=seen)).start()
    started.append(sched)
    return sched


def _events(server: APIServer, pod_name: str, reason: str) -> list[dict]:
    return [e for e in events(server) if (e.get("regarding") or {}).get("name") == pod_name
            and e.get("reason") == reason]


def test_a_pod_that_fits_nowhere_is_attempted_once_and_reported_once(server: APIServer, kubeconfig: Path,
                                                                     started: list[Kubesched]) -> None:
    server.create(node("small", cpu="1"))
    for i in range(3):
        server.create(pod(f"big-{i}", cpu="2"))
    attempts: list[str] = []
    sched = _start(server, kubeconfig, started, attempts)
    wait_until(lambda: all(scheduled_condition(server, f"big-{i}") for i in range(3)), what="three conditions")
    wait_until(lambda: all(_events(server, f"big-{i}", "FailedScheduling") for i in range(3)), what="three events")
    time.sleep(0.5)  # room for the second attempt our own status patch used to cause
    assert sorted(attempts) == ["big-0", "big-1", "big-2"]
    for i in range(3):
        (event,) = _events(server, f"big-{i}", "FailedScheduling")
        assert "series" not in event
    assert_invariants(server, sched)


def test_a_pod_scheduled_condition_observes_the_pods_generation(server: APIServer, kubeconfig: Path,
                                                                started: list[Kubesched]) -> None:
    server.create(node("small", cpu="1"))
    server.create(pod("big", cpu="2"))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: scheduled_condition(server, "big"), what="the PodScheduled condition")
    cond = scheduled_condition(server, "big")
    assert cond is not None and cond["observedGeneration"] == server.get("Pod", "default", "big")["metadata"]["generation"]
    assert_invariants(server, sched)


def test_an_event_refers_to_the_pod_at_the_version_the_scheduler_saw(server: APIServer, kubeconfig: Path,
                                                                     started: list[Kubesched]) -> None:
    server.create(node("n1"))
    created = server.create(pod("p"))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: _events(server, "p", "Scheduled"), what="the Scheduled event")
    (event,) = _events(server, "p", "Scheduled")
    assert event["regarding"] == {"kind": "Pod", "namespace": "default", "name": "p", "apiVersion": "v1",
                                  "uid": created["metadata"]["uid"],
                                  "resourceVersion": created["metadata"]["resourceVersion"]}
    assert_invariants(server, sched)


def test_a_refused_binding_reads_as_upstreams_bind_plugin_error(server: APIServer, kubeconfig: Path,
                                                                started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.faults.add(method="POST", path=BINDING, status=409, times=1)
    sched = _start(server, kubeconfig, started)
    server.create(pod("p"))
    wait_until(lambda: node_of(server, "p") == "n1", what="the pod bound on the next attempt")
    wait_until(lambda: _events(server, "p", "FailedScheduling"), what="the FailedScheduling event")
    (event,) = _events(server, "p", "FailedScheduling")
    assert event["note"].startswith('running Bind plugin "DefaultBinder": ')
    assert "409" not in event["note"] and "Conflict:" not in event["note"]
    assert_invariants(server, sched)


def test_every_bound_pod_gets_its_scheduled_event(server: APIServer, kubeconfig: Path,
                                                  started: list[Kubesched]) -> None:
    for i in range(10):
        server.create(node(f"n{i}", cpu="64", memory="256Gi", pods=110))
    names = [f"p{i}" for i in range(400)]
    for name in names:
        server.create(pod(name, cpu="10m", memory="10Mi"))
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: all(node_of(server, n) for n in names), timeout=60, what="every pod bound")
    wait_until(lambda: len([e for e in events(server) if e.get("reason") == "Scheduled"]) >= len(names), timeout=60,
               what="a Scheduled event per pod")
    scheduled = [e for e in events(server) if e.get("reason") == "Scheduled"]
    assert sorted(e["regarding"]["name"] for e in scheduled) == sorted(names)
    assert_invariants(server, sched)


def test_pending_pods_are_kept_without_their_managed_fields(server: APIServer, kubeconfig: Path,
                                                             started: list[Kubesched]) -> None:
    server.create(node("small", cpu="1"))
    created = server.create(pod("big", cpu="2"))
    assert created["metadata"]["managedFields"]  # the server writes them, as a real one does
    sched = _start(server, kubeconfig, started)
    wait_until(lambda: scheduled_condition(server, "big"), what="the pod reported")
    uid = created["metadata"]["uid"]
    kept = sched.call(lambda live: live.scheduler.pods[uid].raw)
    assert kept is not None and "managedFields" not in kept["metadata"]
    assert_invariants(server, sched)
