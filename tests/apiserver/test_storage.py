"""Revisions, optimistic concurrency, deletes and errors, as kube-apiserver answers them."""

from __future__ import annotations

import httpx

from tests.apiserver.conftest import pod
from tests.apiserver.server import APIServer

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


def lease(name: str = "sched", holder: str = "a", rv: str | None = None) -> dict[str, object]:
    md: dict[str, object] = {"name": name, "namespace": "kube-system"}
    if rv is not None:
        md["resourceVersion"] = rv
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": md,
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15}}


def test_every_write_bumps_one_global_revision(client: httpx.Client) -> None:
    a = client.post("/api/v1/namespaces/default/pods", json=pod("a")).json()
    b = client.post(LEASES, json=lease()).json()
    c = client.post("/api/v1/nodes", json={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}).json()
    revs = [int(o["metadata"]["resourceVersion"]) for o in (a, b, c)]
    assert revs == [revs[0], revs[0] + 1, revs[0] + 2]


def test_created_objects_get_uid_timestamp_and_generation(client: httpx.Client) -> None:
    created = client.post("/apis/apps/v1/namespaces/default/deployments", json={
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1}}).json()
    md = created["metadata"]
    assert md["uid"] and md["creationTimestamp"].endswith("Z") and md["generation"] == 1


def test_create_of_existing_name_is_already_exists(client: httpx.Client) -> None:
    client.post(LEASES, json=lease())
    response = client.post(LEASES, json=lease())
    body = response.json()
    assert response.status_code == 409
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'leases.coordination.k8s.io "sched" already exists'
    assert body["details"] == {"name": "sched", "group": "coordination.k8s.io", "kind": "leases"}


def test_update_with_stale_resource_version_is_conflict(client: httpx.Client) -> None:
    first = client.post(LEASES, json=lease()).json()
    rv = first["metadata"]["resourceVersion"]
    assert client.put(f"{LEASES}/sched", json=lease(holder="b", rv=rv)).status_code == 200
    response = client.put(f"{LEASES}/sched", json=lease(holder="c", rv=rv))
    assert response.status_code == 409
    assert response.json()["reason"] == "Conflict"
    assert response.json()["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "sched": the object has been modified; '
        "please apply your changes to the latest version and try again")


def test_two_racing_lease_updates_from_one_version_only_one_wins(client: httpx.Client) -> None:
    rv = client.post(LEASES, json=lease()).json()["metadata"]["resourceVersion"]
    codes = [client.put(f"{LEASES}/sched", json=lease(holder=h, rv=rv)).status_code for h in ("x", "y")]
    assert codes == [200, 409]
    assert client.get(f"{LEASES}/sched").json()["spec"]["holderIdentity"] == "x"


def test_lease_update_without_resource_version_is_invalid(client: httpx.Client) -> None:
    client.post(LEASES, json=lease())
    response = client.put(f"{LEASES}/sched", json=lease(holder="b"))
    assert response.status_code == 422
    assert response.json()["message"] == ('leases.coordination.k8s.io "sched" is invalid: metadata.resourceVersion: '
                                          "Invalid value: 0x0: must be specified for an update")


def test_configmap_update_without_resource_version_is_unconditional(client: httpx.Client) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    client.post(path, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}})
    response = client.put(f"{path}/c", json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                             "data": {"a": "2"}})
    assert response.status_code == 200
    assert response.json()["data"] == {"a": "2"}


def test_put_creates_a_missing_lease(client: httpx.Client) -> None:
    response = client.put(f"{LEASES}/new", json=lease("new"))
    assert response.status_code == 201
    assert client.get(f"{LEASES}/new").status_code == 200


def test_put_of_a_missing_pod_is_not_found(client: httpx.Client) -> None:
    response = client.put("/api/v1/namespaces/default/pods/nope", json=pod("nope"))
    assert response.status_code == 404
    assert response.json()["message"] == 'pods "nope" not found'


def test_update_that_changes_nothing_keeps_the_resource_version(client: httpx.Client, server: APIServer) -> None:
    created = client.post(LEASES, json=lease()).json()
    before = server.revision
    same = client.put(f"{LEASES}/sched", json=created).json()
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert server.revision == before


