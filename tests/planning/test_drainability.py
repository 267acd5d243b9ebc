"""cluster-autoscaler's drainability rules, one pod at a time (its ``drainability/rules/*``
table tests, carried over), and its utilisation."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.pod import parse_pod
from kubesched.objects.resources import Resource
from kubesched.planning.drainability import (
    BLOCKED,
    DAEMONSET,
    MOVE,
    SKIP,
    WAIT,
    BudgetTracker,
    DrainOptions,
    local_volumes,
    pod_drainability,
)
from kubesched.planning.utilization import node_utilization
from tests.planning.scale_down_clusters import annotated, daemonset_pod, mirror_pod, pdb, pod

CA = "cluster-autoscaler.kubernetes.io/"


def owned_by(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "x/v1", "kind": kind, "name": "c", "uid": "u",
                                           "controller": True}]
    return obj


def with_volumes(obj: dict[str, Any], *volumes: dict[str, Any]) -> dict[str, Any]:
    obj["spec"]["volumes"] = list(volumes)
    return obj


CASES = [
    ("replicaset pod", pod("p", owner="rs"), [], MOVE, ""),
    ("mirror pod", mirror_pod("m", "n1"), [], SKIP, ""),
    ("daemonset pod", daemonset_pod("d", "n1"), [], DAEMONSET, ""),
    ("daemonset pod by annotation", annotated(pod("d"), **{CA + "daemonset-pod": "true"}), [], DAEMONSET, ""),
    ("no controller", pod("p"), [], BLOCKED, "NotReplicated"),
    ("no controller, safe to evict", annotated(pod("p"), **{CA + "safe-to-evict": "true"}), [], MOVE, ""),
    ("job pod", owned_by("Job", pod("p")), [], MOVE, ""),
    ("statefulset pod", owned_by("StatefulSet", pod("p")), [], MOVE, ""),
    ("replicationcontroller pod", owned_by("ReplicationController", pod("p")), [], MOVE, ""),
    ("custom controller", owned_by("Widget", pod("p")), [], BLOCKED, "NotReplicated"),
    ("kube-system without pdb", pod("p", namespace="kube-system", owner="rs"), [], BLOCKED, "UnmovableKubeSystemPod"),
    ("kube-system with pdb", pod("p", namespace="kube-system", owner="rs", labels={"app": "x"}),
     [pdb("x", "x", namespace="kube-system", maxUnavailable=1)], MOVE, ""),
    ("kube-system, safe to evict", annotated(pod("p", namespace="kube-system", owner="rs"), **{CA + "safe-to-evict": "true"}),
     [], MOVE, ""),
    ("not safe to evict", annotated(pod("p", owner="rs"), **{CA + "safe-to-evict": "false"}), [], BLOCKED,
     "NotSafeToEvictAnnotation"),
    ("on completion", annotated(pod("p", owner="rs"), **{CA + "safe-to-evict": "on-completion"}), [], WAIT,
     "OnCompletion"),
    ("emptyDir on disk", with_volumes(pod("p", owner="rs"), {"name": "v", "emptyDir": {}}), [], BLOCKED,
     "LocalStorageRequested"),
    ("emptyDir in memory", with_volumes(pod("p", owner="rs"), {"name": "v", "emptyDir": {"medium": "Memory"}}), [], MOVE,
     ""),
    ("hostPath", with_volumes(pod("p", owner="rs"), {"name": "v", "hostPath": {"path": "/"}}), [], BLOCKED,
     "LocalStorageRequested"),
    ("local volumes listed safe", annotated(with_volumes(pod("p", owner="rs"), {"name": "v", "emptyDir": {}},
                                                         {"name": "w", "hostPath": {"path": "/"}}),
                                            **{CA + "safe-to-evict-local-volumes": "v,w"}), [], MOVE, ""),
    ("one local volume not listed", annotated(with_volumes(pod("p", owner="rs"), {"name": "v", "emptyDir": {}},
                                                           {"name": "w", "hostPath": {"path": "/"}}),
                                              **{CA + "safe-to-evict-local-volumes": "v"}), [], BLOCKED,
     "LocalStorageRequested"),
    ("local storage, safe to evict", annotated(with_volumes(pod("p", owner="rs"), {"name": "v", "emptyDir": {}}),
                                               **{CA + "safe-to-evict": "true"}), [], MOVE, ""),
    ("pdb allowing one", pod("p", owner="rs", labels={"app": "x"}), [pdb("x", "x", maxUnavailable=1)], MOVE, ""),
    ("pdb allowing none", pod("p", owner="rs", labels={"app": "x"}), [pdb("x", "x", maxUnavailable=0)], BLOCKED,
     "NotEnoughPdb"),
    ("pdb of another namespace", pod("p", owner="rs", labels={"app": "x"}),
     [pdb("x", "x", namespace="other", maxUnavailable=0)], MOVE, ""),
]


@pytest.mark.parametrize("name, raw, budgets, outcome, reason", CASES, ids=[c[0] for c in CASES])
def test_drainable(name: str, raw: dict[str, Any], budgets: list[dict[str, Any]], outcome: str, reason: str) -> None:
    info = parse_pod(raw)
    tracker = BudgetTracker.from_objects(budgets, [info])
    verdict = pod_drainability(info, local_volumes(raw), tracker, DrainOptions())
    assert (verdict.outcome, verdict.reason) == (outcome, reason)


@pytest.mark.parametrize("options, outcome", [
    (DrainOptions(skip_nodes_with_local_storage=False), MOVE),
    (DrainOptions(), BLOCKED),
])
def test_skip_nodes_with_local_storage_off_lets_local_storage_move(options: DrainOptions, outcome: str) -> None:
    raw = with_volumes(pod("p", owner="rs"), {"name": "v", "emptyDir": {}})
    assert pod_drainability(parse_pod(raw), local_volumes(raw), BudgetTracker(), options).outcome == outcome


def test_a_status_written_by_the_disruption_controller_is_believed() -> None:
    budget = pdb("x", "x", minAvailable=5)
    budget["status"] = {"disruptionsAllowed": 2}
    info = parse_pod(pod("p", owner="rs", labels={"app": "x"}))
    tracker = BudgetTracker.from_objects([budget], [info])
    assert [b.remaining for b in tracker.budgets] == [2]
    assert tracker.can_remove_together([info, info]) and not tracker.can_remove_together([info] * 3)


UTILIZATION = [
    ("cpu decides", [("1", "1Gi")], (0.25, 0.125)),
    ("memory decides", [("1", "6Gi")], (0.25, 0.75)),
    ("pods add up", [("1", "1Gi"), ("1", "1Gi")], (0.5, 0.25)),
    ("no pods", [], (0.0, 0.0)),
]


@pytest.mark.parametrize("name, pods, want", UTILIZATION, ids=[u[0] for u in UTILIZATION])
def test_utilization(name: str, pods: list[tuple[str, str]], want: tuple[float, float]) -> None:
    allocatable = Resource(milli_cpu=4000, memory=8 * 2**30)
    infos = [parse_pod(pod(f"p{i}", cpu=cpu, memory=memory, node_name="n1")) for i, (cpu, memory) in enumerate(pods)]
    found = node_utilization(allocatable, infos)
    assert (found.cpu, found.memory) == want
    assert found.value == max(want)


def test_a_node_with_gpus_is_measured_on_gpus_alone() -> None:
    allocatable = Resource(milli_cpu=4000, memory=8 * 2**30, scalar={"nvidia.com/gpu": 4})
    trainer = pod("t", cpu="4", memory="8Gi", node_name="n1")
    trainer["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    found = node_utilization(allocatable, [parse_pod(trainer)])
    assert (found.resource, found.value) == ("nvidia.com/gpu", 0.25)


def test_ignored_daemonset_pods_come_off_the_allocatable_too() -> None:
    allocatable = Resource(milli_cpu=4000, memory=8 * 2**30)
    pods = [parse_pod(daemonset_pod("d", "n1", cpu="2")), parse_pod(pod("p", cpu="1", memory="0", node_name="n1"))]
    assert node_utilization(allocatable, pods).cpu == 0.75
    assert node_utilization(allocatable, pods, ignore_daemonsets=True).cpu == 0.5
