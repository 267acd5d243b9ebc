"""`kubesched run` with dynamic resource allocation, end to end against the test API server.

The test plays the cluster's other actors (tests/live/dra_actors.py): the resourceclaim
controller (claims from templates) and a DRA driver (ResourceSlices, binding conditions).
kubesched's DynamicResources allocates in its cycle and writes what upstream's PreBind
writes: the finalizer, ``status.allocation`` and ``status.reservedFor`` through
``resourceclaims/status``, the claim of DRA-backed extended resources, then binds.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.dra_actors import (
    CLASS,
    ClaimController,
    Driver,
    claim_of,
    claim_template,
    device_class,
    node_slice,
    resource_claim,
    with_claim,
)
from tests.live.harness import Kubesched, events, node, node_of, pod, scheduled_condition, scheduler_config, wait_until

FINALIZER = "resource.kubernetes.io/delete-protection"
EXTENDED = "resource.kubernetes.io/extended-resource-claim"


def _consumer(server: APIServer, name: str) -> dict[str, str]:
    obj = server.get("Pod", "default", name)
    assert obj is not None
    return {"resource": "pods", "name": name, "uid": obj["metadata"]["uid"]}


def _devices(claim: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(pool, device) of each allocated device."""
    assert claim is not None
    results = ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or ()
    return [(r["pool"], r["device"]) for r in results]


def _metrics(sched: Kubesched) -> str:
    """What /metrics serves (the scheduler's registry, with run's own families)."""
    return sched.call(lambda live: live.metrics.exposition().decode() if live.metrics is not None else "")


@pytest.fixture
def controller(server: APIServer) -> Iterator[ClaimController]:
    running = ClaimController(server)
    running.start()
    yield running
    running.stop()
    assert not running.errors, running.errors


@pytest.fixture
def gpus(server: APIServer) -> None:
    """Three nodes; the driver publishes one GPU on n1 and one on n2, none on n3."""
    for name in ("n1", "n2", "n3"):
        server.create(node(name))
    server.create(device_class())
    server.create(node_slice("n1", 1))
    server.create(node_slice("n2", 1))


def _start(server: APIServer, kubeconfig: Path, started: list[Kubesched], raw: dict[str, Any] | None = None) -> Kubesched:
    sched = Kubesched(server, kubeconfig, scheduler_config(raw) if raw is not None else None).start()
    started.append(sched)
    return sched


def test_a_claim_from_a_template_is_allocated_reserved_and_its_pod_bound_where_the_device_is(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController,
        gpus: None) -> None:
    sched = _start(server, kubeconfig, started)
    server.create(claim_template("one-gpu"))
    server.create(with_claim(pod("trainer"), "gpu", template="one-gpu"))
    wait_until(lambda: node_of(server, "trainer") is not None, what="the pod bound")
    claim = claim_of(server, "trainer", "gpu")
    assert claim is not None and claim["metadata"]["name"].startswith("trainer-gpu-")
    assert _devices(claim) == [(node_of(server, "trainer"), "gpu-0")]  # each pool is its node
    assert claim["status"]["reservedFor"] == [_consumer(server, "trainer")]
    assert claim["metadata"]["finalizers"] == [FINALIZER]
    terms = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                       "values": [node_of(server, "trainer")]}]}]
    assert_invariants(server, sched)


def test_a_shared_claim_is_allocated_once_and_reserved_for_every_pod_using_it(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], gpus: None) -> None:
    sched = _start(server, kubeconfig, started)
    server.create(resource_claim("shared"))
    server.create(with_claim(pod("first"), "gpu", claim="shared"))
    wait_until(lambda: node_of(server, "first") is not None, what="the first pod bound")
    server.create(with_claim(pod("second"), "gpu", claim="shared"))
    wait_until(lambda: node_of(server, "second") is not None, what="the second pod bound")
    assert node_of(server, "second") == node_of(server, "first")  # where the shared device is
    claim = server.get("ResourceClaim", "default", "shared")
    assert claim is not None and len(_devices(claim)) == 1
    assert claim["status"]["reservedFor"] == [_consumer(server, "first"), _consumer(server, "second")]
    assert_invariants(server, sched)


