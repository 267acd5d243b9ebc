"""KubeClusterClient writes ResourceClaims as upstream's DynamicResources does (bindClaim,
the extended-resources claim, deleteClaim, Unreserve, PostFilter), against the test API server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from kubesched.cluster.kube.claims import ClaimWriteError, DELETE_PROTECTION_FINALIZER
from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.cluster_client import KubeClusterClient
from kubesched.cluster.kube.connection import Connection
from kubesched.framework.handle import ResourceClaimWriter
from kubesched.objects.pod import PodInfo, parse_pod
from tests.apiserver import APIServer

T = TypeVar("T")
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
NOW = 1_780_000_000.0  # 2026-05-28T20:26:40Z


class NoEvents:
    def pod_event(self, pod: PodInfo, event_type: str, reason: str, action: str, note: str) -> None:
        pass


def _claim(name: str = "c") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}


def _allocation(device: str = "gpu-0", binding_conditions: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": device}
    if binding_conditions:
        result["bindingConditions"] = ["attached"]
    return {"devices": {"results": [result]}}


def _consumer(name: str = "p", uid: str = "uid-p") -> dict[str, str]:
    return {"resource": "pods", "name": name, "uid": uid}


@pytest.fixture
def server() -> Any:
    srv = APIServer(bookmark_interval=5).start()
    try:
        yield srv
    finally:
        srv.stop()


def with_client(server: APIServer, use: Callable[[KubeClusterClient], Awaitable[T]]) -> T:
    async def scenario() -> T:
        api = ApiClient(Connection(server=server.url, ssl=None, token=lambda: "", basic_auth=None))
        client = KubeClusterClient(api, asyncio.get_running_loop(), NoEvents(), wall_clock=lambda: NOW)
        client.start()
        try:
            return await use(client)
        finally:
            await client.drain_claim_writes()
            await client.stop()
            await api.close()

    return asyncio.run(asyncio.wait_for(scenario(), 30))


def writes(server: APIServer) -> list[tuple[str, str]]:
    return [(m, p) for m, p in server.requests if m != "GET" or "resourceclaims" in p]


def test_binding_a_new_allocation_writes_finalizer_then_status(server: APIServer) -> None:
    stored = server.create(_claim())
    result = with_client(server, lambda c: c.bind_resource_claim_async(stored, _allocation(), _consumer()))
    assert writes(server) == [("PUT", f"{CLAIMS}/c"), ("PUT", f"{CLAIMS}/c/status")]
    claim = server.get("ResourceClaim", "default", "c")
    assert claim is not None and claim == result
    assert claim["metadata"]["finalizers"] == [DELETE_PROTECTION_FINALIZER]
    assert claim["status"]["reservedFor"] == [_consumer()]
    assert claim["status"]["allocation"]["devices"] == _allocation()["devices"]
    assert claim["status"]["allocation"]["allocationTimestamp"] == "2026-05-28T20:26:40Z"


def test_without_binding_conditions_no_allocation_timestamp_is_written(server: APIServer) -> None:
    stored = server.create(_claim())
    with_client(server, lambda c: c.bind_resource_claim_async(stored, _allocation(), _consumer(),
                                                               set_allocation_timestamp=False))
    claim = server.get("ResourceClaim", "default", "c")
    assert claim is not None and "allocationTimestamp" not in claim["status"]["allocation"]


def test_a_shared_claim_already_allocated_only_gets_the_pod_added_to_reserved_for(server: APIServer) -> None:
    stored = server.create(_claim())
    stored["metadata"]["finalizers"] = [DELETE_PROTECTION_FINALIZER]
    allocated = {**_allocation(), "allocationTimestamp": "2026-05-28T20:00:00Z"}  # by the pod that got it first
    stored["status"] = {"allocation": allocated, "reservedFor": [_consumer("a", "uid-a")]}
    stored = server.update(stored)
    with_client(server, lambda c: c.bind_resource_claim_async(stored, None, _consumer("b", "uid-b")))
    assert writes(server) == [("PUT", f"{CLAIMS}/c/status")]
    claim = server.get("ResourceClaim", "default", "c")
    assert claim is not None
    assert claim["status"]["reservedFor"] == [_consumer("a", "uid-a"), _consumer("b", "uid-b")]


def test_a_conflict_reads_the_claim_again_and_retries(server: APIServer) -> None:
    stale = server.create(_claim())
    current = server.get("ResourceClaim", "default", "c")
    assert current is not None
    current["metadata"]["labels"] = {"touched": "by-someone"}
    server.update(current)
    with_client(server, lambda c: c.bind_resource_claim_async(stale, _allocation(), _consumer()))
    assert writes(server) == [("PUT", f"{CLAIMS}/c"), ("GET", f"{CLAIMS}/c"), ("PUT", f"{CLAIMS}/c"),
                              ("PUT", f"{CLAIMS}/c/status")]
    claim = server.get("ResourceClaim", "default", "c")
    assert claim is not None and claim["metadata"]["labels"] == {"touched": "by-someone"}
    assert claim["status"]["reservedFor"] == [_consumer()]


def test_a_claim_allocated_elsewhere_meanwhile_is_an_error(server: APIServer) -> None:
    stale = server.create(_claim())
    current = server.get("ResourceClaim", "default", "c")
    assert current is not None
    current["status"] = {"allocation": _allocation("gpu-1")}
    server.update(current)
    with pytest.raises(ClaimWriteError, match="^claim default/c got allocated elsewhere in the meantime$"):
        with_client(server, lambda c: c.bind_resource_claim_async(stale, _allocation(), _consumer()))


def test_a_claim_deleted_meanwhile_is_an_error(server: APIServer) -> None:
    stale = server.create(_claim())
    current = server.get("ResourceClaim", "default", "c")
    assert current is not None
    current["metadata"]["finalizers"] = ["someone/else"]
    server.update(current)
    server.delete("ResourceClaim", "default", "c")  # kept by the finalizer, with a deletionTimestamp
    with pytest.raises(ClaimWriteError, match="^claim default/c got deleted in the meantime$"):
        with_client(server, lambda c: c.bind_resource_claim_async(stale, _allocation(), _consumer()))


def test_conflicts_are_retried_five_times_then_reported_as_upstream_words_them(server: APIServer) -> None:
    stored = server.create(_claim())
    stored["metadata"]["finalizers"] = [DELETE_PROTECTION_FINALIZER]
    stored = server.update(stored)
    server.faults.add(method="PUT", path=r"/status$", status=409, times=None,
                      message='Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c": the object '
                              "has been modified; please apply your changes to the latest version and try again")
    with pytest.raises(ClaimWriteError) as failure:
        with_client(server, lambda c: c.bind_resource_claim_async(stored, _allocation(), _consumer()))
    assert str(failure.value) == (
        'add allocation and reservation to claim default/c: Operation cannot be fulfilled on '
        'resourceclaims.resource.k8s.io "c": the object has been modified; please apply your changes to the '
        "latest version and try again")
    assert failure.value.is_conflict()
    assert sum(1 for m, p in server.requests if m == "PUT" and p.endswith("/status")) == 5


def test_a_refusal_other_than_a_conflict_is_not_retried(server: APIServer) -> None:
    stored = server.create(_claim())
    stored["status"] = {"allocation": _allocation()}
    stored = server.update(stored)
    with pytest.raises(ClaimWriteError, match="^add reservation to claim default/c: .*reservedFor"):
        with_client(server, lambda c: c.bind_resource_claim_async(stored, None, {"resource": "pods", "name": "p"}))
    assert sum(1 for m, _ in server.requests if m == "PUT") == 1


def test_the_extended_resources_claim_is_created_with_a_generated_name(server: APIServer) -> None:
    claim = _claim("<extended-resources>")
    claim["metadata"].update({
        "uid": "temporary", "generateName": "p-extended-resources-",
        "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}]})
    created = with_client(server, lambda c: c.create_resource_claim_async(claim))
    name = created["metadata"]["name"]
    assert name.startswith("p-extended-resources-") and len(name) == len("p-extended-resources-") + 5
    assert created["metadata"]["uid"] != "temporary"
    assert created["metadata"]["ownerReferences"][0]["uid"] == "uid-p"
    assert server.requests[-1] == ("POST", CLAIMS)


def test_the_pod_status_names_its_extended_resources_claim(server: APIServer) -> None:
    raw = server.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}})
    mapping = {"requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu", "requestName":
                                    "container-0-request-0"}], "resourceClaimName": "p-extended-resources-abcde"}
    with_client(server, lambda c: c.patch_pod_extended_resource_claim_status_async(parse_pod(raw), mapping))
    pod = server.get("Pod", "default", "p")
    assert pod is not None and pod["status"]["extendedResourceClaimStatus"] == mapping
    assert pod["status"]["phase"] == "Pending"  # a patch: the rest of the status stays


def test_deleting_a_claim_first_removes_the_delete_protection_finalizer(server: APIServer) -> None:
    stored = server.create(_claim())
    stored["metadata"]["finalizers"] = [DELETE_PROTECTION_FINALIZER]
    stored = server.update(stored)
    with_client(server, lambda c: c.delete_resource_claim_async(stored))
    assert writes(server) == [("PUT", f"{CLAIMS}/c"), ("DELETE", f"{CLAIMS}/c")]
    assert server.get("ResourceClaim", "default", "c") is None


def test_unreserve_removes_only_the_pod_from_reserved_for(server: APIServer) -> None:
    stored = server.create(_claim())
    stored["status"] = {"allocation": _allocation(), "reservedFor": [_consumer("a", "uid-a"), _consumer()]}
    stored = server.update(stored)

    async def unreserve(client: KubeClusterClient) -> None:
        client.unreserve_resource_claim(stored, "uid-p")  # on the loop: in the background

    with_client(server, unreserve)
    claim = server.get("ResourceClaim", "default", "c")
    assert claim is not None and claim["status"]["reservedFor"] == [_consumer("a", "uid-a")]
    assert ("PATCH", f"{CLAIMS}/c/status") in server.requests


def test_deallocation_clears_allocation_reservations_and_device_statuses(server: APIServer) -> None:
    stored = server.create(_claim())
    stored["status"] = {"allocation": _allocation(), "reservedFor": [_consumer()],
                        "devices": [{"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}
    stored = server.update(stored)

    async def deallocate(client: KubeClusterClient) -> None:
        client.deallocate_resource_claim(stored)

    with_client(server, deallocate)
    claim = server.get("ResourceClaim", "default", "c")
    assert claim is not None and claim["status"] == {}


def test_a_blocking_write_refuses_to_run_on_the_event_loop(server: APIServer) -> None:
    async def on_loop(client: KubeClusterClient) -> None:
        client.bind_resource_claim(_claim(), None, _consumer())

    with pytest.raises(RuntimeError, match="binding worker"):
        with_client(server, on_loop)


def test_a_blocking_write_from_a_binding_worker_waits_for_the_answer(server: APIServer) -> None:
    stored = server.create(_claim())

    async def from_worker(client: KubeClusterClient) -> dict[str, object]:
        return await asyncio.to_thread(client.bind_resource_claim, stored, _allocation(), _consumer())

    result = with_client(server, from_worker)
    assert result["status"]["reservedFor"] == [_consumer()]  # type: ignore[index]


def test_the_kube_cluster_client_is_the_resource_claim_writer_dynamic_resources_asks_for(server: APIServer) -> None:
    async def check(client: KubeClusterClient) -> bool:
        return isinstance(client, ResourceClaimWriter)

    assert with_client(server, check)


def test_the_binding_conditions_pending_event_is_reported_while_scheduling() -> None:
    seen: list[tuple[str, str, str]] = []

    class Sink:
        def pod_event(self, pod: PodInfo, event_type: str, reason: str, action: str, note: str) -> None:
            seen.append((event_type, reason, action))

    async def scenario() -> None:
        api = ApiClient(Connection(server="http://127.0.0.1:9", ssl=None, token=lambda: "", basic_auth=None))
        client = KubeClusterClient(api, asyncio.get_running_loop(), Sink())
        client.start()
        pod = parse_pod({"metadata": {"name": "p", "namespace": "default", "uid": "u"}, "spec": {"containers": []}})
        client.record_event(pod, "Normal", "BindingConditionsPending", "waiting for binding conditions for device "
                                                                      "on node n1")
        await client.stop()
        await api.close()

    asyncio.run(scenario())
    assert seen == [("Normal", "BindingConditionsPending", "Scheduling")]
