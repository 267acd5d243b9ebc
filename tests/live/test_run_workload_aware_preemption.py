"""`kubesched run` with WorkloadAwarePreemption against an API server that serves
scheduling.k8s.io/v1alpha2: a high-priority gang that fits nowhere evicts only the
lower-priority pods it needs gone, through the API (upstream's "Preempted by podgroup" events),
and is bound whole once they are; a victim gang whose disruption mode is PodGroup goes whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesched.framework.config import parse_config
from kubesched.framework.features import Features
from kubesched.plugins.registry import in_tree_registry
from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, events, node, node_of, pod, wait_until
from tests.live.test_run_pod_groups import group_condition

GATES = {"GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True}


def start(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> Kubesched:
    registry = in_tree_registry(Features.from_gates(GATES))
    config = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                          registry)
    config.leader_election.leader_elect = False
    sched = Kubesched(server, kubeconfig, config=config, registry=registry).start()
    started.append(sched)
    return sched


def pod_group(name: str, min_count: int, priority: int, mode: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}, "priority": priority}
    if mode is not None:
        spec["disruptionMode"] = mode
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def bound(name: str, cpu: str, priority: int, group: str | None = None) -> dict[str, Any]:
    raw = pod(name, cpu=cpu, priority=priority, node_name="n1")
    raw["status"] = {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}
    if group is not None:
        raw["spec"]["schedulingGroup"] = {"podGroupName": group}
    return raw


def member(name: str, group: str, cpu: str, priority: int) -> dict[str, Any]:
    raw = pod(name, cpu=cpu, priority=priority)
    raw["spec"]["schedulingGroup"] = {"podGroupName": group}
    return raw


def gone(server: APIServer, *names: str) -> list[str]:
    return [n for n in names if server.get("Pod", "default", n) is None]


def test_a_gang_evicts_only_what_it_needs_and_is_bound_whole(server: APIServer, kubeconfig: Path,
                                                             started: list[Kubesched]) -> None:
    server.create(node("n1", cpu="4"))
    lows = [f"low-{i}" for i in range(4)]
    for name in lows:
        server.create(bound(name, "1", 0))
    server.create(pod_group("train", 2, 100))
    sched = start(server, kubeconfig, started)
    for i in range(2):
        server.create(member(f"train-{i}", "train", "1", 100))
    wait_until(lambda: all(node_of(server, f"train-{i}") == "n1" for i in range(2)), timeout=30, what="the gang bound")
    assert len(gone(server, *lows)) == 2  # two of the four make the room the gang needs
    group = server.get("PodGroup", "default", "train") or {}
    uid = group["metadata"]["uid"]
    preempted = sorted(e["regarding"]["name"] for e in events(server) if e.get("reason") == "Preempted")
    assert preempted == sorted(gone(server, *lows))
    assert {e["note"] for e in events(server) if e.get("reason") == "Preempted"} == {
        f"Preempted by podgroup {uid} on node cluster"}
    wait_until(lambda: (group_condition(server, "train") or {}).get("status") == "True", what="the group scheduled")
    assert_invariants(server, sched)


def test_a_victim_gang_in_pod_group_disruption_mode_goes_whole(server: APIServer, kubeconfig: Path,
                                                               started: list[Kubesched]) -> None:
    server.create(node("n1", cpu="4"))
    server.create(pod_group("batch", 4, 0, mode="PodGroup"))
    batch = [f"batch-{i}" for i in range(4)]
    for name in batch:
        server.create(bound(name, "1", 0, group="batch"))
    server.create(pod_group("train", 1, 100))
    sched = start(server, kubeconfig, started)
    server.create(member("train-0", "train", "1", 100))
    wait_until(lambda: node_of(server, "train-0") == "n1", timeout=30, what="the preemptor bound")
    assert gone(server, *batch) == batch
    assert_invariants(server, sched)
