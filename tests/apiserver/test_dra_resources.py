"""resource.k8s.io/v1 as kube-apiserver v1.36 serves it: claims and their status subresource,
templates, slices and classes; defaults, validation, finalizers and generated names."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.apiserver.server import APIServer
from tests.cel.test_cel_cost import EXPENSIVE

V1 = "/apis/resource.k8s.io/v1"
CLAIMS = f"{V1}/namespaces/default/resourceclaims"
FINALIZER = "resource.kubernetes.io/delete-protection"


def claim(name: str = "c", **request: Any) -> dict[str, Any]:
    exactly = {"deviceClassName": "gpu.example.com", **request}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def slice_(name: str = "n1-gpus", node: str | None = "n1", devices: tuple[str, ...] = ("gpu-0", "gpu-1"),
           **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"driver": "gpu.example.com", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                            "devices": [{"name": d} for d in devices], **spec}
    if node is not None:
        body["nodeName"] = node
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def allocation(device: str = "gpu-0", request: str = "gpu") -> dict[str, Any]:
    return {"devices": {"results": [{"request": request, "driver": "gpu.example.com", "pool": "n1",
                                     "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}


def consumer(name: str = "p", uid: str = "uid-p") -> dict[str, str]:
    return {"resource": "pods", "name": name, "uid": uid}


def created(client: httpx.Client, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = client.post(CLAIMS, json=body or claim())
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def put_status(client: httpx.Client, obj: dict[str, Any]) -> httpx.Response:
    return client.put(f"{CLAIMS}/{obj['metadata']['name']}/status", json=obj)


def test_discovery_serves_the_four_kinds_and_the_claim_status_subresource(client: httpx.Client) -> None:
    names = {r["name"] for r in client.get(V1).json()["resources"]}
    assert {"deviceclasses", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates",
            "resourceslices"} <= names


def test_a_created_claim_loses_its_status_and_gets_the_request_defaults(client: httpx.Client) -> None:
    body = claim()
    body["status"] = {"allocation": allocation()}
    stored = created(client, body)
    assert "status" not in stored
    assert stored["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}


@pytest.mark.parametrize(("request_", "message"), [
    ({"deviceClassName": ""}, 'spec.devices.requests[0].exactly.deviceClassName: Required value'),
    ({"count": 0}, "spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero"),
    ({"allocationMode": "Some"}, 'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": '
                                 'supported values: "All", "ExactCount"'),
    ({"allocationMode": "All", "count": 2}, "spec.devices.requests[0].exactly.count: Invalid value: 2: "
                                            "must not be specified when allocationMode is 'All'"),
])
def test_an_invalid_request_is_refused_naming_the_field(client: httpx.Client, request_: dict[str, Any],
                                                         message: str) -> None:
    response = client.post(CLAIMS, json=claim(**request_))
    assert response.status_code == 422
    assert response.json()["message"] == f'ResourceClaim.resource.k8s.io "c" is invalid: {message}'


def test_a_claim_spec_is_immutable(client: httpx.Client) -> None:
    stored = created(client)
    stored["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    response = client.put(f"{CLAIMS}/c", json=stored)
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["field"] == "spec"
    assert "field is immutable" in response.json()["message"]


def test_status_takes_an_allocation_and_reservations_but_keeps_spec_and_metadata(client: httpx.Client) -> None:
    stored = created(client)
    stored["status"] = {"allocation": allocation(), "reservedFor": [consumer()]}
    stored["metadata"]["labels"] = {"ignored": "yes"}
    response = put_status(client, stored)
    assert response.status_code == 200, response.text
    after = response.json()
    assert after["status"]["reservedFor"] == [consumer()]
    assert "labels" not in after["metadata"]


def test_reservations_without_an_allocation_are_forbidden(client: httpx.Client) -> None:
    stored = created(client)
    stored["status"] = {"reservedFor": [consumer()]}
    response = put_status(client, stored)
    assert response.status_code == 422
    assert response.json()["message"] == ('ResourceClaim.resource.k8s.io "c" is invalid: status.reservedFor: '
                                          "Forbidden: may not be specified when `allocated` is not set")


def test_a_consumer_reserved_twice_is_a_duplicate(client: httpx.Client) -> None:
    stored = created(client)
    stored["status"] = {"allocation": allocation(), "reservedFor": [consumer(), consumer()]}
    response = put_status(client, stored)
    assert response.status_code == 422
    assert 'status.reservedFor[1]: Duplicate value: "uid-p"' in response.json()["message"]


def test_an_allocation_cannot_change_once_made_but_can_be_removed(client: httpx.Client) -> None:
    stored = created(client)
    stored["status"] = {"allocation": allocation("gpu-0")}
    stored = put_status(client, stored).json()
    stored["status"] = {"allocation": allocation("gpu-1")}
    changed = put_status(client, stored)
    assert changed.status_code == 422 and "status.allocation: Invalid value" in changed.json()["message"]
    stored["status"] = {}
    assert put_status(client, stored).status_code == 200


def test_an_allocation_result_must_name_a_request_of_the_claim(client: httpx.Client) -> None:
    stored = created(client)
    stored["status"] = {"allocation": allocation(request="tpu")}
    response = put_status(client, stored)
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["field"] == "status.allocation.devices.results[0].request"


def test_a_stale_status_update_is_a_conflict(client: httpx.Client) -> None:
    stored = created(client)
    client.put(f"{CLAIMS}/c", json={**stored, "metadata": {**stored["metadata"], "labels": {"a": "b"}}})
    stored["status"] = {"allocation": allocation()}
    response = put_status(client, stored)
    assert response.status_code == 409 and response.json()["reason"] == "Conflict"


def test_a_strategic_merge_patch_deletes_one_reservation_by_uid(client: httpx.Client) -> None:
    stored = created(client)
    stored["status"] = {"allocation": allocation(), "reservedFor": [consumer("a", "uid-a"), consumer("b", "uid-b")]}
    put_status(client, stored)
    patch = {"metadata": {"uid": stored["metadata"]["uid"]},
             "status": {"reservedFor": [{"$patch": "delete", "uid": "uid-a"}]}}
    response = client.patch(f"{CLAIMS}/c/status", json=patch,
                            headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert response.status_code == 200, response.text
    assert response.json()["status"]["reservedFor"] == [consumer("b", "uid-b")]


def test_a_claim_with_a_finalizer_is_only_marked_deleted_until_the_finalizer_goes(client: httpx.Client) -> None:
    body = claim()
    body["metadata"]["finalizers"] = [FINALIZER]
    created(client, body)
    response = client.delete(f"{CLAIMS}/c")
    assert response.status_code == 200 and response.json()["kind"] == "ResourceClaim"
    marked = client.get(f"{CLAIMS}/c").json()
    assert marked["metadata"]["deletionTimestamp"]
    marked["metadata"]["finalizers"] = []
    assert client.put(f"{CLAIMS}/c", json=marked).status_code == 200
    assert client.get(f"{CLAIMS}/c").status_code == 404


def test_a_claim_being_deleted_takes_no_new_reservation(client: httpx.Client) -> None:
    body = claim()
    body["metadata"]["finalizers"] = [FINALIZER]
    stored = created(client, body)
    stored["status"] = {"allocation": allocation()}
    stored = put_status(client, stored).json()
    client.delete(f"{CLAIMS}/c")
    stored = client.get(f"{CLAIMS}/c").json()
    stored["status"]["reservedFor"] = [consumer()]
    response = put_status(client, stored)
    assert response.status_code == 422
    assert "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set" in \
        response.json()["message"]


def test_generate_name_gets_five_random_characters_after_a_base_of_at_most_58(client: httpx.Client) -> None:
    body = claim()
    body["metadata"] = {"generateName": "p" * 70 + "-extended-resources-", "namespace": "default"}
    name = created(client, body)["metadata"]["name"]
    assert len(name) == 63 and name.startswith("p" * 58)
    assert all(ch in "bcdfghjklmnpqrstvwxz2456789" for ch in name[58:])


def test_slices_are_selected_by_node_name_and_driver(client: httpx.Client) -> None:
    for obj in (slice_("a", "n1"), slice_("b", "n2"), slice_("c", None, allNodes=True)):
        assert client.post(f"{V1}/resourceslices", json=obj).status_code == 201
    on_n1 = client.get(f"{V1}/resourceslices", params={"fieldSelector": "spec.nodeName=n1"}).json()
    assert [s["metadata"]["name"] for s in on_n1["items"]] == ["a"]
    by_driver = client.get(f"{V1}/resourceslices", params={"fieldSelector": "spec.driver=gpu.example.com"}).json()
    assert len(by_driver["items"]) == 3
    assert on_n1["items"][0]["metadata"]["generation"] == 1


def test_a_slice_with_duplicate_device_names_is_refused(client: httpx.Client) -> None:
    response = client.post(f"{V1}/resourceslices", json=slice_(devices=("gpu-0", "gpu-0")))
    assert response.status_code == 422
    assert response.json()["message"] == ('ResourceSlice.resource.k8s.io "n1-gpus" is invalid: '
                                          'spec.devices[1]: Duplicate value: "gpu-0"')


def test_a_slice_needs_exactly_one_node_scope(client: httpx.Client) -> None:
    none = client.post(f"{V1}/resourceslices", json=slice_(node=None))
    both = client.post(f"{V1}/resourceslices", json=slice_(allNodes=True))
    assert none.status_code == both.status_code == 422
    assert "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` " \
           "is required" in none.json()["message"]
    assert "but multiple fields are set" in both.json()["message"]


def test_a_slice_spec_change_bumps_its_generation_and_its_driver_is_immutable(client: httpx.Client) -> None:
    stored = client.post(f"{V1}/resourceslices", json=slice_()).json()
    stored["spec"]["devices"].append({"name": "gpu-2"})
    updated = client.put(f"{V1}/resourceslices/n1-gpus", json=stored).json()
    assert updated["metadata"]["generation"] == 2
    updated["spec"]["driver"] = "other.example.com"
    response = client.put(f"{V1}/resourceslices/n1-gpus", json=updated)
    assert response.status_code == 422 and 'spec.driver: Invalid value: "other.example.com": field is immutable' in \
        response.json()["message"]


def test_templates_and_classes_are_served_and_watched(client: httpx.Client, server: APIServer) -> None:
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"}, "spec": {"spec": claim()["spec"]}}
    stored = client.post(f"{V1}/namespaces/default/resourceclaimtemplates", json=template).json()
    assert stored["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
           "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    assert client.post(f"{V1}/deviceclasses", json=cls).status_code == 201
    assert [c["metadata"]["name"] for c in server.list("DeviceClass")] == ["gpu.example.com"]


def in_namespace(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    obj["metadata"]["namespace"] = namespace
    return obj


def _namespace(client: httpx.Client, name: str, admin: bool) -> None:
    labels = {"resource.kubernetes.io/admin-access": "true"} if admin else {}
    assert client.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": name, "labels": labels}}).status_code == 201


def test_admin_access_needs_the_namespace_label(client: httpx.Client) -> None:
    _namespace(client, "plain", admin=False)
    _namespace(client, "ops", admin=True)
    refused = client.post(f"{V1}/namespaces/plain/resourceclaims", json=in_namespace(claim(adminAccess=True), "plain"))
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        'ResourceClaim.resource.k8s.io "c" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access '
        "to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace")
    assert client.post(f"{V1}/namespaces/ops/resourceclaims",
                       json=in_namespace(claim(adminAccess=True), "ops")).status_code == 201


def test_an_allocation_granting_admin_access_needs_the_namespace_label(client: httpx.Client) -> None:
    _namespace(client, "plain", admin=False)
    stored = client.post(f"{V1}/namespaces/plain/resourceclaims", json=in_namespace(claim(), "plain")).json()
    granted = allocation()
    granted["devices"]["results"][0]["adminAccess"] = True
    stored["status"] = {"allocation": granted}
    response = client.put(f"{V1}/namespaces/plain/resourceclaims/c/status", json=stored)
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["field"] == "status.allocation.devices.results[0].adminAccess"


def device_class(expression: str = "device.driver == 'gpu.example.com'", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": expression}}], **spec}}


def test_a_class_whose_selector_does_not_compile_is_refused(client: httpx.Client) -> None:
    response = client.post(f"{V1}/deviceclasses", json=device_class("device.driver == "))
    assert response.status_code == 422
    cause = response.json()["details"]["causes"][0]
    assert cause["field"] == "spec.selectors[0].cel.expression"
    assert cause["message"].startswith('Invalid value: "device.driver == ": compilation failed: ERROR: <input>:1:18:')


def test_a_claim_request_selector_must_compile_too(client: httpx.Client) -> None:
    body = claim(selectors=[{"cel": {"expression": "device.nope("}}])
    response = client.post(CLAIMS, json=body)
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["field"] == \
        "spec.devices.requests[0].exactly.selectors[0].cel.expression"


@pytest.mark.parametrize(("name", "valid"), [
    ("example.com/gpu", True), ("gpu", False), ("kubernetes.io/gpu", False), ("requests.example.com/gpu", False),
    ("example.com/-gpu", False),
])
def test_a_class_extended_resource_name_must_be_an_extended_resource_name(client: httpx.Client, name: str,
                                                                         valid: bool) -> None:
    response = client.post(f"{V1}/deviceclasses", json=device_class(extendedResourceName=name))
    assert response.status_code == (201 if valid else 422), response.text


def test_a_class_whose_selector_costs_too_much_is_refused(client: httpx.Client) -> None:
    response = client.post(f"{V1}/deviceclasses", json=device_class(EXPENSIVE))
    assert response.status_code == 422
    cause = response.json()["details"]["causes"][0]
    assert (cause["reason"], cause["field"], cause["message"]) == \
        ("FieldValueForbidden", "spec.selectors[0].cel.expression", "Forbidden: too complex, exceeds cost limit")
