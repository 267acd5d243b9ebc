"""Pods: defaults on create, the binding subresource and status writes."""

from __future__ import annotations

import httpx
import orjson

from tests.apiserver.conftest import pod
from tests.apiserver.server import APIServer

NS = "/api/v1/namespaces/default/pods"
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
JSONPATCH = {"Content-Type": "application/json-patch+json"}


def binding(name: str, node: str, uid: str | None = None) -> dict[str, object]:
    md: dict[str, object] = {"name": name, "namespace": "default"}
    if uid is not None:
        md["uid"] = uid
    return {"apiVersion": "v1", "kind": "Binding", "metadata": md, "target": {"kind": "Node", "name": node}}


def test_created_pod_gets_scheduler_defaults_and_pending_status(client: httpx.Client) -> None:
    body = client.post(NS, json={**pod("p"), "status": {"phase": "Running"}}).json()
    assert body["spec"]["schedulerName"] == "default-scheduler"
    assert body["spec"]["priority"] == 0
    assert body["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_priority_comes_from_the_priority_class(client: httpx.Client, server: APIServer) -> None:
    server.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                   "value": 1000})
    body = client.post(NS, json=pod("p", priorityClassName="high")).json()
    assert body["spec"]["priority"] == 1000
    missing = client.post(NS, json=pod("q", priorityClassName="nope"))
    assert missing.status_code == 403


def test_binding_assigns_the_node_and_sets_pod_scheduled(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    response = client.post(f"{NS}/p/binding", json=binding("p", "n1"))
    assert response.status_code == 201
    assert response.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                               "code": 201}
    got = client.get(f"{NS}/p").json()
    assert got["spec"]["nodeName"] == "n1"
    [condition] = got["status"]["conditions"]
    assert (condition["type"], condition["status"]) == ("PodScheduled", "True")


def test_binding_replaces_an_unschedulable_condition(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    client.patch(f"{NS}/p/status", headers=SMP, content=orjson.dumps({"status": {"conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes"}]}}))
    client.post(f"{NS}/p/binding", json=binding("p", "n1"))
    [condition] = client.get(f"{NS}/p").json()["status"]["conditions"]
    assert (condition["status"], condition.get("reason")) == ("True", None)


