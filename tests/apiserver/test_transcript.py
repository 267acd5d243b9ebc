"""The test server answers as the real kube-apiserver v1.36.2 of ``transcript/`` did,
where the answer changes what kubesched does: each spec replays a recorded request
(or its scenario) and compares the test server's answer with the recorded one."""

from __future__ import annotations

import re
from typing import Any

import httpx
import orjson
import pytest

from tests.apiserver import handlers
from tests.apiserver.conftest import watch_events
from tests.apiserver.server import APIServer
from tests.apiserver.transcript import Exchange, exchange

TX = "/api/v1/namespaces/tx/pods"
MANAGED_ENTRY_KEYS = {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"}


def _seed_recorded_pods(server: APIServer) -> list[dict[str, Any]]:
    """The recording's pods (namespace tx, nothing schedules them), created anew here."""
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tx"}})
    pods = exchange(4).json()["items"]
    for item in pods:
        md = item["metadata"]
        server.create({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": md["name"], "namespace": md["namespace"], "labels": md.get("labels", {})},
                       "spec": item["spec"], "status": {"phase": "Pending"}})
    return pods


def _send(client: httpx.Client, recorded: Exchange, **params: str) -> httpx.Response:
    query = {**recorded.query, **params}
    body = recorded.request_body or None
    headers = {"Content-Type": recorded.request_headers["content-type"]} if body else {}
    return client.request(recorded.method, recorded.path, params=query, content=body, headers=headers)


def _masked(text: str) -> str:
    """Revisions, UIDs and times differ between two servers; the rest must not."""
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uid>", text)
    return re.sub(r"\d+", "<n>", text)


def test_a_first_list_at_resource_version_0_returns_every_item_whatever_the_limit(
        client: httpx.Client, server: APIServer) -> None:
    recorded = exchange(4)
    assert recorded.query["resourceVersion"] == "0" and recorded.query["limit"] == "5"
    pods = _seed_recorded_pods(server)
    body = _send(client, recorded).json()
    assert len(body["items"]) == len(pods) == len(recorded.json()["items"]) > 5
    assert "continue" not in body["metadata"] and "continue" not in recorded.json()["metadata"]


@pytest.mark.parametrize("number", [33, 42], ids=["priority-and-fairness", "max-in-flight"])
def test_too_many_requests_is_plain_text_with_retry_after(client: httpx.Client, server: APIServer,
                                                          number: int) -> None:
    recorded = exchange(number)
    server.faults.add(method="GET", path=recorded.path, status=429,
                      retry_after=int(recorded.response_headers["retry-after"]))
    response = _send(client, recorded)
    assert response.status_code == recorded.status == 429
    for header in ("content-type", "retry-after", "x-content-type-options"):
        assert response.headers[header] == recorded.response_headers[header]
    assert response.content.strip() == recorded.body.strip()


def test_a_list_at_a_future_resource_version_is_504_with_retry_after(client: httpx.Client, server: APIServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "TOO_LARGE_WAIT", 0.05)
    recorded = exchange(31)
    response = _send(client, recorded)
    assert response.status_code == recorded.status == 504
    assert response.headers["Retry-After"] == recorded.response_headers["retry-after"] == "1"
    assert _masked(response.text) == _masked(recorded.body.decode())


def test_a_watch_from_a_future_resource_version_sends_nothing(client: httpx.Client, server: APIServer) -> None:
    recorded = exchange(32)
    assert recorded.events() == []
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tx"}})
    response = _send(client, recorded, timeoutSeconds="1")  # the recording waited 5 s; bookmarks here come each 0.2 s
    assert response.status_code == recorded.status == 200
    assert response.content == b""


def test_deleting_a_pending_pod_is_a_modified_event_with_its_deletion_timestamp_then_deleted(
        client: httpx.Client, server: APIServer) -> None:
    recorded = exchange(6)
    name = "p-12"
    real = [(e["type"], e["object"]["metadata"]) for e in recorded.events()
            if e["type"] != "BOOKMARK" and e["object"]["metadata"]["name"] == name][1:]  # after its ADDED
    assert [kind for kind, _ in real] == ["MODIFIED", "DELETED"]
    _seed_recorded_pods(server)
    start = server.revision
    server.delete("Pod", "tx", name)
    events = watch_events(client, TX, {"resourceVersion": str(start)}, 2)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    for event, (_, real_meta) in zip(events, real):
        md = event["object"]["metadata"]
        assert md["deletionGracePeriodSeconds"] == real_meta["deletionGracePeriodSeconds"] == 0
        assert md["deletionTimestamp"] and real_meta["deletionTimestamp"]


def test_an_event_without_event_time_is_rejected_as_the_real_server_rejects_it(client: httpx.Client,
                                                                              server: APIServer) -> None:
    recorded = exchange(18)
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tx"}})
    response = _send(client, recorded)
    assert response.status_code == recorded.status == 422
    assert response.json() == recorded.json()


def test_a_compacted_revision_is_served_from_the_watch_cache_until_the_server_restarts(
        client: httpx.Client, server: APIServer) -> None:
    assert (exchange(26).status, exchange(27).status) == (200, 200)  # compacted, not restarted
    assert (exchange(35).status, exchange(36).status) == (410, 410)  # compacted, then restarted
    _seed_recorded_pods(server)
    first = client.get(TX, params={"limit": "2"}).json()
    token, then = first["metadata"]["continue"], first["metadata"]["resourceVersion"]
    server.delete("Pod", "tx", "p-12")
    server.compact_etcd()
    kept = client.get(TX, params={"limit": "2", "continue": token})
    exact = client.get(TX, params={"resourceVersion": then, "resourceVersionMatch": "Exact"})
    assert (kept.status_code, exact.status_code) == (200, 200)
    assert [i["metadata"]["name"] for i in kept.json()["items"]] == [
        i["metadata"]["name"] for i in exchange(26).json()["items"]]
    server.restart()
    with httpx.Client(base_url=server.url, timeout=10.0, verify=False) as again:
        expired = again.get(TX, params={"limit": "2", "continue": token})
        gone = again.get(TX, params={"resourceVersion": then, "resourceVersionMatch": "Exact"})
        watched = watch_events(again, TX, {"resourceVersion": then}, 1)
    assert expired.status_code == 410 and _masked(expired.json()["message"]) == _masked(exchange(35).json()["message"])
    assert "continue" in expired.json()["metadata"] and "continue" in exchange(35).json()["metadata"]
    assert gone.status_code == 410 and _masked(gone.text) == _masked(exchange(36).body.decode())
    real_error = exchange(38).events()
    assert [e["type"] for e in watched] == [e["type"] for e in real_error] == ["ERROR"]
    assert _masked(orjson.dumps(watched[0]).decode()) == _masked(orjson.dumps(real_error[0]).decode())


def test_objects_carry_managed_fields_as_the_real_servers_do(client: httpx.Client, server: APIServer) -> None:
    recorded = exchange(12)
    _seed_recorded_pods(server)
    patched = client.patch(recorded.path, content=recorded.request_body,
                           headers={"Content-Type": recorded.request_headers["content-type"],
                                    "User-Agent": recorded.request_headers["user-agent"]}).json()
    real_entries = recorded.json()["metadata"]["managedFields"]
    entries = patched["metadata"]["managedFields"]
    assert [set(e) for e in entries][-1] == set(real_entries[-1]) == MANAGED_ENTRY_KEYS | {"subresource"}
    assert set(entries[0]) == set(real_entries[0]) == MANAGED_ENTRY_KEYS
    status_entry = entries[-1]
    assert (status_entry["manager"], status_entry["subresource"]) == ("kubesched", "status")
    assert _keys(status_entry["fieldsV1"]["f:status"]["f:conditions"]) == \
        _keys(real_entries[-1]["fieldsV1"]["f:status"]["f:conditions"])
    real_spec = real_entries[0]["fieldsV1"]["f:spec"]["f:containers"]
    assert _keys(entries[0]["fieldsV1"]["f:spec"]["f:containers"]) == _keys(real_spec)


def _keys(fields: dict[str, Any]) -> set[str]:
    """A FieldsV1 level's members (its "." marker, which lists carry or not, left out)."""
    return set(fields) - {"."}


def test_a_created_pod_carries_the_defaults_the_real_server_adds(client: httpx.Client, server: APIServer) -> None:
    real = exchange(6).events()[0]["object"]
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tx"}})
    spec = {"containers": [{"name": c["name"], "image": c["image"], "resources": c["resources"]}
                           for c in real["spec"]["containers"]], "schedulerName": "nobody"}
    created = client.post(TX, json={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": real["metadata"]["labels"]},
                                    "spec": spec}).json()
    assert set(created["spec"]["containers"][0]) == set(real["spec"]["containers"][0])
    assert set(created["spec"]) >= set(real["spec"]) - {"terminationGracePeriodSeconds"}
    assert created["spec"]["securityContext"] == real["spec"]["securityContext"] == {}
    assert set(created["metadata"]) == set(real["metadata"])
