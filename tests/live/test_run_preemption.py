"""`kubesched run` preempts: a high-priority pod evicts a lower-priority one through the API
(DisruptionTarget condition, then a delete with the victim's UID), is nominated, and is
bound once the victim is gone; a PodDisruptionBudget with no disruption left steers
the choice of victim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, events, node, node_of, pod, wait_until


def _start(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> Kubesched:
    sched = Kubesched(server, kubeconfig).start()
    started.append(sched)
    return sched


def _bound(name: str, node_name: str, cpu: str, priority: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    raw = pod(name, cpu=cpu, priority=priority, node_name=node_name, labels=labels)
    raw["status"] = {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}
    return raw


def test_a_high_priority_pod_evicts_a_lower_priority_one_and_is_bound_in_its_place(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1", cpu="2"))
    server.create(_bound("low", "n1", "2", 0))
    sched = _start(server, kubeconfig, started)
    server.create(pod("high", cpu="2", priority=1000))
    wait_until(lambda: server.get("Pod", "default", "low") is None, what="the victim deleted")
    wait_until(lambda: node_of(server, "high") == "n1", what="the preemptor bound in its place")
    preempted = [e for e in events(server) if e.get("reason") == "Preempted"]
    assert preempted and preempted[0]["regarding"]["name"] == "low"
    assert_invariants(server, sched)


def test_a_budget_with_no_disruption_left_protects_its_pod(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1", cpu="2"))
    server.create(_bound("guarded", "n1", "1", 0, {"app": "db"}))
    server.create(_bound("free", "n1", "1", 10, {"app": "web"}))
    server.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": "db", "namespace": "default"},
                   "spec": {"selector": {"matchLabels": {"app": "db"}}},
                   "status": {"disruptionsAllowed": 0}})  # as the disruption controller would set it
    sched = _start(server, kubeconfig, started)
    server.create(pod("high", cpu="1", priority=1000))
    wait_until(lambda: node_of(server, "high") == "n1", what="the preemptor bound")
    assert server.get("Pod", "default", "free") is None
    assert server.get("Pod", "default", "guarded") is not None
    assert_invariants(server, sched)
