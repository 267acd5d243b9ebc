"""scheduling.k8s.io/v1alpha2 as kube-apiserver v1.36.2 serves it with GenericWorkload on:
PodGroups (and their status subresource) and Workloads, discovery, list/watch, validation
with upstream's Status bodies, immutable specs, and ``Pod.spec.schedulingGroup``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.apiserver.conftest import pod, watch_events
from tests.apiserver.server import APIServer

V1ALPHA2 = "/apis/scheduling.k8s.io/v1alpha2"
GROUPS = f"{V1ALPHA2}/namespaces/default/podgroups"
WORKLOADS = f"{V1ALPHA2}/namespaces/default/workloads"
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
NOT_FOUND = "the server could not find the requested resource"


def pod_group(name: str = "train", min_count: int | None = 2, **spec: Any) -> dict[str, Any]:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"schedulingPolicy": policy, **spec}}


def workload(name: str = "job", **template: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                                            **template}]}}


def condition(status: str = "True", reason: str = "Scheduled", message: str = "") -> dict[str, Any]:
    return {"type": "PodGroupScheduled", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}


def created(client: httpx.Client, body: dict[str, Any], path: str = GROUPS) -> dict[str, Any]:
    response = client.post(path, json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


@pytest.fixture
def bare() -> Iterator[APIServer]:
    """A v1.36.2 server with its defaults: the alpha gates off, so no scheduling.k8s.io/v1alpha2."""
    api = APIServer(bookmark_interval=0.2, feature_gates=frozenset()).start()
    try:
        yield api
    finally:
        api.stop()


# -- discovery ---------------------------------------------------------------------------------
def test_the_scheduling_group_lists_v1alpha2_after_the_preferred_v1(client: httpx.Client) -> None:
    group = client.get("/apis/scheduling.k8s.io").json()
    assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha2"]
    assert group["preferredVersion"] == {"groupVersion": "scheduling.k8s.io/v1", "version": "v1"}
    listed = next(g for g in client.get("/apis").json()["groups"] if g["name"] == "scheduling.k8s.io")
    assert listed["versions"] == group["versions"]


def test_v1alpha2_serves_pod_groups_with_their_status_subresource_and_workloads(client: httpx.Client) -> None:
    body = client.get(V1ALPHA2).json()
    assert body["groupVersion"] == "scheduling.k8s.io/v1alpha2"
    entries = {r["name"]: r for r in body["resources"]}
    assert set(entries) == {"podgroups", "podgroups/status", "workloads"}
    assert entries["podgroups"]["kind"] == "PodGroup" and entries["podgroups"]["namespaced"] is True
    assert entries["podgroups/status"]["verbs"] == ["get", "patch", "update"]
    assert entries["workloads"]["kind"] == "Workload"


def test_without_generic_workload_nothing_of_v1alpha2_is_served(bare: APIServer) -> None:
    with httpx.Client(base_url=bare.url, timeout=10.0) as http:
        assert [v["version"] for v in http.get("/apis/scheduling.k8s.io").json()["versions"]] == ["v1"]
        for path in (V1ALPHA2, GROUPS, f"{V1ALPHA2}/podgroups", WORKLOADS):
            response = http.get(path)
            assert response.status_code == 404, path
            assert response.json()["message"] == NOT_FOUND


# -- PodGroups: create, list, watch -------------------------------------------------------------
def test_a_new_pod_group_gets_an_empty_status_and_the_default_disruption_mode(client: httpx.Client) -> None:
    body = pod_group()
    body["status"] = {"conditions": [condition()]}
    stored = created(client, body)
    assert stored["kind"] == "PodGroup" and stored["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert stored["status"] == {}
    assert stored["spec"]["disruptionMode"] == "Pod"
    assert "generation" not in stored["metadata"]  # the strategy never sets one
    assert stored["metadata"]["uid"] and stored["metadata"]["resourceVersion"]


def test_the_creators_generation_is_kept(client: httpx.Client) -> None:
    body = pod_group()
    body["metadata"]["generation"] = 3
    assert created(client, body)["metadata"]["generation"] == 3


def test_gated_fields_are_dropped_when_their_gate_is_off() -> None:
    with APIServer(feature_gates=frozenset({"GenericWorkload"})) as api, \
            httpx.Client(base_url=api.url, timeout=10.0) as http:
        stored = created(http, pod_group(schedulingConstraints={"topology": [{"key": "rack"}]}, priority=5))
        assert "schedulingConstraints" not in stored["spec"]
        assert "priority" not in stored["spec"] and "disruptionMode" not in stored["spec"]


def test_pod_groups_of_every_namespace_are_listed_and_watched(server: APIServer, client: httpx.Client) -> None:
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})
    created(client, pod_group("a"))
    other = pod_group("b")
    other["metadata"]["namespace"] = "ml"
    created(client, other, f"{V1ALPHA2}/namespaces/ml/podgroups")
    listing = client.get(f"{V1ALPHA2}/podgroups").json()
    assert listing["kind"] == "PodGroupList" and listing["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listing["items"]] == [("default", "a"),
                                                                                                 ("ml", "b")]
    rv = listing["metadata"]["resourceVersion"]
    created(client, pod_group("c"))
    events = watch_events(client, f"{V1ALPHA2}/podgroups", {"resourceVersion": rv, "allowWatchBookmarks": "true"},
                          2, until=lambda e: e["type"] == "BOOKMARK")
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "c"
    assert events[-1]["type"] == "BOOKMARK" and events[-1]["object"]["kind"] == "PodGroup"


# -- PodGroups: validation ------------------------------------------------------------------------
def test_an_invalid_pod_group_is_422_with_the_status_body_of_the_api_server(client: httpx.Client) -> None:
    response = client.post(GROUPS, json=pod_group("bad", min_count=0))
    assert response.status_code == 422
    assert response.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'PodGroup.scheduling.k8s.io "bad" is invalid: spec.schedulingPolicy.gang.minCount: '
                   "Required value",
        "reason": "Invalid",
        "details": {"name": "bad", "group": "scheduling.k8s.io", "kind": "PodGroup",
                    "causes": [{"reason": "FieldValueRequired", "message": "Required value",
                                "field": "spec.schedulingPolicy.gang.minCount"}]},
        "code": 422}


def test_several_problems_are_listed_in_one_message(client: httpx.Client) -> None:
    body = pod_group("bad", min_count=None)
    body["spec"]["schedulingPolicy"] = {"basic": {}, "gang": {"minCount": 2}}
    body["spec"]["schedulingConstraints"] = {"topology": [{"key": "a"}, {"key": "b"}]}
    response = client.post(GROUPS, json=body)
    assert response.status_code == 422
    message = response.json()["message"]
    assert message.startswith('PodGroup.scheduling.k8s.io "bad" is invalid: [spec.schedulingPolicy: Invalid value: ')
    assert "spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item" in message
    reasons = [c["reason"] for c in response.json()["details"]["causes"]]
    assert reasons == ["FieldValueInvalid", "FieldValueTooMany"]


def test_a_value_of_the_wrong_type_is_the_decoders_400(client: httpx.Client) -> None:
    response = client.post(GROUPS, json=pod_group("bad", min_count="two"))  # type: ignore[arg-type]
    assert response.status_code == 400
    assert response.json()["reason"] == "BadRequest"
    assert "cannot be handled as a PodGroup" in response.json()["message"]


def test_the_spec_is_immutable(client: httpx.Client) -> None:
    stored = created(client, pod_group())
    stored["spec"]["schedulingPolicy"] = {"gang": {"minCount": 3}}
    response = client.put(f"{GROUPS}/train", json=stored)
    assert response.status_code == 422
    assert response.json()["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": "Invalid value: null: field is immutable",
         "field": "spec.schedulingPolicy"}]


def test_an_update_keeps_the_status_and_may_change_labels(server: APIServer, client: httpx.Client) -> None:
    body = pod_group()
    body["status"] = {"conditions": [condition()]}
    server.create(body)
    stored = client.get(f"{GROUPS}/train").json()
    stored["metadata"]["labels"] = {"team": "ml"}
    stored["status"] = {}
    updated = client.put(f"{GROUPS}/train", json=stored).json()
    assert updated["metadata"]["labels"] == {"team": "ml"}
    assert updated["status"]["conditions"][0]["reason"] == "Scheduled"


# -- PodGroups: the status subresource -----------------------------------------------------------
def test_a_strategic_merge_patch_of_status_sets_the_condition(client: httpx.Client) -> None:
    stored = created(client, pod_group())
    patch = {"status": {"conditions": [condition("False", "Unschedulable", "0/4 nodes are available")]}}
    response = client.patch(f"{GROUPS}/train/status", json=patch, headers=STRATEGIC)
    assert response.status_code == 200, response.text
    patched = response.json()
    assert patched["status"]["conditions"] == patch["status"]["conditions"]
    assert int(patched["metadata"]["resourceVersion"]) > int(stored["metadata"]["resourceVersion"])
    again = {"status": {"$setElementOrder/conditions": [{"type": "PodGroupScheduled"}],
                        "conditions": [{"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                                        "message": "", "lastTransitionTime": "2026-01-01T00:01:00Z"}]}}
    final = client.patch(f"{GROUPS}/train/status", json=again, headers=STRATEGIC).json()
    assert final["status"]["conditions"] == [{"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                                              "message": "", "lastTransitionTime": "2026-01-01T00:01:00Z"}]


@pytest.mark.parametrize("content_type, body", [
    ("application/merge-patch+json", {"status": {"conditions": [condition()]}}),
    ("application/json-patch+json", [{"op": "add", "path": "/status/conditions", "value": [condition()]}]),
])
def test_merge_and_json_patches_of_status_are_accepted_too(client: httpx.Client, content_type: str,
                                                           body: object) -> None:
    created(client, pod_group())
    response = client.patch(f"{GROUPS}/train/status", content=httpx.Request("PATCH", "/", json=body).content,
                            headers={"Content-Type": content_type})
    assert response.status_code == 200, response.text
    assert response.json()["status"]["conditions"][0]["type"] == "PodGroupScheduled"


def test_a_status_write_keeps_spec_and_metadata(client: httpx.Client) -> None:
    created(client, pod_group())
    patch = {"metadata": {"labels": {"x": "y"}}, "spec": {"schedulingPolicy": {"gang": {"minCount": 9}}},
             "status": {"conditions": [condition()]}}
    patched = client.patch(f"{GROUPS}/train/status", json=patch, headers=STRATEGIC).json()
    assert patched["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    assert "labels" not in patched["metadata"]


def test_an_invalid_condition_is_refused(client: httpx.Client) -> None:
    created(client, pod_group())
    bad = condition()
    del bad["reason"]
    response = client.patch(f"{GROUPS}/train/status", json={"status": {"conditions": [bad]}}, headers=STRATEGIC)
    assert response.status_code == 422
    assert response.json()["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "status.conditions[0].reason"}]


def test_the_status_of_a_missing_pod_group_is_404(client: httpx.Client) -> None:
    response = client.patch(f"{GROUPS}/gone/status", json={"status": {}}, headers=STRATEGIC)
    assert response.status_code == 404
    assert response.json()["message"] == 'podgroups.scheduling.k8s.io "gone" not found'
    assert response.json()["details"] == {"name": "gone", "group": "scheduling.k8s.io", "kind": "podgroups"}


# -- Workloads -----------------------------------------------------------------------------------
def test_a_workload_is_stored_without_status_and_its_templates_are_immutable(client: httpx.Client) -> None:
    body = workload()
    body["status"] = {"anything": True}
    stored = created(client, body, WORKLOADS)
    assert "status" not in stored
    stored["spec"]["podGroupTemplates"][0]["schedulingPolicy"] = {"basic": {}}
    response = client.put(f"{WORKLOADS}/job", json=stored)
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["field"] == "spec.podGroupTemplates"
    assert client.get(f"{WORKLOADS}/job/status").status_code == 404


def test_a_workload_without_templates_is_refused(client: httpx.Client) -> None:
    body = workload()
    body["spec"]["podGroupTemplates"] = []
    response = client.post(WORKLOADS, json=body)
    assert response.status_code == 422
    assert response.json()["message"] == ('Workload.scheduling.k8s.io "job" is invalid: spec.podGroupTemplates: '
                                          "Required value")


# -- Pod.spec.schedulingGroup ---------------------------------------------------------------------
def test_a_pod_names_its_group_in_scheduling_group(client: httpx.Client) -> None:
    response = client.post("/api/v1/namespaces/default/pods", json=pod("p", schedulingGroup={"podGroupName": "train"}))
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["schedulingGroup"] == {"podGroupName": "train"}


def test_a_bad_group_name_on_a_pod_is_422(client: httpx.Client) -> None:
    response = client.post("/api/v1/namespaces/default/pods", json=pod("p", schedulingGroup={"podGroupName": "Bad_G"}))
    assert response.status_code == 422
    body = response.json()
    assert body["message"].startswith('Pod "p" is invalid: spec.schedulingGroup.podGroupName: Invalid value: "Bad_G": ')
    assert body["details"]["kind"] == "Pod" and "group" not in body["details"]


def test_without_generic_workload_a_pods_scheduling_group_is_dropped(bare: APIServer) -> None:
    with httpx.Client(base_url=bare.url, timeout=10.0) as http:
        response = http.post("/api/v1/namespaces/default/pods", json=pod("p", schedulingGroup={"podGroupName": "g"}))
        assert response.status_code == 201
        assert "schedulingGroup" not in response.json()["spec"]
