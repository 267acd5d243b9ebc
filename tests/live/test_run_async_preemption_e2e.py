"""`kubesched run` passes upstream's e2e test "validates various priority Pods preempt
expectedly with the async preemption" (test/e2e/scheduling/preemption.go), against the test
API server: 4 nodes with 10 of ``scheduling.k8s.io/foo``, 40 low-priority pods filling
them, 40 medium-priority pods that preempt them all, 20 high-priority pods nominated in
turn; then the low-priority pods go, and every high-priority pod and exactly 20
medium-priority ones are bound within seconds (the e2e test allows 5 minutes, which is
the unschedulable pods' flush: kubesched used to reach it).

The e2e test's victims keep terminating (a preStop hook and an 80 s grace period) until
the test deletes them with a grace period of 0; here a finalizer holds them the same way
(deleted, they keep running with a ``deletionTimestamp``), and removing it is the test's
deletion.

The race that left pods waiting (a pod's preemption finding no victim while its
nomination stayed, and no wake-up when a nomination was given up) depends on where the
watch's events fall between cycles; the test server's fast watch seldom loses it, so the
ordered reproduction is tests/scheduler/test_async_preemption_e2e.py. This is the e2e test
itself, end to end, which must pass every time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, node, node_of, pod, wait_until

FOO = "scheduling.k8s.io/foo"
FINALIZER = "example.com/test-finalizer"
NODES = 4


def _node(name: str) -> dict[str, Any]:
    raw = node(name)
    for key in ("capacity", "allocatable"):
        raw["status"][key][FOO] = "10"
    return raw


def _pod(name: str, priority: int, node_name: str | None = None) -> dict[str, Any]:
    raw = pod(name, priority=priority, node_name=node_name)
    container = raw["spec"]["containers"][0]
    container["resources"] = {"requests": {FOO: "1"}, "limits": {FOO: "1"}}
    if node_name:
        raw["metadata"]["finalizers"] = [FINALIZER]
        raw["status"] = {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}
    return raw


def _get(server: APIServer, name: str) -> dict[str, Any] | None:
    return server.get("Pod", "default", name)


def _remove(server: APIServer, name: str) -> None:
    """The e2e test's deletion with a grace period of 0: the finalizer goes, then the pod."""
    current = _get(server, name)
    if current is None:
        return
    current["metadata"]["finalizers"] = []
    server.update(current)
    if _get(server, name) is not None:
        server.delete("Pod", "default", name)


def test_every_high_and_exactly_twenty_medium_priority_pods_are_bound_within_seconds(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    for i in range(NODES):
        server.create(_node(f"node-{i}"))
    lows = [f"pod{i}-{j}-low" for i in range(NODES) for j in range(10)]
    for name in lows:
        server.create(_pod(name, 1, node_name=f"node-{name[3]}"))
    sched = Kubesched(server, kubeconfig).start()
    started.append(sched)

    mediums = [f"pod{i}-{j}-medium" for i in range(NODES) for j in range(10)]
    for name in mediums:
        server.create(_pod(name, 100))
    wait_until(lambda: all((_get(server, n) or {}).get("metadata", {}).get("deletionTimestamp") for n in lows),
               timeout=90, what="every low-priority pod being preempted")

    highs = [f"pod{i}-{j}-high" for i in range(NODES) for j in range(5)]
    for name in highs:
        server.create(_pod(name, 1000))
    wait_until(lambda: all((_get(server, n) or {}).get("status", {}).get("nominatedNodeName") for n in highs),
               timeout=90, what="every high-priority pod nominated")

    for name in lows:
        _remove(server, name)
    wait_until(lambda: all(node_of(server, n) for n in highs), timeout=60, what="the high-priority pods bound")
    # Seconds when the machine is quiet; the bound is loose for a loaded one, and far below
    # the 300 s after which the unschedulable pods' flush would have retried them anyway.
    wait_until(lambda: sum(1 for n in mediums if node_of(server, n)) >= 5 * NODES, timeout=60,
               what=f"{5 * NODES} medium-priority pods bound")
    assert sum(1 for n in mediums if node_of(server, n)) == 5 * NODES
    assert_invariants(server, sched)
