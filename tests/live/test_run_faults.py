"""`kubesched run` under faults: whatever the API server does, no pod is lost, bound twice, or
placed on a full node. Faults come from the test server's hooks, never from production code."""

from __future__ import annotations

import time
from pathlib import Path

from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, node, node_of, pod, scheduled_condition, wait_until

BINDING = r"/pods/[^/]+/binding"


def _start(server: APIServer, kubeconfig: Path, started: list[Kubesched], **kwargs: object) -> Kubesched:
    sched = Kubesched(server, kubeconfig, **kwargs).start()  # type: ignore[arg-type]
    started.append(sched)
    return sched


def _all_bound(server: APIServer, names: list[str]) -> bool:
    return all(node_of(server, n) for n in names)


def test_a_bind_answered_500_with_retry_after_is_retried_by_the_client(server: APIServer, kubeconfig: Path,
                                                                      started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.faults.add(method="POST", path=BINDING, status=500, retry_after=1, times=1)
    sched = _start(server, kubeconfig, started)
    server.create(pod("p"))
    wait_until(lambda: node_of(server, "p") == "n1", what="the pod bound after the retry")
    assert_invariants(server, sched)


def test_a_failed_bind_sends_the_pod_back_to_the_queue_and_it_is_bound_later(server: APIServer, kubeconfig: Path,
                                                                            started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.faults.add(method="POST", path=BINDING, status=500, times=1)
    sched = _start(server, kubeconfig, started)
    server.create(pod("p"))
    wait_until(lambda: node_of(server, "p") == "n1", what="the pod bound on a later attempt")
    uid = server.get("Pod", "default", "p")["metadata"]["uid"]
    assert sched.call(lambda live: live.scheduler.cache.get_pod(uid).node_name) == "n1"
    assert_invariants(server, sched)


def test_a_bind_conflict_forgets_the_assumed_pod(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1", cpu="1"))
    server.faults.add(method="POST", path=BINDING, status=409, times=2)
    sched = _start(server, kubeconfig, started)
    server.create(pod("p", cpu="600m"))
    wait_until(lambda: node_of(server, "p") == "n1", what="the pod bound after the conflicts")
    # Forgotten twice, bound once: the node holds exactly this pod's request.
    requested = sched.call(lambda live: live.scheduler.cache.snapshot().get("n1").requested.milli_cpu)
    assert requested == 600
    assert_invariants(server, sched)


def test_status_patches_answered_429_are_retried(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("small", cpu="1"))
    server.faults.add(method="PATCH", path=r"/pods/big/status", status=429, retry_after=1, times=2)
    sched = _start(server, kubeconfig, started)
    server.create(pod("big", cpu="2"))
    wait_until(lambda: scheduled_condition(server, "big"), what="the condition despite the 429s")
    assert_invariants(server, sched)


def test_slow_binds_do_not_hold_up_other_pods(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.faults.add(method="POST", path=r"/pods/slow/binding", status=None, delay=2.0, times=1)
    sched = _start(server, kubeconfig, started)
    server.create(pod("slow"))
    time.sleep(0.2)
    names = [f"quick{i}" for i in range(5)]
    for name in names:
        server.create(pod(name))
    wait_until(lambda: _all_bound(server, names), timeout=1.8, what="quick pods bound while the slow bind waits")
    assert node_of(server, "slow") is None
    wait_until(lambda: node_of(server, "slow"), what="the slow pod bound in the end")
    assert_invariants(server, sched)


def test_dropped_watches_are_resumed(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    sched = _start(server, kubeconfig, started)
    for round_ in range(3):
        server.drop_watches()
        names = [f"r{round_}-{i}" for i in range(3)]
        for name in names:
            server.create(pod(name))
        wait_until(lambda: _all_bound(server, names), what=f"pods of round {round_} bound")
    assert_invariants(server, sched)


def test_a_watch_resumed_at_a_compacted_version_relists_and_reconciles(server: APIServer, kubeconfig: Path,
                                                                      started: list[Kubesched]) -> None:
    server.create(node("a"))
    server.create(node("b"))
    server.create(pod("bound-elsewhere", node_name="b"))
    sched = _start(server, kubeconfig, started)
    gone_uid = server.get("Pod", "default", "bound-elsewhere")["metadata"]["uid"]
    # Hold every re-watch back while the cluster changes and the history is compacted.
    server.faults.add(method="GET", path=r"watch=", status=503, retry_after=None, times=None)
    server.drop_watches()
    wait_until(lambda: server.watch_count == 0, what="every watch closed")  # else a closing one still sees the changes
    server.delete("Pod", "default", "bound-elsewhere")
    server.delete("Node", None, "a")
    server.create(node("c"))
    # Only node c (added during the gap) may take it: the pods informer may relist before the
    # nodes informer, and with node a still cached the pod could be bound there, which a real
    # API server accepts too (it does not check that the node exists).
    gap_pod = pod("new")
    gap_pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "c"}
    server.create(gap_pod)
    server.compact()
    server.faults.clear()
    # The informers come back after client-go's backoff (0.8 s doubling, jittered up to twice):
    # a few failed re-watches and the relist can take several seconds.
    wait_until(lambda: node_of(server, "new") == "c", timeout=60, what="the pod created during the gap bound")
    wait_until(lambda: sched.call(lambda live: live.scheduler.cache.get_pod(gone_uid)) is None, timeout=60,
               what="the pod deleted during the gap out of the cache")
    wait_until(lambda: sched.call(lambda live: live.scheduler.cache.snapshot().get("a")) is None, timeout=60,
               what="the node deleted during the gap out of the cache")
    assert_invariants(server, sched)


def test_an_api_server_restart_keeps_scheduling(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    sched = _start(server, kubeconfig, started)
    server.create(pod("before"))
    wait_until(lambda: node_of(server, "before"), what="the first pod bound")
    server.restart()
    server.create(pod("after"))
    wait_until(lambda: node_of(server, "after"), timeout=20, what="a pod bound after the restart")
    assert_invariants(server, sched)


def test_many_pods_with_random_bind_failures_end_bound_once_within_capacity(server: APIServer, kubeconfig: Path,
                                                                           started: list[Kubesched]) -> None:
    for i in range(4):
        server.create(node(f"n{i}", cpu="2"))  # room for 4 x 4 = 16 pods of 500m
    server.faults.add(method="POST", path=BINDING, status=500, times=6)
    server.faults.add(method="POST", path=BINDING, status=409, times=3)
    sched = _start(server, kubeconfig, started)
    names = [f"p{i}" for i in range(24)]
    for name in names:
        server.create(pod(name, cpu="500m"))
    wait_until(lambda: sum(1 for n in names if node_of(server, n)) == 16, timeout=30, what="16 pods bound")
    wait_until(lambda: all(node_of(server, n) or (scheduled_condition(server, n) or {}).get("reason") == "Unschedulable"
                           for n in names), timeout=30, what="every other pod reported unschedulable")
    assert_invariants(server, sched)
