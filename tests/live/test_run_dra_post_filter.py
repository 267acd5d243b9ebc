"""DynamicResources' PostFilter in ``kubesched run``: the deallocation is written before
PostFilter returns, and the API server's answer is what the pod's condition reports, as
upstream's (a refusal is PostFilter's error, and DefaultPreemption does not run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.apiserver import APIServer
from tests.live.dra_actors import device_class, node_slice, resource_claim, with_claim
from tests.live.harness import Kubesched, node, node_of, pod, scheduled_condition, wait_until

FAILED = "deallocation failed: the store is read-only"


def _timed_out_claim() -> dict[str, Any]:
    """A claim allocated long ago on n1's device with binding conditions the driver never met:
    unavailable everywhere (its binding timed out), reserved for nobody."""
    claim = resource_claim("stale")
    claim["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
                                 "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
        "allocationTimestamp": "2026-01-01T00:00:00Z"}}
    return claim


def _message(server: APIServer) -> str:
    return str((scheduled_condition(server, "blocked") or {}).get("message", ""))


def _refused_once(server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    """A pod whose claim is unavailable everywhere; the API server refuses PostFilter's first write."""
    server.create(node("n1"))
    server.create(device_class())
    server.create(node_slice("n1", 1, binding_conditions=True))
    server.create(_timed_out_claim())
    server.faults.add(method="PUT", path=r"/resourceclaims/stale/status$", status=500, times=1, message=FAILED)
    started.append(Kubesched(server, kubeconfig).start())
    server.create(with_claim(pod("blocked"), "gpu", claim="stale"))
    wait_until(lambda: FAILED in _message(server), timeout=30, what="PostFilter's refused write reported")


def test_a_refused_deallocation_is_postfilters_error_in_the_pods_condition(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    _refused_once(server, kubeconfig, started)
    # PostFilter's error ends the PostFilter plugins: no preemption clause.
    assert _message(server) == f"0/1 nodes are available: 1 resourceclaim not available on the node. {FAILED}"
    claim = server.get("ResourceClaim", "default", "stale")
    assert claim is not None and claim["status"].get("allocation")  # nothing written


def test_after_a_refused_deallocation_the_next_attempt_deallocates(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    _refused_once(server, kubeconfig, started)
    claim = server.get("ResourceClaim", "default", "stale")
    assert claim is not None
    claim["status"]["devices"] = [{"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0", "conditions": [
        {"type": "attached", "status": "False", "reason": "Waiting", "message": "",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    server.update(claim)  # the driver reports on the device: its claim's status changed, the pod is retried
    wait_until(lambda: "deallocation of ResourceClaim completed" in _message(server), timeout=30,
               what="the retry's PostFilter deallocating the claim")
    assert node_of(server, "blocked") is None
