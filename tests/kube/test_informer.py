"""Informers against an API server over HTTP: watch-list and LIST snapshots, paging, bookmarks,
relists with tombstones, malformed objects, dropped watches and server restarts."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

import pytest

from kubesched.cluster.kube.backoff import Backoff
from kubesched.cluster.kube.client import MAX_RETRIES, ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.informer import DeletedFinalStateUnknown, Informer, Resource
from kubesched.objects.pod import parse_pod
from tests.apiserver import APIServer

PODS = Resource("/api/v1/pods", "Pod", field_selector="status.phase!=Succeeded,status.phase!=Failed")
DEADLINE = 15.0


# --- helpers -------------------------------------------------------------------------------------


def pod(name: str, *, namespace: str = "ns", node: str = "", labels: dict[str, str] | None = None,
        cpu: str = "100m") -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": labels or {},
                         "managedFields": [{"manager": "kubectl"}]},
            "spec": {"nodeName": node, "schedulerName": "default-scheduler",
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": "Pending"}}


@dataclass(frozen=True)
class Item:
    """What the test parser makes of a pod: enough to check which version the handler saw."""

    key: str
    rv: str
    labels: dict[str, str]


def parse_item(raw: dict) -> Item:
    meta = raw["metadata"]
    if "managedFields" in meta:
        raise AssertionError("managedFields reached the parser")
    if meta.get("labels", {}).get("malformed"):
        raise ValueError("a malformed pod")
    return Item(f"{meta['namespace']}/{meta['name']}", meta["resourceVersion"], dict(meta.get("labels", {})))


class Recorder:
    """An EventHandler that records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def on_add(self, obj: object, is_in_initial_list: bool) -> None:
        self.calls.append(("add", obj, is_in_initial_list))

    def on_update(self, old: object, new: object) -> None:
        self.calls.append(("update", old, new))

    def on_delete(self, obj: object) -> None:
        self.calls.append(("delete", obj))

    async def wait_for(self, count: int) -> list[tuple]:
        """The first ``count`` calls, once made."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE
        while len(self.calls) < count:
            if loop.time() > deadline:
                raise AssertionError(f"expected {count} handler calls, got {self.calls}")
            await asyncio.sleep(0.01)
        return self.calls[:count]


async def until(condition: Callable[[], bool]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


Scenario = Callable[[APIServer, Informer, Recorder], Awaitable[None]]


def run_informer(server: APIServer, scenario: Scenario, *, parse: Callable[[dict], object] = parse_item,
                 **options: object) -> Recorder:
    recorder = Recorder()

    async def main() -> None:
        conn = Connection(server=server.url, ssl=None, token=lambda: "t", basic_auth=None, qps=0.0)
        async with ApiClient(conn) as client:
            informer: Informer = Informer(client, PODS, parse, recorder, backoff_initial=0.01,  # type: ignore[arg-type]
                                          **options)  # type: ignore[arg-type]
            task = asyncio.create_task(informer.run())
            try:
                await asyncio.wait_for(informer.wait_synced(), DEADLINE)
                await scenario(server, informer, recorder)
            finally:
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

    asyncio.run(main())
    return recorder


@pytest.fixture()
def server() -> Iterator[APIServer]:
    with APIServer(bookmark_interval=60.0) as srv:
        yield srv


def _queries(server: APIServer) -> list[dict[str, str]]:
    """The query of every GET of the pod collection, in order."""
    found = []
    for method, target in list(server.requests):
        parts = urlsplit(target)
        if method == "GET" and parts.path == PODS.path:
            found.append(dict(parse_qsl(parts.query)))
    return found


def _watch_requests(server: APIServer) -> list[dict[str, str]]:
    return [q for q in _queries(server) if q.get("watch") == "true"]


def _list_requests(server: APIServer) -> list[dict[str, str]]:
    return [q for q in _queries(server) if "watch" not in q]


def refuse_watch_list(server: APIServer) -> None:
    """Answer watch-list requests as a server with the WatchList feature off does (422 Invalid)."""
    server.faults.add(method="GET", path=r"sendInitialEvents=true", status=422, times=None)


# --- tests ---------------------------------------------------------------------------------------


def test_watch_list_delivers_existing_objects_as_initial_adds(server: APIServer) -> None:
    a, b = server.create(pod("a")), server.create(pod("b"))

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        assert informer.has_synced()
        assert sorted(i.key for i in informer.list()) == ["ns/a", "ns/b"]
        assert informer.get("ns/a") == Item("ns/a", a["metadata"]["resourceVersion"], {})
        assert informer.last_sync_resource_version == b["metadata"]["resourceVersion"]

    rec = run_informer(server, scenario)
    assert sorted((c[0], c[1].key, c[2]) for c in rec.calls) == [("add", "ns/a", True), ("add", "ns/b", True)]
    first = _watch_requests(server)[0]
    assert first["sendInitialEvents"] == "true"
    assert first["resourceVersionMatch"] == "NotOlderThan"
    assert first["allowWatchBookmarks"] == "true"
    assert first["fieldSelector"] == PODS.field_selector
    assert not _list_requests(server)


def test_watch_events_become_add_update_and_delete_calls(server: APIServer) -> None:
    server.create(pod("a"))

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(1)
        b = server.create(pod("b"))
        changed = pod("a", labels={"v": "2"})
        a2 = server.update(changed)
        server.delete("Pod", "ns", "b")  # pending: MODIFIED with its deletionTimestamp, then DELETED
        calls = await rec.wait_for(5)
        assert calls[1] == ("add", Item("ns/b", b["metadata"]["resourceVersion"], {}), False)
        assert calls[2][0] == "update" and calls[2][1].labels == {} and calls[2][2].labels == {"v": "2"}
        assert calls[2][2].rv == a2["metadata"]["resourceVersion"]
        assert calls[3][0] == "update" and calls[3][2].key == "ns/b"
        assert calls[4][0] == "delete" and calls[4][1].key == "ns/b"
        assert informer.get("ns/b") is None and informer.get("ns/a").labels == {"v": "2"}
        assert informer.last_sync_resource_version == str(int(a2["metadata"]["resourceVersion"]) + 2)

    run_informer(server, scenario)


def test_refused_watch_list_falls_back_to_a_list_which_at_resource_version_0_comes_whole(server: APIServer) -> None:
    refuse_watch_list(server)
    for name in "abcde":
        server.create(pod(name))
    listed_at = str(server.revision)

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        assert len(informer.list()) == 5
        assert informer.last_sync_resource_version == listed_at
        await until(lambda: len(_watch_requests(server)) == 2)

    rec = run_informer(server, scenario, page_size=2)
    assert sorted(c[1].key for c in rec.calls) == [f"ns/{n}" for n in "abcde"]
    assert all(c[0] == "add" and c[2] is True for c in rec.calls)
    lists = _list_requests(server)
    # As from a real server's watch cache: resourceVersion=0 ignores the limit, one page.
    assert [q.get("limit") for q in lists] == ["2"]
    assert lists[0]["resourceVersion"] == "0" and "continue" not in lists[0]
    # then a plain watch from the list's resourceVersion
    watch = _watch_requests(server)[-1]
    assert "sendInitialEvents" not in watch
    assert watch["resourceVersion"] == listed_at and watch["allowWatchBookmarks"] == "true"
    assert 300 <= int(watch["timeoutSeconds"]) < 600


def test_throttled_watch_list_is_retried_rather_than_abandoned(server: APIServer) -> None:
    server.create(pod("a"))
    # More 429s than the client's own Retry-After retries: the reflector backs off and retries.
    server.faults.add(method="GET", path=r"sendInitialEvents=true", status=429, retry_after=0, times=MAX_RETRIES + 2)

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        assert informer.list() == [Item("ns/a", informer.last_sync_resource_version, {})]

    run_informer(server, scenario)
    assert not _list_requests(server)
    assert len([q for q in _watch_requests(server) if q.get("sendInitialEvents")]) == MAX_RETRIES + 3


def test_list_mode_without_watch_list(server: APIServer) -> None:
    server.create(pod("a"))

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        server.create(pod("b"))
        await rec.wait_for(2)

    rec = run_informer(server, scenario, watch_list=False)
    assert [(c[0], c[1].key, c[2]) for c in rec.calls] == [("add", "ns/a", True), ("add", "ns/b", False)]
    assert not any(q.get("sendInitialEvents") for q in _watch_requests(server))


def test_a_consistent_list_is_paginated_and_an_expired_continue_token_lists_again_in_full(
        server: APIServer) -> None:
    for name in "abc":
        server.create(pod(name))
    # The cached list (resourceVersion=0) refused: the reflector reads consistently, in pages.
    server.faults.add(method="GET", path=r"resourceVersion=0", status=410, times=1)
    server.faults.add(method="GET", path=r"continue=", status=410, times=1)

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        assert len(informer.list()) == 3

    run_informer(server, scenario, watch_list=False, page_size=2)
    lists = _list_requests(server)
    assert len(lists) == 4
    assert lists[0]["resourceVersion"] == "0"
    assert lists[1]["limit"] == "2" and "resourceVersion" not in lists[1]
    assert "continue" in lists[2]
    assert "limit" not in lists[3] and "continue" not in lists[3] and "resourceVersion" not in lists[3]


def test_bookmarks_advance_the_resource_version() -> None:
    with APIServer(bookmark_interval=0.05) as server:
        server.create(pod("a"))

        async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
            synced = informer.last_sync_resource_version
            server.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})  # not a pod
            # A bookmark brings the server's newer revision without any pod event.
            await until(lambda: informer.last_sync_resource_version != synced)
            assert int(informer.last_sync_resource_version) > int(synced)
            assert len(rec.calls) == 1

        run_informer(server, scenario)


def test_relist_after_410_applies_missed_changes_with_tombstones(server: APIServer) -> None:
    server.create(pod("keep"))
    server.create(pod("gone"))
    server.create(pod("same"))
    synced: list[str] = []

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(3)
        gone = informer.get("ns/gone")
        synced.append(informer.last_sync_resource_version)
        await asyncio.sleep(1.1)  # a watch that lived over a second is reopened where it stopped
        # The next watch is held while the cluster changes and its history is compacted.
        server.faults.add(method="GET", path=r"watch=true", status=None, delay=0.5, times=1)
        server.drop_watches()
        await until(lambda: server.watch_count == 0)
        server.update(pod("keep", labels={"v": "2"}))
        server.delete("Pod", "ns", "gone")
        server.create(pod("new"))
        server.compact()
        calls = (await rec.wait_for(6))[3:]
        by_kind = {c[0]: c for c in calls}
        assert set(by_kind) == {"add", "update", "delete"}
        assert by_kind["add"][1].key == "ns/new" and by_kind["add"][2] is False
        assert by_kind["update"][1].labels == {} and by_kind["update"][2].labels == {"v": "2"}
        assert by_kind["delete"][1] == DeletedFinalStateUnknown("ns/gone", gone)
        await asyncio.sleep(0.1)
        assert len(rec.calls) == 6  # "same" kept its resourceVersion: no call
        assert sorted(i.key for i in informer.list()) == ["ns/keep", "ns/new", "ns/same"]

    run_informer(server, scenario)
    watches = _watch_requests(server)
    rewatch = [q for q in watches[1:] if "sendInitialEvents" not in q]
    assert rewatch and rewatch[0]["resourceVersion"] == synced[0]  # answered 410: compacted
    assert watches[-1]["sendInitialEvents"] == "true"  # hence a new snapshot


def test_a_watch_closed_at_once_without_events_leads_to_a_new_snapshot(server: APIServer) -> None:
    server.create(pod("a"))

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(1)
        server.drop_watches()  # within a second of opening: upstream's "very short watch"
        await until(lambda: len([q for q in _watch_requests(server) if q.get("sendInitialEvents")]) == 2)
        server.create(pod("b"))
        await rec.wait_for(2)

    rec = run_informer(server, scenario)
    assert [(c[0], c[1].key) for c in rec.calls] == [("add", "ns/a"), ("add", "ns/b")]  # "a" unchanged: no call


def test_malformed_objects_are_skipped_and_logged_once(server: APIServer,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    server.create(pod("good"))
    server.create(pod("bad", labels={"malformed": "yes"}))

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        server.update(pod("bad", labels={"malformed": "still"}))
        server.create(pod("after"))
        await rec.wait_for(2)
        assert informer.get("ns/bad") is None
        server.update(pod("bad"))  # fixed: now it is a pod like any other
        await rec.wait_for(3)
        assert informer.get("ns/bad") is not None

    with caplog.at_level(logging.WARNING, logger="kubesched.cluster.kube.informer"):
        rec = run_informer(server, scenario)
    assert [(c[0], c[1].key) for c in rec.calls] == [("add", "ns/good"), ("add", "ns/after"), ("add", "ns/bad")]
    warnings = [r.getMessage() for r in caplog.records if "ns/bad" in r.getMessage()]
    assert len(warnings) == 1 and "Pod" in warnings[0] and "a malformed pod" in warnings[0]


def test_watch_is_reopened_after_the_server_drops_it(server: APIServer) -> None:
    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        for round_ in range(3):
            server.drop_watches()
            server.create(pod(f"p{round_}"))
            await rec.wait_for(round_ + 1)

    rec = run_informer(server, scenario)
    assert [c[1].key for c in rec.calls] == ["ns/p0", "ns/p1", "ns/p2"]


def test_informer_recovers_from_a_server_restart(server: APIServer) -> None:
    server.create(pod("a"))

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(1)
        server.restart()
        server.create(pod("b"))
        server.update(pod("a", labels={"after": "restart"}))
        calls = await rec.wait_for(3)
        assert {(c[0], (c[2] if c[0] == "update" else c[1]).key) for c in calls[1:]} == {
            ("add", "ns/b"), ("update", "ns/a")}

    run_informer(server, scenario)


def test_throttled_watch_honours_retry_after_and_recovers(server: APIServer) -> None:
    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        server.faults.add(method="GET", path=r"watch=true", status=429, retry_after=0, times=3)
        server.drop_watches()
        server.create(pod("a"))
        await rec.wait_for(1)

    rec = run_informer(server, scenario)
    assert rec.calls[0][1].key == "ns/a"


def test_real_pod_parser_gets_objects_without_managed_fields(server: APIServer) -> None:
    server.create(pod("a", node="n1", cpu="250m"))

    async def scenario(server: APIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(1)

    rec = run_informer(server, scenario, parse=lambda raw: parse_pod(raw, keep_raw=False))
    info = rec.calls[0][1]
    assert (info.namespace, info.name, info.node_name, info.uid) == ("ns", "a", "n1", "uid-a")


# --- the reconnection backoff ---------------------------------------------------------------------


class _Rng:
    """random.Random stand-in returning a fixed draw."""

    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


def test_backoff_starts_at_800ms_and_doubles_up_to_30s() -> None:
    now = [0.0]
    backoff = Backoff(rng=_Rng(0.0), now=lambda: now[0])  # type: ignore[arg-type]
    delays = []
    for _ in range(8):
        delays.append(backoff.next())
        now[0] += 1.0
    assert delays == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0])


def test_backoff_jitter_adds_up_to_the_whole_delay() -> None:
    backoff = Backoff(rng=_Rng(0.5), now=lambda: 0.0)  # type: ignore[arg-type]
    assert backoff.next() == pytest.approx(1.2)  # 0.8 + 0.5 * 0.8
    assert backoff.next() == pytest.approx(2.4)


def test_backoff_resets_after_two_quiet_minutes() -> None:
    now = [0.0]
    backoff = Backoff(rng=_Rng(0.0), now=lambda: now[0])  # type: ignore[arg-type]
    backoff.next()
    backoff.next()
    now[0] += 121.0
    assert backoff.next() == pytest.approx(0.8)
