"""Watches: ordering, filtered transitions, bookmarks, WatchList, expiry and disconnects."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import httpx
import orjson
import pytest

from tests.apiserver import handlers
from tests.apiserver.conftest import pod, watch_events
from tests.apiserver.server import APIServer

PODS = "/api/v1/pods"


def later(action: Callable[[], object], delay: float = 0.2) -> threading.Timer:
    """Run ``action`` in the background shortly, while the test reads a stream."""
    timer = threading.Timer(delay, action)
    timer.daemon = True
    timer.start()
    return timer


def test_watch_from_a_revision_replays_later_events_in_order(client: httpx.Client, server: APIServer) -> None:
    start = server.revision
    server.create(pod("a"))
    got = server.get("Pod", "default", "a")
    assert got is not None
    got["metadata"]["labels"] = {"v": "2"}
    server.update(got)
    server.delete("Pod", "default", "a")
    events = watch_events(client, PODS, {"resourceVersion": str(start)}, 4)
    # A pending pod's deletion is graceful with period 0: MODIFIED (deletionTimestamp), then DELETED.
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
    revs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert revs == sorted(revs) and revs[-1] == server.revision
    assert events[0]["object"]["kind"] == "Pod"


def test_live_events_reach_an_open_watch(client: httpx.Client, server: APIServer) -> None:
    start = server.revision
    later(lambda: server.create(pod("live")))
    events = watch_events(client, PODS, {"resourceVersion": str(start)}, 1)
    assert (events[0]["type"], events[0]["object"]["metadata"]["name"]) == ("ADDED", "live")


def test_update_leaving_a_field_selector_is_sent_as_deleted(client: httpx.Client, server: APIServer) -> None:
    server.create(pod("p"))
    start = server.revision
    client.post("/api/v1/namespaces/default/pods/p/binding",
                json={"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}})
    events = watch_events(client, PODS, {"resourceVersion": str(start), "fieldSelector": "spec.nodeName="}, 1)
    assert events[0]["type"] == "DELETED"
    obj = events[0]["object"]
    assert "nodeName" not in obj["spec"]
    assert obj["metadata"]["resourceVersion"] == str(server.revision)


def test_update_entering_a_label_selector_is_sent_as_added(client: httpx.Client, server: APIServer) -> None:
    server.create(pod("p"))
    start = server.revision
    got = server.get("Pod", "default", "p")
    assert got is not None
    got["metadata"]["labels"] = {"team": "x"}
    server.update(got)
    events = watch_events(client, PODS, {"resourceVersion": str(start), "labelSelector": "team=x"}, 1)
    assert events[0]["type"] == "ADDED"


def test_events_for_objects_never_matching_are_not_sent(client: httpx.Client, server: APIServer) -> None:
    start = server.revision
    server.create(pod("other"))
    server.create(pod("mine", nodeName="n1"))
    events = watch_events(client, PODS, {"resourceVersion": str(start), "fieldSelector": "spec.nodeName=n1"}, 1)
    assert events[0]["object"]["metadata"]["name"] == "mine"


def test_bookmarks_carry_only_the_resource_version(client: httpx.Client, server: APIServer) -> None:
    server.create(pod("a"))
    events = watch_events(client, PODS, {"resourceVersion": str(server.revision), "allowWatchBookmarks": "true"}, 1)
    assert events[0] == {"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                        "metadata": {"resourceVersion": str(server.revision)}}}


def test_watch_ends_at_timeout_after_a_bookmark() -> None:
    quiet = APIServer(bookmark_interval=1000.0).start()
    try:
        with httpx.Client(base_url=quiet.url, timeout=10, verify=False) as http:
            events = watch_events(http, PODS, {"resourceVersion": str(quiet.revision), "allowWatchBookmarks": "true",
                                               "timeoutSeconds": "1"}, 100)
    finally:
        quiet.stop()
    assert [e["type"] for e in events] == ["BOOKMARK"]


def test_send_initial_events_replays_state_then_marks_its_end(client: httpx.Client, server: APIServer) -> None:
    server.create(pod("b"))
    server.create(pod("a"))
    at = server.revision
    later(lambda: server.create(pod("c")))
    events = watch_events(client, PODS, {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                                         "allowWatchBookmarks": "true"}, 100,
                          until=lambda e: e["object"]["metadata"].get("name") == "c")
    events = events[:3] + [e for e in events[3:] if e["type"] != "BOOKMARK"][:1]
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events] == [
        ("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", None), ("ADDED", "c")]
    assert events[2]["object"]["metadata"] == {"resourceVersion": str(at),
                                               "annotations": {"k8s.io/initial-events-end": "true"}}


def test_send_initial_events_without_not_older_than_is_invalid(client: httpx.Client) -> None:
    response = client.get(PODS, params={"watch": "true", "sendInitialEvents": "true"})
    assert response.status_code == 422
    assert response.json()["message"] == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                                          "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")


def test_watch_from_a_compacted_revision_gets_one_expired_error_event(client: httpx.Client,
                                                                      server: APIServer) -> None:
    old = server.revision
    server.create(pod("a"))
    server.compact()
    events = watch_events(client, PODS, {"resourceVersion": str(old)}, 5)
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["code"], status["reason"]) == (410, "Expired")
    assert status["message"] == f"too old resource version: {old} ({server.revision})"


def test_history_window_forgets_the_oldest_events(client: httpx.Client) -> None:
    small = APIServer(history=3).start()
    try:
        start = small.revision
        for i in range(5):
            small.create(pod(f"p{i}"))
        with httpx.Client(base_url=small.url, timeout=10, verify=False) as http:
            events = watch_events(http, PODS, {"resourceVersion": str(start)}, 1)
            recent = watch_events(http, PODS, {"resourceVersion": str(small.revision - 3)}, 3)
    finally:
        small.stop()
    assert events[0]["type"] == "ERROR"
    assert [e["object"]["metadata"]["name"] for e in recent] == ["p2", "p3", "p4"]


def test_drop_watches_ends_open_streams(client: httpx.Client, server: APIServer) -> None:
    later(server.drop_watches, 0.3)
    events = watch_events(client, PODS, {"resourceVersion": str(server.revision)}, 10)
    assert events == []


def test_restart_ends_watches_and_keeps_state(client: httpx.Client, server: APIServer) -> None:
    server.create(pod("kept"))
    port = server.port
    restarting = later(server.restart, 0.3)
    try:
        events = watch_events(client, PODS, {"resourceVersion": str(server.revision)}, 10)
    except httpx.HTTPError:
        events = []
    restarting.join(10)
    assert events == [] and server.port == port
    with httpx.Client(base_url=server.url, timeout=10, verify=False) as fresh:
        assert fresh.get("/api/v1/namespaces/default/pods/kept").status_code == 200


def test_namespaced_watch_sees_only_its_namespace(client: httpx.Client, server: APIServer) -> None:
    start = server.revision
    server.create(pod("x", "other"))
    server.create(pod("y", "mine"))
    events = watch_events(client, "/api/v1/namespaces/mine/pods", {"resourceVersion": str(start)}, 1)
    assert events[0]["object"]["metadata"]["name"] == "y"


def test_legacy_watch_from_zero_starts_with_current_state(client: httpx.Client, server: APIServer) -> None:
    server.create(pod("a"))
    events = watch_events(client, PODS, {"resourceVersion": "0"}, 1)
    assert (events[0]["type"], events[0]["object"]["metadata"]["name"]) == ("ADDED", "a")


def test_watch_frames_are_one_json_object_per_line(client: httpx.Client, server: APIServer) -> None:
    start = server.revision
    server.create(pod("a"))
    with client.stream("GET", PODS, params={"watch": "1", "resourceVersion": str(start)}) as response:
        line = next(response.iter_lines())
    assert orjson.loads(line)["type"] == "ADDED"


def test_watch_from_a_future_revision_waits_for_it(client: httpx.Client, server: APIServer) -> None:
    future = server.revision + 1
    later(lambda: (server.create(pod("skipped")), server.create(pod("seen"))))
    events = watch_events(client, PODS, {"resourceVersion": str(future)}, 1)
    assert events[0]["object"]["metadata"]["name"] == "seen"


def test_watch_list_from_a_future_revision_ends_with_a_timeout_error(
        client: httpx.Client, server: APIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "TOO_LARGE_WAIT", 0.05)
    events = watch_events(client, PODS, {"resourceVersion": str(server.revision + 5), "sendInitialEvents": "true",
                                         "resourceVersionMatch": "NotOlderThan", "allowWatchBookmarks": "true"}, 5)
    assert [(e["type"], e["object"]["code"]) for e in events] == [("ERROR", 504)]


def test_aborted_watches_break_the_connection(client: httpx.Client, server: APIServer) -> None:
    later(lambda: server.drop_watches(abort=True), 0.3)
    try:
        watch_events(client, PODS, {"resourceVersion": str(server.revision)}, 10)
        broken = False
    except httpx.HTTPError:
        broken = True
    assert broken


def test_a_watch_closed_by_its_client_is_forgotten(server: APIServer) -> None:
    with httpx.Client(base_url=server.url, timeout=10, verify=False) as http:
        with http.stream("GET", PODS, params={"watch": "1", "resourceVersion": str(server.revision)}):
            assert wait_for(lambda: server.watch_count == 1)
    assert wait_for(lambda: server.watch_count == 0)


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``condition`` (generous timeout only to avoid hanging)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
