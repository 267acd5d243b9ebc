"""Lists: order, paging and continue, resourceVersion semantics, selectors."""

from __future__ import annotations

import httpx
import pytest

from tests.apiserver import handlers
from tests.apiserver.conftest import pod
from tests.apiserver.listing import CONTINUE_TOO_OLD, LIST_TOO_OLD
from tests.apiserver.server import APIServer

PODS = "/api/v1/pods"


def seed(server: APIServer, names: list[tuple[str, str]]) -> None:
    for namespace, name in names:
        server.create(pod(name, namespace))


def names(body: dict[str, object]) -> list[str]:
    items = body["items"]
    assert isinstance(items, list)
    return [f'{i["metadata"]["namespace"]}/{i["metadata"]["name"]}' for i in items]


def test_items_are_sorted_by_namespace_then_name(client: httpx.Client, server: APIServer) -> None:
    seed(server, [("b", "x"), ("a", "z"), ("a", "y")])
    assert names(client.get(PODS).json()) == ["a/y", "a/z", "b/x"]


def test_list_items_carry_no_kind_and_the_list_does(client: httpx.Client, server: APIServer) -> None:
    seed(server, [("a", "x")])
    body = client.get(PODS).json()
    assert (body["kind"], body["apiVersion"]) == ("PodList", "v1")
    assert "kind" not in body["items"][0] and "apiVersion" not in body["items"][0]
    assert body["metadata"]["resourceVersion"] == str(server.revision)


def test_namespaced_list_sees_only_its_namespace(client: httpx.Client, server: APIServer) -> None:
    seed(server, [("a", "x"), ("b", "y")])
    assert names(client.get("/api/v1/namespaces/b/pods").json()) == ["b/y"]


def test_paging_returns_one_consistent_snapshot(client: httpx.Client, server: APIServer) -> None:
    seed(server, [("a", f"p{i}") for i in range(5)])
    first = client.get(PODS, params={"limit": "2"}).json()
    assert first["metadata"]["remainingItemCount"] == 3
    server.create(pod("p0a", "a"))
    server.delete("Pod", "a", "p3")
    second = client.get(PODS, params={"limit": "2", "continue": first["metadata"]["continue"]}).json()
    third = client.get(PODS, params={"limit": "2", "continue": second["metadata"]["continue"]}).json()
    assert names(first) + names(second) + names(third) == [f"a/p{i}" for i in range(5)]
    assert "continue" not in third["metadata"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_remaining_item_count_is_omitted_with_a_selector(client: httpx.Client, server: APIServer) -> None:
    seed(server, [("a", f"p{i}") for i in range(4)])
    body = client.get(PODS, params={"limit": "1", "labelSelector": "app=a"}).json()
    assert "continue" in body["metadata"] and "remainingItemCount" not in body["metadata"]


def test_continue_from_a_compacted_revision_is_expired_with_a_fresh_token(client: httpx.Client,
                                                                         server: APIServer) -> None:
    seed(server, [("a", f"p{i}") for i in range(3)])
    first = client.get(PODS, params={"limit": "1"}).json()
    server.create(pod("p9", "a"))
    server.compact()
    response = client.get(PODS, params={"limit": "1", "continue": first["metadata"]["continue"]})
    body = response.json()
    assert (response.status_code, body["reason"], body["message"]) == (410, "Expired", CONTINUE_TOO_OLD)
    rest = client.get(PODS, params={"continue": body["metadata"]["continue"]}).json()
    assert names(rest) == ["a/p1", "a/p2", "a/p9"]
    assert rest["metadata"]["resourceVersion"] == str(server.revision)


def test_exact_list_is_served_from_history(client: httpx.Client, server: APIServer) -> None:
    seed(server, [("a", "x")])
    then = server.revision
    seed(server, [("a", "y")])
    server.delete("Pod", "a", "x")
    body = client.get(PODS, params={"resourceVersion": str(then), "resourceVersionMatch": "Exact"}).json()
    assert names(body) == ["a/x"]
    assert body["metadata"]["resourceVersion"] == str(then)


def test_exact_list_at_a_compacted_revision_is_expired(client: httpx.Client, server: APIServer) -> None:
    seed(server, [("a", "x")])
    then = server.revision
    seed(server, [("a", "y")])
    server.compact()
    response = client.get(PODS, params={"resourceVersion": str(then), "resourceVersionMatch": "Exact"})
    assert (response.status_code, response.json()["reason"], response.json()["message"]) == (410, "Expired",
                                                                                            LIST_TOO_OLD)


def test_resource_version_zero_and_not_older_than_serve_current_state(client: httpx.Client,
                                                                     server: APIServer) -> None:
    seed(server, [("a", "x")])
    old = server.revision
    seed(server, [("a", "y")])
    for params in ({"resourceVersion": "0"}, {"resourceVersion": str(old)},
                   {"resourceVersion": str(old), "resourceVersionMatch": "NotOlderThan"}):
        assert names(client.get(PODS, params=params).json()) == ["a/x", "a/y"]


def test_not_older_than_a_future_revision_times_out(client: httpx.Client, server: APIServer,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "TOO_LARGE_WAIT", 0.05)
    response = client.get(PODS, params={"resourceVersion": str(server.revision + 10)})
    assert (response.status_code, response.json()["reason"]) == (504, "Timeout")
    assert response.json()["message"].startswith("Timeout: Too large resource version")
    assert response.headers["Retry-After"] == "1"


def test_resource_version_match_without_resource_version_is_invalid(client: httpx.Client) -> None:
    response = client.get(PODS, params={"resourceVersionMatch": "NotOlderThan"})
    assert response.status_code == 422
    assert response.json()["message"] == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                                          "resourceVersionMatch is forbidden unless resourceVersion is provided")


def test_field_selector_on_node_name(client: httpx.Client, server: APIServer) -> None:
    server.create(pod("bound", "a", nodeName="n1"))
    server.create(pod("pending", "a"))
    unassigned = client.get(PODS, params={"fieldSelector": "spec.nodeName="}).json()
    assigned = client.get(PODS, params={"fieldSelector": "spec.nodeName!=,status.phase!=Succeeded"}).json()
    assert (names(unassigned), names(assigned)) == (["a/pending"], ["a/bound"])


def test_unknown_pod_field_is_bad_request(client: httpx.Client) -> None:
    response = client.get(PODS, params={"fieldSelector": "spec.bogus=x"})
    assert response.status_code == 400
    assert response.json()["message"] == "field label not supported: spec.bogus"


def test_unknown_field_on_a_plain_resource_names_the_supported_ones(client: httpx.Client) -> None:
    response = client.get("/api/v1/configmaps", params={"fieldSelector": "data.x=1"})
    assert response.status_code == 400
    assert response.json()["message"] == ('"data.x" is not a known field selector: only "metadata.name", '
                                          '"metadata.namespace"')


def test_set_based_label_selector(client: httpx.Client, server: APIServer) -> None:
    for name, labels in (("x", {"tier": "web"}), ("y", {"tier": "db"}), ("z", {})):
        server.create({**pod(name, "a"), "metadata": {"name": name, "namespace": "a", "labels": labels}})
    assert names(client.get(PODS, params={"labelSelector": "tier in (web,db)"}).json()) == ["a/x", "a/y"]
    assert names(client.get(PODS, params={"labelSelector": "tier notin (web)"}).json()) == ["a/y", "a/z"]
    assert names(client.get(PODS, params={"labelSelector": "!tier"}).json()) == ["a/z"]
