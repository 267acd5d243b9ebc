"""`kubesched run` with workload-aware scheduling (GenericWorkload, GangScheduling,
TopologyAwareWorkloadScheduling) against an API server that serves scheduling.k8s.io/v1alpha2:
a gang binds whole or not at all, its PodGroupScheduled condition is patched through the
API, members short of ``minCount`` (or of their PodGroup) wait gated without an attempt, a
topology-constrained gang lands in one rack, and the pod-group metrics are on /metrics."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kubesched.cluster.kube.driver import LiveScheduler
from kubesched.framework.config import parse_config
from kubesched.framework.features import Features
from kubesched.plugins.registry import in_tree_registry
from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import (
    Kubesched,
    events,
    node,
    node_of,
    pod,
    scheduled_condition,
    wait_until,
    write_kubeconfig,
)
from tests.live.test_run_process import ROOT, _error_line, _free_port, _get, _spawn

GATES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
GATES_FLAG = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
RACK = "topology.example.com/rack"
WAITING = "waiting for minCount pods from a gang to be scheduled"
STATUS_PATH = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups/{}/status"


def start(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> Kubesched:
    """kubesched with the workload gates on, its default profile built with them (GangScheduling,
    TopologyPlacementGenerator and PodGroupPodsCount in it, as upstream's)."""
    registry = in_tree_registry(Features.from_gates(GATES))
    config = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                          registry)
    config.leader_election.leader_elect = False
    sched = Kubesched(server, kubeconfig, config=config, registry=registry).start()
    started.append(sched)
    return sched


def pod_group(name: str, min_count: int | None, topology_key: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology_key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def member(name: str, group: str, cpu: str = "1") -> dict[str, Any]:
    body = pod(name, cpu=cpu)
    body["spec"]["schedulingGroup"] = {"podGroupName": group}
    return body


def group_condition(server: APIServer, name: str) -> dict[str, Any] | None:
    obj = server.get("PodGroup", "default", name) or {}
    found = [c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == "PodGroupScheduled"]
    return found[0] if found else None


def status_patches(server: APIServer, group: str) -> int:
    return sum(1 for m, p in server.requests if m == "PATCH" and p == STATUS_PATH.format(group))


def bindings(server: APIServer) -> int:
    return sum(1 for m, p in server.requests if m == "POST" and p.endswith("/binding"))


def gated(sched: Kubesched, server: APIServer, *names: str) -> bool:
    uids = [(server.get("Pod", "default", n) or {}).get("metadata", {}).get("uid") for n in names]

    def check(live: LiveScheduler) -> bool:
        assert live.scheduler is not None
        return all(uid is not None and live.scheduler.queue.is_gated(uid) for uid in uids)
    return sched.call(check)


# -- (a) a gang that fits -----------------------------------------------------------------------
def test_a_gang_that_fits_is_bound_whole_and_its_pod_group_marked_scheduled(server: APIServer, kubeconfig: Path,
                                                                              started: list[Kubesched]) -> None:
    for n in ("n1", "n2", "n3"):
        server.create(node(n, cpu="4"))
    server.create(pod_group("train", 3))
    sched = start(server, kubeconfig, started)
    for i in range(3):
        server.create(member(f"train-{i}", "train"))
    wait_until(lambda: all(node_of(server, f"train-{i}") for i in range(3)), what="the gang bound")
    wait_until(lambda: group_condition(server, "train"), what="the PodGroupScheduled condition")
    cond = group_condition(server, "train")
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "Scheduled", "")
    assert cond["lastTransitionTime"].endswith("Z") and "observedGeneration" not in cond  # the group has no generation
    assert status_patches(server, "train") == 1
    assert not [p for _, p in server.requests if "workloads" in p]  # the scheduler reads no Workload
    assert_invariants(server, sched)


