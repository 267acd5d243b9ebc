"""Scale-down never removes a node whose pods cannot all move: for random small clusters, the
cluster as the plan leaves it (the chosen nodes gone, every moved pod where the plan put it)
is checked again with fresh simulations, each moved pod taken off and scheduled anew among
all the others: every one is placed. And no pod is lost or lands on a removed node."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.cluster.simulated import Simulation
from kubesched.framework.config import default_config
from kubesched.planning.drainability import MIRROR_ANNOTATION
from kubesched.planning.scale_down import ScaleDownOptions
from tests.planning.scale_down_clusters import REGISTRY, daemonset_pod, node, plan, pod, snapshot

CPU_CHOICES = ["100m", "500m", "1", "1500m", "2"]


def _millis(cpu: str) -> int:
    return int(cpu[:-1]) if cpu.endswith("m") else int(cpu) * 1000


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    """2-6 nodes in two pools (one node maybe tainted), each with a few pods that fit it:
    ReplicaSet pods, some with a nodeSelector on their pool or a catch-all toleration,
    DaemonSet pods and pods without a controller."""
    items: list[dict[str, Any]] = []
    for i in range(draw(st.integers(2, 6))):
        name, cpu = f"n{i}", draw(st.sampled_from([2, 4, 8]))
        pool = draw(st.sampled_from(["a", "b"]))
        n = node(name, cpu=str(cpu), labels={"pool": pool})
        if draw(st.integers(0, 4)) == 0:
            n["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        items.append(n)
        free = cpu * 1000
        for j in range(draw(st.integers(0, 5))):
            request = draw(st.sampled_from(CPU_CHOICES))
            if _millis(request) > free:
                continue
            free -= _millis(request)
            kind = draw(st.sampled_from(["rs"] * 6 + ["selector", "selector", "tolerant", "daemonset", "bare"]))
            pod_name = f"p-{name}-{j}"
            if kind == "daemonset":
                items.append(daemonset_pod(pod_name, name, cpu=request))
                continue
            owner = None if kind == "bare" else f"rs-{pod_name}"
            extra: dict[str, Any] = {}
            if kind == "selector":
                extra["nodeSelector"] = {"pool": pool}
            if kind == "tolerant":
                extra["tolerations"] = [{"operator": "Exists"}]
            items.append(pod(pod_name, cpu=request, memory="64Mi", node_name=name, owner=owner, **extra))
    return items


def _is_daemon_or_mirror(obj: dict[str, Any]) -> bool:
    owners = obj["metadata"].get("ownerReferences") or []
    return any(o.get("kind") == "DaemonSet" for o in owners) or MIRROR_ANNOTATION in (obj["metadata"].get("annotations") or {})


def _placed_alone_among_the_rest(items: list[dict[str, Any]], key: str) -> bool:
    """A fresh simulation of ``items`` with the pod ``key`` pending: is it placed?"""
    edited = []
    for obj in items:
        if obj["kind"] == "Pod" and f"default/{obj['metadata']['name']}" == key:
            obj = copy.deepcopy(obj)
            del obj["spec"]["nodeName"]
            obj["status"] = {"phase": "Pending"}
        edited.append(obj)
    sim = Simulation(snapshot(*edited), default_config(REGISTRY), REGISTRY, tie_break="name")
    return bool(sim.run().outcomes[key].node)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.sampled_from([0.5, 0.7, 0.9]))
def test_scale_down_never_removes_a_node_whose_pods_cannot_all_move(items: list[dict[str, Any]], threshold: float) -> None:
    result = plan(*items, options=ScaleDownOptions(utilization_threshold=threshold))
    removed = {r.node for r in result.removable}
    destinations = result.destinations
    assert not removed & set(destinations.values())  # nothing lands on a node that goes
    after: list[dict[str, Any]] = []
    for obj in items:
        if obj["kind"] == "Node":
            if obj["metadata"]["name"] not in removed:
                after.append(obj)
            continue
        key = f"default/{obj['metadata']['name']}"
        if key in destinations:
            after.append({**obj, "spec": {**obj["spec"], "nodeName": destinations[key]}})
        elif obj["spec"]["nodeName"] in removed:
            assert _is_daemon_or_mirror(obj), f"{key} was on removed {obj['spec']['nodeName']} and did not move"
        else:
            after.append(obj)
    for key in destinations:
        assert _placed_alone_among_the_rest(after, key), f"{key} cannot be placed once {sorted(removed)} are gone"