def test_generation_increments_on_spec_change_only(client: httpx.Client) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments"
    created = client.post(path, json={"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                                      "spec": {"replicas": 1}}).json()
    created["metadata"]["labels"] = {"x": "y"}
    relabeled = client.put(f"{path}/d", json=created).json()
    relabeled["spec"]["replicas"] = 2
    rescaled = client.put(f"{path}/d", json=relabeled).json()
    assert (relabeled["metadata"]["generation"], rescaled["metadata"]["generation"]) == (1, 2)


def test_get_of_missing_object_is_not_found_status(client: httpx.Client) -> None:
    response = client.get("/api/v1/nodes/ghost")
    assert response.status_code == 404
    assert response.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                               "message": 'nodes "ghost" not found', "reason": "NotFound",
                               "details": {"name": "ghost", "kind": "nodes"}, "code": 404}


def test_delete_honours_uid_precondition(client: httpx.Client) -> None:
    created = client.post(LEASES, json=lease()).json()
    wrong = client.request("DELETE", f"{LEASES}/sched", json={"preconditions": {"uid": "other"}})
    assert wrong.status_code == 409
    assert "Precondition failed: UID in precondition: other" in wrong.json()["message"]
    right = client.request("DELETE", f"{LEASES}/sched", json={"preconditions": {"uid": created["metadata"]["uid"]}})
    assert right.status_code == 200
    assert client.get(f"{LEASES}/sched").status_code == 404


def test_delete_honours_resource_version_precondition(client: httpx.Client) -> None:
    created = client.post(LEASES, json=lease()).json()
    client.put(f"{LEASES}/sched", json={**created, "spec": {"holderIdentity": "z"}})
    stale = client.request("DELETE", f"{LEASES}/sched",
                           json={"preconditions": {"resourceVersion": created["metadata"]["resourceVersion"]}})
    assert stale.status_code == 409
    assert "Precondition failed: ResourceVersion in precondition" in stale.json()["message"]


def test_deleting_a_pod_returns_the_pod(client: httpx.Client) -> None:
    client.post("/api/v1/namespaces/default/pods", json=pod("a"))
    body = client.delete("/api/v1/namespaces/default/pods/a").json()
    assert (body["kind"], body["metadata"]["name"]) == ("Pod", "a")


def test_python_api_writes_are_seen_over_http(client: httpx.Client, server: APIServer) -> None:
    server.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"allocatable": {"cpu": "4"}}})
    got = client.get("/api/v1/nodes/n1").json()
    assert got["status"]["allocatable"] == {"cpu": "4"}
    got["status"]["allocatable"] = {"cpu": "8"}
    server.update(got)
    assert client.get("/api/v1/nodes/n1").json()["status"]["allocatable"] == {"cpu": "8"}
    server.delete("Node", None, "n1")
    assert server.get("Node", None, "n1") is None


def test_events_of_both_groups_are_stored(client: httpx.Client, server: APIServer) -> None:
    new = client.post("/apis/events.k8s.io/v1/namespaces/default/events", json={
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1"}, "reason": "Scheduled",
        "regarding": {"kind": "Pod", "name": "p"}, "eventTime": "2026-01-01T00:00:00.000000Z"})
    old = client.post("/api/v1/namespaces/default/events", json={
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e2"}, "reason": "Scheduled",
        "involvedObject": {"kind": "Pod", "name": "p"}})
    assert (new.status_code, old.status_code) == (201, 201)
    patched = client.patch("/apis/events.k8s.io/v1/namespaces/default/events/e1",
                           headers={"Content-Type": "application/merge-patch+json"},
                           content=b'{"series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}}')
    assert patched.json()["series"]["count"] == 2
    assert client.get("/api/v1/namespaces/default/events/e2").json()["reason"] == "Scheduled"


def test_discovery_lists_pods_binding_and_groups(client: httpx.Client) -> None:
    core = client.get("/api/v1").json()
    assert "pods/binding" in [r["name"] for r in core["resources"]]
    groups = [g["name"] for g in client.get("/apis").json()["groups"]]
    assert {"apps", "coordination.k8s.io", "events.k8s.io", "storage.k8s.io"} <= set(groups)
    assert client.get("/api").json()["versions"] == ["v1"]
    assert client.get("/healthz").text == "ok"
    assert client.get("/version").json()["minor"] == "36"


def test_protobuf_request_is_answered_in_json(client: httpx.Client) -> None:
    response = client.get("/api/v1/pods", headers={
        "Accept": "application/vnd.kubernetes.protobuf,application/json"})
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json()["kind"] == "PodList"


def test_python_api_create_keeps_the_given_status(server: APIServer) -> None:
    created = server.create({**pod("running"), "status": {"phase": "Running"}})
    assert created["status"] == {"phase": "Running"}
    assert created["spec"]["schedulerName"] == "default-scheduler"


def test_bulk_load_gives_each_object_its_own_revision(client: httpx.Client, server: APIServer) -> None:
    start = server.revision
    server.load([pod(f"p{i}") for i in range(3)])
    body = client.get("/api/v1/pods").json()
    revs = sorted(int(i["metadata"]["resourceVersion"]) for i in body["items"])
    assert revs == [start + 1, start + 2, start + 3] and server.revision == start + 3


def test_namespaced_objects_are_not_reachable_without_their_namespace(client: httpx.Client) -> None:
    assert client.post("/api/v1/pods", json=pod("p")).status_code == 405
    assert client.get("/api/v1/pods/p").status_code == 404
    assert client.get("/api/v1/pods").status_code == 200