# -- (b) a gang that does not fit ------------------------------------------------------------------
def test_a_gang_that_does_not_fit_binds_nothing(server: APIServer, kubeconfig: Path,
                                                started: list[Kubesched]) -> None:
    for n in ("n1", "n2"):
        server.create(node(n, cpu="4"))  # room for two of the three 3-CPU members
    server.create(pod_group("train", 3))
    for i in range(3):
        server.create(member(f"train-{i}", "train", cpu="3"))
    sched = start(server, kubeconfig, started)
    wait_until(lambda: all(scheduled_condition(server, f"train-{i}") for i in range(3)), what="every member reported")
    wait_until(lambda: group_condition(server, "train"), what="the PodGroupScheduled condition")
    time.sleep(0.5)  # a half-gang would have been bound by now
    assert bindings(server) == 0 and not any(node_of(server, f"train-{i}") for i in range(3))
    messages = sorted(str((scheduled_condition(server, f"train-{i}") or {}).get("message")) for i in range(3))
    assert [WAITING in m for m in messages].count(True) == 2  # the two that fit wait for the third
    assert [m.startswith("0/2 nodes are available: 2 Insufficient cpu.") for m in messages].count(True) == 1
    cond = group_condition(server, "train")
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == "0/1 placements are available, first placement status: pod group is unschedulable"
    assert_invariants(server, sched)


def test_a_gang_that_did_not_fit_is_bound_whole_once_a_node_makes_room(server: APIServer, kubeconfig: Path,
                                                                       started: list[Kubesched]) -> None:
    for n in ("n1", "n2"):
        server.create(node(n, cpu="4"))
    server.create(pod_group("train", 3))
    for i in range(3):
        server.create(member(f"train-{i}", "train", cpu="3"))
    sched = start(server, kubeconfig, started)
    wait_until(lambda: (group_condition(server, "train") or {}).get("status") == "False", what="the group refused")
    refused = group_condition(server, "train")
    assert refused is not None
    time.sleep(1.1)  # the next transition lands in a later second
    server.create(node("n3", cpu="4"))
    wait_until(lambda: all(node_of(server, f"train-{i}") for i in range(3)), timeout=30, what="the gang bound")
    wait_until(lambda: (group_condition(server, "train") or {}).get("status") == "True", what="the group scheduled")
    scheduled = group_condition(server, "train")
    assert scheduled is not None and scheduled["reason"] == "Scheduled"
    assert scheduled["lastTransitionTime"] > refused["lastTransitionTime"]
    assert_invariants(server, sched)


# -- (c) members that wait at PreEnqueue -----------------------------------------------------------
def test_members_short_of_min_count_wait_gated_until_the_last_one_arrives(server: APIServer, kubeconfig: Path,
                                                                         started: list[Kubesched]) -> None:
    for n in ("n1", "n2", "n3"):
        server.create(node(n, cpu="4"))
    server.create(pod_group("train", 3))
    sched = start(server, kubeconfig, started)
    server.create(member("train-0", "train"))
    server.create(member("train-1", "train"))
    wait_until(lambda: gated(sched, server, "train-0", "train-1"), what="both members gated")
    time.sleep(0.5)
    # No attempt: no condition, no event, no binding, nothing written on the group.
    assert scheduled_condition(server, "train-0") is None and scheduled_condition(server, "train-1") is None
    assert not [e for e in events(server) if e["regarding"]["name"].startswith("train-")]
    assert bindings(server) == 0 and group_condition(server, "train") is None
    assert_invariants(server, sched, expect_condition=False)
    server.create(member("train-2", "train"))
    wait_until(lambda: all(node_of(server, f"train-{i}") for i in range(3)), what="the gang bound")
    wait_until(lambda: (group_condition(server, "train") or {}).get("status") == "True", what="the group scheduled")
    assert_invariants(server, sched)


def test_members_created_before_their_pod_group_wait_for_it(server: APIServer, kubeconfig: Path,
                                                            started: list[Kubesched]) -> None:
    for n in ("n1", "n2"):
        server.create(node(n, cpu="4"))
    for i in range(2):
        server.create(member(f"train-{i}", "train"))
    sched = start(server, kubeconfig, started)
    wait_until(lambda: gated(sched, server, "train-0", "train-1"), what="the members gated")
    assert bindings(server) == 0 and scheduled_condition(server, "train-0") is None
    server.create(pod_group("train", 2))
    wait_until(lambda: all(node_of(server, f"train-{i}") for i in range(2)), what="the gang bound")
    assert_invariants(server, sched)