def test_a_pod_waits_for_a_device_and_is_placed_when_the_driver_publishes_one(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController,
        gpus: None) -> None:
    sched = _start(server, kubeconfig, started)
    server.create(claim_template("one-gpu"))
    for name in ("a", "b", "c"):
        server.create(with_claim(pod(name), "gpu", template="one-gpu"))
    wait_until(lambda: sum(node_of(server, n) is not None for n in "abc") == 2, what="two pods bound")
    waiting = next(n for n in "abc" if node_of(server, n) is None)
    wait_until(lambda: (scheduled_condition(server, waiting) or {}).get("reason") == "Unschedulable",
               what="the third pod reported unschedulable")
    assert "cannot allocate all claims" in scheduled_condition(server, waiting)["message"]  # type: ignore[index]
    server.create(node_slice("n3", 1))  # the driver comes up on n3
    wait_until(lambda: node_of(server, waiting) == "n3", what="the pod placed on the new device")
    pools = sorted(_devices(claim_of(server, n, "gpu"))[0][0] for n in "abc")
    assert pools == ["n1", "n2", "n3"]  # no device handed out twice
    assert_invariants(server, sched)


def test_a_dra_backed_extended_resource_gets_a_claim_created_by_kubesched(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], gpus: None) -> None:
    server.create(device_class("gpu-extended", extended_resource_name="example.com/gpu"))
    sched = _start(server, kubeconfig, started)
    requester = pod("legacy")
    for kind in ("requests", "limits"):
        requester["spec"]["containers"][0]["resources"].setdefault(kind, {})["example.com/gpu"] = "1"
    server.create(requester)
    wait_until(lambda: node_of(server, "legacy") is not None, what="the pod bound")
    obj = server.get("Pod", "default", "legacy")
    assert obj is not None
    status = obj["status"]["extendedResourceClaimStatus"]
    claim = server.get("ResourceClaim", "default", status["resourceClaimName"])
    assert claim is not None and claim["metadata"]["name"].startswith("legacy-extended-resources-")
    assert claim["metadata"]["annotations"][EXTENDED] == "true"
    owner = claim["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("Pod", "legacy",
                                                                                obj["metadata"]["uid"], True)
    assert claim["status"]["reservedFor"] == [_consumer(server, "legacy")]
    assert _devices(claim) == [(node_of(server, "legacy"), "gpu-0")]
    assert [m["resourceName"] for m in status["requestMappings"]] == ["example.com/gpu"]
    assert 'scheduler_resourceclaim_creates_total{status="success"} 1.0' in _metrics(sched)
    assert_invariants(server, sched)


