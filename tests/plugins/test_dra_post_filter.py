"""DynamicResources' PostFilter as upstream v1.36's: the write is made before it returns and its
answer is the status; which unavailable claim it frees is random in run, the pod's order in
simulate."""

from __future__ import annotations

import random
from typing import Any

from kubesched.framework import Code, CycleState
from kubesched.objects.pod import parse_pod
from kubesched.plugins.dynamicresources.post_filter import DEALLOCATED, STILL_NOT_SCHEDULABLE

from .dra_helpers import claim, gpu_class, gpu_slice, node, pod, simulate, stored_claim

ON_N1 = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}


def allocated(name: str, device: str = "gpu-0", reserved_for: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """A claim allocated on n1 earlier (its pod gone, or still there when ``reserved_for``)."""
    doc = claim(name)
    doc["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": device}]}, "nodeSelector": ON_N1}}
    if reserved_for:
        doc["status"]["reservedFor"] = reserved_for
    return doc


class Refusing:
    """A cluster client whose API server refuses the write."""

    def __init__(self, message: str) -> None:
        self.message = message

    def deallocate_resource_claim(self, raw: Any) -> None:
        raise RuntimeError(self.message)

    def delete_resource_claim(self, raw: Any) -> None:
        raise RuntimeError(self.message)


class Recording:
    """A cluster client that records which claim it was asked to deallocate."""

    def __init__(self) -> None:
        self.deallocated: list[str] = []

    def deallocate_resource_claim(self, raw: Any) -> None:
        self.deallocated.append(raw["metadata"]["name"])


def post_filter_on_n2(sim: Any, claims: dict[str, str]) -> Any:
    """PreFilter and Filter of a pod with ``claims`` on n2 (its allocated claims are on n1), then PostFilter."""
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    snapshot = sim.scheduler.cache.snapshot()
    p = parse_pod(pod("p", claims=claims))
    state = CycleState()
    plugin.pre_filter(state, p, snapshot)
    assert plugin.filter(state, p, snapshot.get("n2")) is not None
    return plugin.post_filter(state, p, None)[1]


def cluster(*claims: dict[str, Any]) -> Any:
    return simulate(node("n1"), node("n2"), gpu_slice("n1", 2), gpu_class(), *claims)


def test_an_unavailable_claim_nobody_uses_is_deallocated_before_post_filter_returns() -> None:
    sim = cluster(allocated("c"))
    status = post_filter_on_n2(sim, {"gpu": "c"})
    assert (status.code, status.message) == (Code.UNSCHEDULABLE, DEALLOCATED)
    assert "allocation" not in stored_claim(sim, "c")["status"]


def test_a_refused_deallocation_is_an_error_carrying_the_api_servers_message() -> None:
    sim = cluster(allocated("c"))
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"].core()
    plugin._writer, plugin._writer_checked = Refusing("the object has been modified"), True
    status = post_filter_on_n2(sim, {"gpu": "c"})
    assert (status.code, status.message) == (Code.ERROR, "the object has been modified")


def test_a_claim_reserved_for_another_pod_is_left_alone() -> None:
    sim = cluster(allocated("c", reserved_for=[{"resource": "pods", "name": "other", "uid": "uid-other"}]))
    status = post_filter_on_n2(sim, {"gpu": "c"})
    assert (status.code, status.message) == (Code.UNSCHEDULABLE, STILL_NOT_SCHEDULABLE)
    assert stored_claim(sim, "c")["status"]["allocation"] is not None


def test_simulate_deallocates_the_first_unavailable_claim_in_the_pods_order() -> None:
    sim = cluster(allocated("a", "gpu-0"), allocated("b", "gpu-1"))
    post_filter_on_n2(sim, {"second": "b", "first": "a"})
    assert "allocation" not in stored_claim(sim, "b")["status"]
    assert stored_claim(sim, "a")["status"]["allocation"] is not None


def test_run_picks_the_claim_to_deallocate_at_random() -> None:
    picked = set()
    for seed in range(20):
        sim = cluster(allocated("a", "gpu-0"), allocated("b", "gpu-1"))
        plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"].core()
        client = Recording()
        plugin._writer, plugin._writer_checked = client, True
        plugin._choices, plugin._choices_checked = random.Random(seed), True  # run's client's random_choices()
        assert post_filter_on_n2(sim, {"first": "a", "second": "b"}).message == DEALLOCATED
        assert len(client.deallocated) == 1
        picked.update(client.deallocated)
    assert picked == {"a", "b"}
