"""Informers against an API server over HTTP: watch-list and LIST snapshots, paging, bookmarks,
relists with tombstones, malformed objects, dropped watches and server restarts."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.informer import DeletedFinalStateUnknown, Informer, Resource
from kubesched.objects.pod import parse_pod

PODS = Resource("/api/v1/pods", "Pod", field_selector="status.phase!=Succeeded,status.phase!=Failed")
DEADLINE = 15.0


# --- a small API server: pods only, watch history, compaction, faults ----------------------------


@dataclass
class _Fault:
    method: str | None
    path: re.Pattern[str]
    status: int | None
    retry_after: int | None
    times: int | None
    delay: float


@dataclass
class _Faults:
    rules: list[_Fault] = field(default_factory=list)

    def add(self, *, method: str | None = None, path: str = "", status: int | None = 500,
            retry_after: int | None = None, times: int | None = 1, delay: float = 0.0) -> None:
        self.rules.append(_Fault(method, re.compile(path), status, retry_after, times, delay))

    def take(self, method: str, target: str) -> _Fault | None:
        for rule in self.rules:
            if (rule.times is None or rule.times > 0) and rule.method in (None, method) and rule.path.search(target):
                if rule.times is not None:
                    rule.times -= 1
                return rule
        return None


def _status(code: int, reason: str, message: str, retry_after: int | None = None) -> web.Response:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
                              "reason": reason, "message": message}, status=code, headers=headers)


class FakeAPIServer:
    """Pods at /api/v1/pods with kube-apiserver's list/watch semantics, on its own thread."""

    def __init__(self, *, watch_list: bool = True, bookmark_interval: float = 0.0) -> None:
        self.watch_list = watch_list
        self.bookmark_interval = bookmark_interval
        self.faults = _Faults()
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._objects: dict[str, dict] = {}
        self._history: list[tuple[int, str, dict]] = []
        self._rv = 1
        self._compacted = 0
        self._watchers: list[asyncio.Queue[bytes | None]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    # lifecycle
    def start(self) -> FakeAPIServer:
        self._thread.start()
        self._call(self._start_site())
        return self

    def stop(self) -> None:
        self._call(self._stop_site())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _call(self, coro: Awaitable[object]) -> object:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)  # type: ignore[arg-type]

    async def _start_site(self) -> None:
        app = web.Application(middlewares=[self._middleware])
        app.router.add_get("/api/v1/pods", self._pods)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _stop_site(self) -> None:
        self._drop()
        if self._runner is not None:
            await self._runner.cleanup()

    def restart(self) -> None:
        self._call(self._stop_site())
        self._call(self._start_site())

    # mutations (from the test thread)
    def create(self, obj: dict) -> dict:
        return self._call(self._write("ADDED", obj))  # type: ignore[return-value]

    def update(self, obj: dict) -> dict:
        return self._call(self._write("MODIFIED", obj))  # type: ignore[return-value]

    def delete(self, kind: str, namespace: str, name: str) -> None:
        self._call(self._write("DELETED", self._objects[f"{namespace}/{name}"]))

    def compact(self) -> None:
        async def compact() -> None:
            self._compacted = self._rv
            self._history.clear()
        self._call(compact())

    def drop_watches(self) -> None:
        async def drop() -> None:
            self._drop()
        self._call(drop())

    def expire_watches(self) -> None:
        """Send every open watch an ERROR event with a 410 Expired Status, as a lagging watch cache does."""
        async def expire() -> None:
            frame = _frame("ERROR", {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410,
                                     "reason": "Expired", "message": "too old resource version"})
            for queue in self._watchers:
                queue.put_nowait(frame)
        self._call(expire())

    def _drop(self) -> None:
        for queue in self._watchers:
            queue.put_nowait(None)
        self._watchers.clear()

    async def _write(self, kind: str, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        self._rv += 1
        meta = obj.setdefault("metadata", {})
        meta["resourceVersion"] = str(self._rv)
        key = f"{meta.get('namespace', '')}/{meta['name']}"
        if kind == "DELETED":
            del self._objects[key]
        else:
            self._objects[key] = obj
        self._history.append((self._rv, kind, obj))
        frame = _frame(kind, obj)
        for queue in self._watchers:
            queue.put_nowait(frame)
        return obj

    # HTTP
    @web.middleware
    async def _middleware(self, request: web.Request, handler: Callable) -> web.StreamResponse:
        self.requests.append((request.method, request.path, dict(request.query)))
        fault = self.faults.take(request.method, request.path_qs)
        if fault is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)
            if fault.status is not None:
                return _status(fault.status, "InternalError" if fault.status >= 500 else "Injected",
                               "injected fault", fault.retry_after)
        return await handler(request)

    async def _pods(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") in ("true", "1"):
            return await self._watch(request)
        query = request.query
        limit = int(query.get("limit") or 0)
        start, list_rv = 0, self._rv
        if query.get("continue"):
            offset, _, rv = query["continue"].partition(":")
            start, list_rv = int(offset), int(rv)
            if list_rv < self._compacted:
                return _status(410, "Expired", "The provided continue parameter is too old")
        items = [self._objects[k] for k in sorted(self._objects)]
        page = items[start:start + limit] if limit else items[start:]
        meta: dict[str, object] = {"resourceVersion": str(list_rv)}
        if limit and start + limit < len(items):
            meta["continue"] = f"{start + limit}:{list_rv}"
        return web.json_response({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": page})

    async def _watch(self, request: web.Request) -> web.StreamResponse:
        query = request.query
        frames: list[bytes] = []
        if query.get("sendInitialEvents") == "true":
            if not self.watch_list:
                return _status(422, "Invalid", "sendInitialEvents is forbidden for watch unless the WatchList "
                                               "feature gate is enabled")
            frames = [_frame("ADDED", self._objects[k]) for k in sorted(self._objects)]
            frames.append(_frame("BOOKMARK", {"kind": "Pod", "metadata": {
                "resourceVersion": str(self._rv), "annotations": {"k8s.io/initial-events-end": "true"}}}))
        else:
            since = int(query.get("resourceVersion") or self._rv)
            if since < self._compacted:
                return _status(410, "Expired", f"too old resource version: {since} ({self._compacted})")
            frames = [_frame(kind, obj) for rv, kind, obj in self._history if rv > since]
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        for frame in frames:
            queue.put_nowait(frame)
        self._watchers.append(queue)
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        try:
            while True:
                try:
                    timeout = self.bookmark_interval or None
                    frame = await asyncio.wait_for(queue.get(), timeout)
                except asyncio.TimeoutError:
                    if query.get("allowWatchBookmarks") == "true":
                        frame = _frame("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": str(self._rv)}})
                    else:
                        continue
                if frame is None:
                    break
                await response.write(frame)
        finally:
            if queue in self._watchers:
                self._watchers.remove(queue)
        return response


def _frame(kind: str, obj: dict) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


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


Scenario = Callable[[FakeAPIServer, Informer, Recorder], Awaitable[None]]


def run_informer(server: FakeAPIServer, scenario: Scenario, *, parse: Callable[[dict], object] = parse_item,
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
def server() -> FakeAPIServer:
    srv = FakeAPIServer().start()
    yield srv  # type: ignore[misc]
    srv.stop()


def _watch_requests(server: FakeAPIServer) -> list[dict[str, str]]:
    return [q for m, p, q in server.requests if q.get("watch") == "true"]


def _list_requests(server: FakeAPIServer) -> list[dict[str, str]]:
    return [q for m, p, q in server.requests if "watch" not in q]


# --- tests ---------------------------------------------------------------------------------------


def test_watch_list_delivers_existing_objects_as_initial_adds(server: FakeAPIServer) -> None:
    a, b = server.create(pod("a")), server.create(pod("b"))

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
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


def test_watch_events_become_add_update_and_delete_calls(server: FakeAPIServer) -> None:
    server.create(pod("a"))

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(1)
        b = server.create(pod("b"))
        changed = pod("a", labels={"v": "2"})
        a2 = server.update(changed)
        server.delete("Pod", "ns", "b")
        calls = await rec.wait_for(4)
        assert calls[1] == ("add", Item("ns/b", b["metadata"]["resourceVersion"], {}), False)
        assert calls[2][0] == "update" and calls[2][1].labels == {} and calls[2][2].labels == {"v": "2"}
        assert calls[2][2].rv == a2["metadata"]["resourceVersion"]
        assert calls[3][0] == "delete" and calls[3][1].key == "ns/b"
        assert informer.get("ns/b") is None and informer.get("ns/a").labels == {"v": "2"}
        assert informer.last_sync_resource_version == str(int(a2["metadata"]["resourceVersion"]) + 1)

    run_informer(server, scenario)


def test_refused_watch_list_falls_back_to_a_paginated_list() -> None:
    server = FakeAPIServer(watch_list=False).start()
    try:
        for name in "abcde":
            server.create(pod(name))

        async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
            assert len(informer.list()) == 5

        rec = run_informer(server, scenario, page_size=2)
    finally:
        server.stop()
    assert sorted(c[1].key for c in rec.calls) == [f"ns/{n}" for n in "abcde"]
    assert all(c[0] == "add" and c[2] is True for c in rec.calls)
    lists = _list_requests(server)
    assert [q.get("limit") for q in lists] == ["2", "2", "2"]
    assert lists[0]["resourceVersion"] == "0" and "continue" not in lists[0]
    assert "continue" in lists[1] and "resourceVersion" not in lists[1]
    # then a plain watch from the list's resourceVersion
    watch = _watch_requests(server)[-1]
    assert watch["resourceVersion"] == "6" and watch["allowWatchBookmarks"] == "true"
    assert 300 <= int(watch["timeoutSeconds"]) < 600


def test_list_mode_without_watch_list(server: FakeAPIServer) -> None:
    server.create(pod("a"))

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        server.create(pod("b"))
        await rec.wait_for(2)

    rec = run_informer(server, scenario, watch_list=False)
    assert [(c[0], c[1].key, c[2]) for c in rec.calls] == [("add", "ns/a", True), ("add", "ns/b", False)]
    assert not any(q.get("sendInitialEvents") for q in _watch_requests(server))


def test_expired_continue_token_lists_again_in_full(server: FakeAPIServer) -> None:
    for name in "abc":
        server.create(pod(name))
    server.faults.add(method="GET", path=r"continue=", status=410, times=1)

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        assert len(informer.list()) == 3

    run_informer(server, scenario, watch_list=False, page_size=2)
    lists = _list_requests(server)
    assert len(lists) == 3
    assert "continue" in lists[1]
    assert "limit" not in lists[2] and "continue" not in lists[2] and lists[2]["resourceVersion"] == "0"


def test_bookmarks_advance_the_resource_version() -> None:
    server = FakeAPIServer(bookmark_interval=0.05).start()
    try:
        server.create(pod("a"))

        async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
            synced = informer.last_sync_resource_version
            server.create(pod("other", namespace="elsewhere"))
            await rec.wait_for(2)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + DEADLINE
            # Bookmarks carry the server's latest version even without further events.
            while informer.last_sync_resource_version == synced and loop.time() < deadline:
                await asyncio.sleep(0.01)
            assert int(informer.last_sync_resource_version) > int(synced)

        run_informer(server, scenario)
    finally:
        server.stop()


def test_relist_after_410_applies_missed_changes_with_tombstones(server: FakeAPIServer) -> None:
    server.create(pod("keep"))
    server.create(pod("gone"))
    server.create(pod("same"))

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(3)
        gone = informer.get("ns/gone")
        await asyncio.sleep(1.1)  # a watch that lived over a second is reopened where it stopped
        # The next watch is held while the cluster changes and its history is compacted.
        server.faults.add(method="GET", path=r"watch=true", status=None, delay=0.5, times=1)
        server.drop_watches()
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
    assert rewatch and rewatch[0]["resourceVersion"] == "4"  # answered 410: compacted
    assert watches[-1]["sendInitialEvents"] == "true"  # hence a new snapshot


def test_error_event_in_the_watch_leads_to_a_new_snapshot(server: FakeAPIServer) -> None:
    server.create(pod("a"))

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(1)
        server.expire_watches()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE
        while len([q for q in _watch_requests(server) if q.get("sendInitialEvents")]) < 2:
            assert loop.time() < deadline, "no new snapshot"
            await asyncio.sleep(0.01)
        server.create(pod("b"))
        await rec.wait_for(2)

    rec = run_informer(server, scenario)
    assert [(c[0], c[1].key) for c in rec.calls] == [("add", "ns/a"), ("add", "ns/b")]  # "a" unchanged: no call


def test_malformed_objects_are_skipped_and_logged_once(server: FakeAPIServer,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    server.create(pod("good"))
    server.create(pod("bad", labels={"malformed": "yes"}))

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
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


def test_watch_is_reopened_after_the_server_drops_it(server: FakeAPIServer) -> None:
    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        for round_ in range(3):
            server.drop_watches()
            server.create(pod(f"p{round_}"))
            await rec.wait_for(round_ + 1)

    rec = run_informer(server, scenario)
    assert [c[1].key for c in rec.calls] == ["ns/p0", "ns/p1", "ns/p2"]


def test_informer_recovers_from_a_server_restart(server: FakeAPIServer) -> None:
    server.create(pod("a"))

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(1)
        server.restart()
        server.create(pod("b"))
        server.update(pod("a", labels={"after": "restart"}))
        calls = await rec.wait_for(3)
        assert {(c[0], (c[2] if c[0] == "update" else c[1]).key) for c in calls[1:]} == {
            ("add", "ns/b"), ("update", "ns/a")}

    run_informer(server, scenario)


def test_throttled_watch_honours_retry_after_and_recovers(server: FakeAPIServer) -> None:
    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        server.faults.add(method="GET", path=r"watch=true", status=429, retry_after=0, times=3)
        server.drop_watches()
        server.create(pod("a"))
        await rec.wait_for(1)

    rec = run_informer(server, scenario)
    assert rec.calls[0][1].key == "ns/a"


def test_real_pod_parser_gets_objects_without_managed_fields(server: FakeAPIServer) -> None:
    server.create(pod("a", node="n1", cpu="250m"))

    async def scenario(server: FakeAPIServer, informer: Informer, rec: Recorder) -> None:
        await rec.wait_for(1)

    rec = run_informer(server, scenario, parse=lambda raw: parse_pod(raw, keep_raw=False))
    info = rec.calls[0][1]
    assert (info.namespace, info.name, info.node_name, info.uid) == ("ns", "a", "n1", "uid-a")