# -- (d) a topology-constrained gang ---------------------------------------------------------------
@pytest.mark.parametrize("constrained", [True, False])
def test_a_rack_constrained_gang_lands_in_one_rack(server: APIServer, kubeconfig: Path, started: list[Kubesched],
                                                   constrained: bool) -> None:
    """Four 2-CPU members on four 4-CPU nodes in two racks: the constraint keeps them in one
    rack (two per node); without it the default scores spread them over all four nodes."""
    racks = {"a1": "rack-a", "a2": "rack-a", "b1": "rack-b", "b2": "rack-b"}
    for name, rack in racks.items():
        server.create(node(name, cpu="4", labels={RACK: rack}))
    server.create(pod_group("train", 4, RACK if constrained else None))
    sched = start(server, kubeconfig, started)
    for i in range(4):
        server.create(member(f"train-{i}", "train", cpu="2"))
    wait_until(lambda: all(node_of(server, f"train-{i}") for i in range(4)), what="the gang bound")
    used = {racks[str(node_of(server, f"train-{i}"))] for i in range(4)}
    assert len(used) == (1 if constrained else 2)
    assert_invariants(server, sched)


# -- the process: gates on the command line, /metrics, a server without the alpha API ------------------
def _sample(body: str, line_start: str) -> float | None:
    for line in body.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_the_process_exports_upstreams_pod_group_metrics(server: APIServer, kubeconfig: Path) -> None:
    for n in ("n1", "n2"):
        server.create(node(n, cpu="4"))
    server.create(pod_group("train", 2))
    for i in range(2):
        server.create(member(f"train-{i}", "train"))
    port = _free_port()
    proc = _spawn(kubeconfig, port, "--feature-gates", GATES_FLAG)
    try:
        wait_until(lambda: (group_condition(server, "train") or {}).get("status") == "True", timeout=30,
                   what="the group scheduled")
        wait_until(lambda: (_sample(_get(port, "/metrics")[1], "kubesched_pod_group_status_patches_total"
                                    '{result="sent"}') or 0) == 1, what="the condition write counted")
        _, body = _get(port, "/metrics")
        assert _sample(body, 'scheduler_podgroup_schedule_attempts_total{profile="default-scheduler",'
                             'result="scheduled"}') == 1.0
        assert _sample(body, 'scheduler_podgroup_scheduling_attempt_duration_seconds_count{profile='
                             '"default-scheduler",result="scheduled"}') == 1.0
        assert _sample(body, "scheduler_podgroup_scheduling_algorithm_duration_seconds_count") == 1.0
        assert _sample(body, 'scheduler_event_handling_duration_seconds_count{event="PodGroupAdd"}') == 1.0
        assert _sample(body, "kubesched_pod_group_status_patches_pending") == 0.0
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_without_the_gates_no_pod_group_is_watched_nor_metric_exported(server: APIServer, kubeconfig: Path) -> None:
    server.create(node("n1"))
    port = _free_port()
    proc = _spawn(kubeconfig, port)
    try:
        wait_until(lambda: _get(port, "/readyz")[0] == 200, timeout=30, what="/readyz ok")
        _, body = _get(port, "/metrics")
        assert "scheduler_podgroup_" not in body and "kubesched_pod_group_" not in body
        assert not [p for _, p in server.requests if "podgroups" in p]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_with_the_gates_on_a_server_without_the_alpha_api_refuses_to_start(tmp_path: Path) -> None:
    """Upstream's informer would never sync (the scheduler would sit unready): one line instead."""
    with APIServer(feature_gates=frozenset()) as bare:
        config = write_kubeconfig(tmp_path / "bare", bare.url)
        done = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig", str(config),
                               "--leader-elect=false", "--port", "0", "--feature-gates", GATES_FLAG],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    line = _error_line(done.stderr)
    assert line.startswith(f"error: GenericWorkload is on but the API server at {bare.url} does not serve "
                           "scheduling.k8s.io/v1alpha2 podgroups (404)")