def test_binding_an_assigned_pod_is_conflict(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    client.post(f"{NS}/p/binding", json=binding("p", "n1"))
    response = client.post(f"{NS}/p/binding", json=binding("p", "n2"))
    assert response.status_code == 409
    assert response.json()["message"] == ('Operation cannot be fulfilled on pods/binding "p": '
                                          'pod p is already assigned to node "n1"')
    assert client.get(f"{NS}/p").json()["spec"]["nodeName"] == "n1"


def test_binding_with_a_stale_uid_is_conflict(client: httpx.Client, server: APIServer) -> None:
    old_uid = client.post(NS, json=pod("p")).json()["metadata"]["uid"]
    server.delete("Pod", "default", "p")
    client.post(NS, json=pod("p"))
    response = client.post(f"{NS}/p/binding", json=binding("p", "n1", uid=old_uid))
    assert response.status_code == 409
    assert f"Precondition failed: UID in precondition: {old_uid}" in response.json()["message"]
    assert "nodeName" not in client.get(f"{NS}/p").json()["spec"]


def test_binding_a_missing_pod_is_not_found(client: httpx.Client) -> None:
    response = client.post(f"{NS}/ghost/binding", json=binding("ghost", "n1"))
    assert (response.status_code, response.json()["message"]) == (404, 'pods "ghost" not found')


def test_binding_a_gated_pod_is_conflict(client: httpx.Client) -> None:
    client.post(NS, json=pod("p", schedulingGates=[{"name": "wait"}]))
    response = client.post(f"{NS}/p/binding", json=binding("p", "n1"))
    assert response.status_code == 409
    assert response.json()["message"].endswith("pod p has non-empty .spec.schedulingGates")


def test_binding_a_deleting_pod_is_conflict(client: httpx.Client, server: APIServer) -> None:
    created = server.create(pod("p"))
    created["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    server.update(created)
    response = client.post(f"{NS}/p/binding", json=binding("p", "n1"))
    assert response.status_code == 409
    assert response.json()["message"].endswith("pod p is being deleted, cannot be assigned to a host")


def test_legacy_bindings_collection_binds_too(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    response = client.post("/api/v1/namespaces/default/bindings", json=binding("p", "n1"))
    assert response.status_code == 201
    assert client.get(f"{NS}/p").json()["spec"]["nodeName"] == "n1"


def test_strategic_status_patch_merges_conditions_by_type(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    client.patch(f"{NS}/p/status", headers=SMP, content=orjson.dumps({"status": {"conditions": [
        {"type": "Ready", "status": "False"}]}}))
    body = client.patch(f"{NS}/p/status", headers=SMP, content=orjson.dumps({"status": {"conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}})).json()
    assert sorted(c["type"] for c in body["status"]["conditions"]) == ["PodScheduled", "Ready"]


def test_merge_status_patch_replaces_the_conditions_list(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    client.patch(f"{NS}/p/status", headers=MERGE, content=b'{"status":{"conditions":[{"type":"Ready","status":"False"}]}}')
    body = client.patch(f"{NS}/p/status", headers=MERGE,
                        content=b'{"status":{"conditions":[{"type":"PodScheduled","status":"False"}]}}').json()
    assert [c["type"] for c in body["status"]["conditions"]] == ["PodScheduled"]


def test_json_patch_on_status(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    body = client.patch(f"{NS}/p/status", headers=JSONPATCH, content=orjson.dumps([
        {"op": "add", "path": "/status/nominatedNodeName", "value": "n3"}])).json()
    assert body["status"]["nominatedNodeName"] == "n3"


def test_status_patch_ignores_spec_changes(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    body = client.patch(f"{NS}/p/status", headers=MERGE,
                        content=b'{"spec":{"schedulerName":"other"},"status":{"phase":"Running"}}').json()
    assert (body["spec"]["schedulerName"], body["status"]["phase"]) == ("default-scheduler", "Running")


def test_main_resource_update_ignores_status(client: httpx.Client) -> None:
    created = client.post(NS, json=pod("p")).json()
    created["status"] = {"phase": "Running"}
    created["metadata"]["labels"] = {"x": "y"}
    body = client.put(f"{NS}/p", json=created).json()
    assert (body["status"]["phase"], body["metadata"]["labels"]) == ("Pending", {"x": "y"})


def test_put_status_updates_only_status(client: httpx.Client) -> None:
    created = client.post(NS, json=pod("p")).json()
    created["status"]["phase"] = "Running"
    created["spec"]["schedulerName"] = "other"
    body = client.put(f"{NS}/p/status", json=created).json()
    assert (body["status"]["phase"], body["spec"]["schedulerName"]) == ("Running", "default-scheduler")


def test_patch_with_stale_resource_version_is_conflict(client: httpx.Client) -> None:
    rv = client.post(NS, json=pod("p")).json()["metadata"]["resourceVersion"]
    client.patch(f"{NS}/p", headers=MERGE, content=b'{"metadata":{"labels":{"a":"b"}}}')
    response = client.patch(f"{NS}/p", headers=MERGE,
                            content=orjson.dumps({"metadata": {"resourceVersion": rv, "labels": {"a": "c"}}}))
    assert (response.status_code, response.json()["reason"]) == (409, "Conflict")


def test_strategic_patch_deletes_a_condition_by_directive(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    client.patch(f"{NS}/p/status", headers=SMP, content=orjson.dumps({"status": {"conditions": [
        {"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "False"}]}}))
    body = client.patch(f"{NS}/p/status", headers=SMP, content=orjson.dumps({"status": {"conditions": [
        {"type": "Ready", "$patch": "delete"}]}})).json()
    assert [c["type"] for c in body["status"]["conditions"]] == ["PodScheduled"]


def test_unsupported_patch_type_is_rejected(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    response = client.patch(f"{NS}/p", headers={"Content-Type": "application/xml"}, content=b"<x/>")
    assert response.status_code == 415


def test_status_patch_with_another_uid_is_conflict(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    response = client.patch(f"{NS}/p/status", headers=SMP, content=orjson.dumps({
        "metadata": {"uid": "someone-else"}, "status": {"nominatedNodeName": "n1"}}))
    assert response.status_code == 409
    assert "Precondition failed: UID in precondition: someone-else" in response.json()["message"]


def test_binding_does_not_bump_the_generation(client: httpx.Client) -> None:
    client.post(NS, json=pod("p"))
    client.post(f"{NS}/p/binding", json=binding("p", "n1"))
    assert client.get(f"{NS}/p").json()["metadata"]["generation"] == 1