def test_a_pod_whose_class_does_not_exist_stays_pending_with_upstreams_reason(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], gpus: None) -> None:
    sched = _start(server, kubeconfig, started)
    missing = resource_claim("no-class")
    missing["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "missing.example.com"
    server.create(missing)
    server.create(with_claim(pod("lost-class"), "gpu", claim="no-class"))
    wait_until(lambda: scheduled_condition(server, "lost-class") is not None, what="the pod reported")
    condition = scheduled_condition(server, "lost-class")
    assert condition is not None and condition["status"] == "False"
    assert "request gpu: device class missing.example.com does not exist" in condition["message"]
    claim = server.get("ResourceClaim", "default", "no-class")
    assert claim is not None and "status" not in claim  # nothing written
    assert_invariants(server, sched)


def test_the_class_the_pod_needs_arriving_later_makes_it_schedulable(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.create(node_slice("n1", 1))
    sched = _start(server, kubeconfig, started)
    server.create(resource_claim("late-class"))
    server.create(with_claim(pod("patient"), "gpu", claim="late-class"))
    wait_until(lambda: scheduled_condition(server, "patient") is not None, what="the pod reported")
    assert node_of(server, "patient") is None
    server.create(device_class(CLASS))
    wait_until(lambda: node_of(server, "patient") == "n1", what="the pod bound once its class exists")
    assert_invariants(server, sched)


def test_a_conflicting_claim_write_is_read_again_and_retried(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController,
        gpus: None) -> None:
    server.faults.add(method="PUT", path=r"/resourceclaims/[^/]+/status$", status=409, times=1, reason="Conflict")
    sched = _start(server, kubeconfig, started)
    server.create(claim_template("one-gpu"))
    server.create(with_claim(pod("retried"), "gpu", template="one-gpu"))
    wait_until(lambda: node_of(server, "retried") is not None, what="the pod bound")
    claim = claim_of(server, "retried", "gpu")
    assert claim is not None and claim["status"]["reservedFor"] == [_consumer(server, "retried")]
    status_puts = [p for m, p in server.requests if m == "PUT" and p.endswith("/status")]
    name = claim["metadata"]["name"]
    assert ("GET", f"/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/{name}") in server.requests
    assert len(status_puts) == 2  # the refused one, then the one after reading the claim again
    assert_invariants(server, sched)


def test_a_failed_binding_unreserves_the_claim_and_the_retry_reserves_it_once(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController,
        gpus: None) -> None:
    server.faults.add(method="POST", path=r"/pods/unlucky/binding$", status=500, times=1)
    sched = _start(server, kubeconfig, started)
    server.create(claim_template("one-gpu"))
    server.create(with_claim(pod("unlucky"), "gpu", template="one-gpu"))
    wait_until(lambda: node_of(server, "unlucky") is not None, timeout=30, what="the pod bound on its retry")
    claim = claim_of(server, "unlucky", "gpu")
    assert claim is not None and claim["status"]["reservedFor"] == [_consumer(server, "unlucky")]
    patches = [p for m, p in server.requests if m == "PATCH" and p.endswith(f"{claim['metadata']['name']}/status")]
    assert patches, "Unreserve removes the pod from reservedFor"
    assert _devices(claim) == [(node_of(server, "unlucky"), "gpu-0")]
    assert_invariants(server, sched)


def test_a_failed_binding_deletes_the_extended_resources_claim_it_created(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], gpus: None) -> None:
    server.create(device_class("gpu-extended", extended_resource_name="example.com/gpu"))
    server.faults.add(method="POST", path=r"/pods/legacy/binding$", status=500, times=1)
    sched = _start(server, kubeconfig, started)
    requester = pod("legacy")
    for kind in ("requests", "limits"):
        requester["spec"]["containers"][0]["resources"].setdefault(kind, {})["example.com/gpu"] = "1"
    server.create(requester)
    wait_until(lambda: node_of(server, "legacy") is not None, timeout=30, what="the pod bound on its retry")
    created = [p for m, p in server.requests if m == "POST" and p.endswith("/resourceclaims")]
    deleted = [p for m, p in server.requests if m == "DELETE" and "/resourceclaims/" in p]
    assert len(created) == 2 and len(deleted) == 1  # the first claim went with the failed binding
    claims = [c for c in server.list("ResourceClaim") if c["metadata"]["name"].startswith("legacy-extended-resources-")]
    assert len(claims) == 1
    obj = server.get("Pod", "default", "legacy")
    assert obj is not None and obj["status"]["extendedResourceClaimStatus"]["resourceClaimName"] == \
        claims[0]["metadata"]["name"]
    assert_invariants(server, sched)


def test_run_watches_device_classes_claims_and_slices_but_not_templates(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    """kube-scheduler's DRA informers; the resourceclaim controller reads templates, and
    system:kube-scheduler may not list them."""
    sched = _start(server, kubeconfig, started)
    watched = sched.call(lambda live: {informer.resource.path for informer in live.informers})
    assert {"/apis/resource.k8s.io/v1/deviceclasses", "/apis/resource.k8s.io/v1/resourceclaims",
            "/apis/resource.k8s.io/v1/resourceslices"} <= watched
    assert "/apis/resource.k8s.io/v1/resourceclaimtemplates" not in watched


def test_many_pods_racing_for_few_devices_never_share_one(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController) -> None:
    for name in ("n1", "n2"):
        server.create(node(name))
        server.create(node_slice(name, 4))
    server.create(device_class())
    server.create(claim_template("one-gpu"))
    sched = _start(server, kubeconfig, started)
    names = [f"racer-{i}" for i in range(12)]
    for name in names:
        server.create(with_claim(pod(name), "gpu", template="one-gpu"))
    wait_until(lambda: sum(node_of(server, n) is not None for n in names) == 8, timeout=30, what="eight pods bound")
    wait_until(lambda: all((scheduled_condition(server, n) or {}).get("reason") == "Unschedulable"
                           for n in names if node_of(server, n) is None), what="the other four reported")
    taken = [device for claim in server.list("ResourceClaim") for device in _devices(claim)]
    assert len(taken) == 8 and len(set(taken)) == 8, taken
    for name in names:
        if node_of(server, name) is not None:
            assert _devices(claim_of(server, name, "gpu"))[0][0] == node_of(server, name)
    assert_invariants(server, sched)


def test_a_device_freed_by_deallocation_goes_to_the_next_pod(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    server.create(node_slice("n1", 1))
    server.create(device_class())
    sched = _start(server, kubeconfig, started)
    server.create(resource_claim("first-claim"))
    server.create(resource_claim("second-claim"))
    server.create(with_claim(pod("first"), "gpu", claim="first-claim"))
    wait_until(lambda: node_of(server, "first") == "n1", what="the first pod bound")
    server.create(with_claim(pod("second"), "gpu", claim="second-claim"))
    wait_until(lambda: (scheduled_condition(server, "second") or {}).get("reason") == "Unschedulable",
               what="the second pod waiting for the device")
    # The first pod ends; the resourceclaim controller drops its reservation, deallocates the claim
    # and removes the finalizer, as kube-controller-manager does for a claim no pod uses.
    server.delete("Pod", "default", "first")
    claim = server.get("ResourceClaim", "default", "first-claim")
    assert claim is not None
    claim["status"] = {}
    claim["metadata"]["finalizers"] = []
    server.update(claim)
    wait_until(lambda: node_of(server, "second") == "n1", what="the second pod bound on the freed device")
    assert _devices(server.get("ResourceClaim", "default", "second-claim")) == [("n1", "gpu-0")]
    assert_invariants(server, sched)


def test_binding_waits_for_the_devices_binding_conditions_then_binds(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController) -> None:
    server.create(node("n1"))
    server.create(device_class())
    server.create(node_slice("n1", 1, binding_conditions=True))
    driver = Driver(server)
    driver.start()
    try:
        sched = _start(server, kubeconfig, started)
        server.create(claim_template("attached-gpu"))
        server.create(with_claim(pod("needs-attach"), "gpu", template="attached-gpu"))
        wait_until(lambda: (claim_of(server, "needs-attach", "gpu") or {}).get("status", {}).get("reservedFor"),
                   what="the claim allocated and reserved by PreBind")
        assert node_of(server, "needs-attach") is None  # PreBind waits for the driver
        claim = claim_of(server, "needs-attach", "gpu")
        assert claim is not None and claim["status"]["allocation"]["allocationTimestamp"]
        assert claim["status"]["allocation"]["devices"]["results"][0]["bindingConditions"] == ["attached"]
        wait_until(lambda: any(e.get("reason") == "BindingConditionsPending" for e in events(server)),
                   what="the BindingConditionsPending event")
        driver.attach_allowed.set()
        wait_until(lambda: node_of(server, "needs-attach") == "n1", timeout=30, what="the pod bound once attached")
        assert driver.attached == [claim["metadata"]["name"]]
        labels = 'driver="gpu.example.com",profile="default-scheduler",status="success"'
        assert f"scheduler_dra_bindingconditions_allocations_total{{{labels}}} 1.0" in _metrics(sched)
        assert f"scheduler_dra_bindingconditions_wait_duration_seconds_count{{{labels}}} 1.0" in _metrics(sched)
        assert_invariants(server, sched)
    finally:
        driver.stop()
    assert not driver.errors, driver.errors


def test_a_binding_failure_reported_by_the_driver_fails_the_binding(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController) -> None:
    server.create(node("n1"))
    server.create(device_class())
    server.create(node_slice("n1", 1, binding_conditions=True))
    driver = Driver(server, outcome="failed")
    driver.attach_allowed.set()
    driver.start()
    try:
        sched = _start(server, kubeconfig, started)
        server.create(claim_template("attached-gpu"))
        server.create(with_claim(pod("attach-fails"), "gpu", template="attached-gpu"))
        wait_until(lambda: "device binding failed" in (scheduled_condition(server, "attach-fails") or {}).get(
            "message", ""), timeout=30, what="the failed binding reported")
        condition = scheduled_condition(server, "attach-fails")
        assert condition is not None and condition["reason"] == "SchedulerError"
        claim = claim_of(server, "attach-fails", "gpu")
        assert claim is not None
        assert f'device binding failed: claim={claim["metadata"]["name"]}, reason=Done, message="failed"' in \
            condition["message"]
        assert node_of(server, "attach-fails") is None
        assert_invariants(server, sched, expect_condition=False)
    finally:
        driver.stop()
    assert not driver.errors, driver.errors


def test_stopping_kubesched_ends_a_binding_condition_wait_under_way(
        server: APIServer, kubeconfig: Path, controller: ClaimController) -> None:
    server.create(node("n1"))
    server.create(device_class())
    server.create(node_slice("n1", 1, binding_conditions=True))
    sched = Kubesched(server, kubeconfig).start()
    try:
        server.create(claim_template("attached-gpu"))
        server.create(with_claim(pod("never-attached"), "gpu", template="attached-gpu"))
        wait_until(lambda: any(e.get("reason") == "BindingConditionsPending" for e in events(server)),
                   what="PreBind waiting for the driver")
    finally:
        sched.stop()
    # The wait (600 s by default) must not keep a binding worker, and so the process, alive.
    wait_until(lambda: not [t for t in threading.enumerate() if t.name.startswith("binding")], timeout=10,
               what="the binding worker released")
    assert node_of(server, "never-attached") is None


def test_a_stale_extended_resources_claim_is_deleted_by_postfilter(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], gpus: None) -> None:
    """The pod's extended-resources claim outlived a failed binding (its delete failed too) and its
    node got cordoned: PostFilter deletes the claim (upstream's deleteClaim: finalizer, then
    delete); once an event requeues the pod, a new claim places it elsewhere."""
    server.create(device_class("gpu-extended", extended_resource_name="example.com/gpu"))
    server.faults.add(method="POST", path=r"/pods/legacy/binding$", status=500, times=1, delay=1.0)
    server.faults.add(method="DELETE", path=r"/resourceclaims/legacy-extended-resources-", status=500, times=1)
    sched = _start(server, kubeconfig, started)
    requester = pod("legacy")
    for kind in ("requests", "limits"):
        requester["spec"]["containers"][0]["resources"].setdefault(kind, {})["example.com/gpu"] = "1"
    server.create(requester)

    def allocated() -> list[dict[str, Any]]:
        return [c for c in server.list("ResourceClaim") if (c.get("status") or {}).get("allocation")]

    wait_until(allocated, what="the extended-resources claim written by PreBind")
    stale = allocated()[0]
    first_node = _devices(stale)[0][0]
    cordoned = server.get("Node", None, first_node)
    assert cordoned is not None
    cordoned["spec"]["unschedulable"] = True
    server.update(cordoned)
    wait_until(lambda: "deletion of ResourceClaim completed" in (scheduled_condition(server, "legacy") or {}).get(
        "message", ""), timeout=30, what="PostFilter's deletion reported")
    wait_until(lambda: server.get("ResourceClaim", "default", stale["metadata"]["name"]) is None,
               what="the stale claim deleted")
    other = "n2" if first_node == "n1" else "n1"
    labelled = server.get("Node", None, other)
    assert labelled is not None
    labelled["metadata"]["labels"]["gpu"] = "free"  # any node event the plugin listens to
    server.update(labelled)
    wait_until(lambda: node_of(server, "legacy") == other, timeout=30, what="the pod placed on the other node")
    assert_invariants(server, sched)


def test_after_a_failed_device_binding_the_claim_is_deallocated_and_the_pod_gets_another_device(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController) -> None:
    """Upstream's recovery: the driver reports n1's device failed (and withdraws it); Filter finds
    the allocated claim's binding failed, PostFilter deallocates it, and the next attempt gets
    n2's device, which the driver attaches."""
    for name in ("n1", "n2"):
        server.create(node(name))
    server.create(device_class())
    server.create(node_slice("n1", 1, binding_conditions=True))
    server.create(node_slice("n2", 1, binding_conditions=True))
    driver = Driver(server, failing_pools=frozenset({"n1"}))
    driver.attach_allowed.set()
    driver.start()
    try:
        sched = _start(server, kubeconfig, started)
        server.create(claim_template("attached-gpu"))
        server.create(with_claim(pod("second-try"), "gpu", template="attached-gpu"))
        wait_until(lambda: node_of(server, "second-try") is not None or "device binding failed" in (
            scheduled_condition(server, "second-try") or {}).get("message", ""), timeout=30,
            what="the first binding failed (or the pod bound on n2 at once)")
        withdrawn = node_slice("n1", 0, binding_conditions=True, generation=2)
        current = server.get("ResourceSlice", None, withdrawn["metadata"]["name"])
        assert current is not None
        withdrawn["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        server.update(withdrawn)  # the driver takes the broken device out of its pool
        wait_until(lambda: node_of(server, "second-try") is not None, timeout=60, what="the pod bound")
        assert node_of(server, "second-try") == "n2"
        claim = claim_of(server, "second-try", "gpu")
        assert _devices(claim) == [("n2", "gpu-0")]
        assert claim is not None and claim["status"]["reservedFor"] == [_consumer(server, "second-try")]
        assert_invariants(server, sched, expect_condition=False)
    finally:
        driver.stop()
    assert not driver.errors, driver.errors


def test_pods_reserving_one_allocated_claim_at_once_all_get_in_through_conflict_retries(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], gpus: None) -> None:
    """Five pods' PreBinds append to the same claim's reservedFor concurrently: the losers of
    each race get a 409, read the claim again and retry (client-go's RetryOnConflict)."""
    shared = resource_claim("shared")
    shared["metadata"]["finalizers"] = [FINALIZER]
    shared["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n2", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]},
        "allocationTimestamp": "2026-01-01T00:00:00Z"}}
    server.create(shared)  # allocated earlier, by a pod long gone
    sched = _start(server, kubeconfig, started)
    names = [f"sharer-{i}" for i in range(5)]
    for name in names:
        server.create(with_claim(pod(name), "gpu", claim="shared"))
    wait_until(lambda: all(node_of(server, n) == "n2" for n in names), timeout=30, what="every pod bound on n2")
    claim = server.get("ResourceClaim", "default", "shared")
    assert claim is not None
    assert sorted(r["name"] for r in claim["status"]["reservedFor"]) == names
    assert _devices(claim) == [("n2", "gpu-0")]  # the allocation untouched
    assert_invariants(server, sched)


def test_a_claim_whose_binding_timed_out_is_deallocated(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], controller: ClaimController) -> None:
    """bindingTimeout 1s and a driver that never attaches: PreBind gives up, and the next
    attempt finds the claim timed out (its allocationTimestamp, the API server's wall-clock
    time, older than the timeout), so PostFilter deallocates it."""
    server.create(node("n1"))
    server.create(device_class())
    server.create(node_slice("n1", 1, binding_conditions=True))
    sched = _start(server, kubeconfig, started, {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "DynamicResources", "args": {"bindingTimeout": "1s"}}]}]})
    server.create(claim_template("attached-gpu"))
    server.create(with_claim(pod("impatient"), "gpu", template="attached-gpu"))
    wait_until(lambda: "device binding timeout" in (scheduled_condition(server, "impatient") or {}).get("message", ""),
               timeout=30, what="PreBind's wait timing out")
    wait_until(lambda: "deallocation of ResourceClaim completed" in (scheduled_condition(server, "impatient") or {}).get(
        "message", ""), timeout=30, what="PostFilter deallocating the timed-out claim")
    assert node_of(server, "impatient") is None
    assert_invariants(server, sched, expect_condition=False)
