"""APIServer: the test server in its own thread and event loop, with a synchronous API.

Tests are synchronous; the server runs aiohttp on a private loop in a daemon
thread. State changes made through the Python API are applied under the store
lock from the caller's thread and reach watches in revision order through the
hub, exactly as writes arriving over HTTP do.
"""

from __future__ import annotations

import asyncio
import builtins
import threading
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

from tests.apiserver import writes
from tests.apiserver.control import Controls
from tests.apiserver.faults import Faults
from tests.apiserver.handlers import Api, build_app
from tests.apiserver.resources import object_key, resource_for
from tests.apiserver.storage import JSONDict, Store, clone, meta
from tests.apiserver.tls import server_context
from tests.apiserver.watch import Hub
from tests.apiserver.workload_resources import DEFAULT_GATES

_TIMEOUT = 30.0

# What the Python API hands tests: decoded JSON, indexed freely (as the brief's ``dict``).
Obj = dict[str, Any]


class APIServer:
    """A loopback kube-apiserver stand-in; ``start()`` binds 127.0.0.1 (port 0 = any free port)."""

    def __init__(self, *, bookmark_interval: float = 1.0, history: int = 100_000, port: int = 0,
                 tls: bool = False, feature_gates: frozenset[str] = DEFAULT_GATES) -> None:
        """``tls``: serve HTTPS with the certificate in ``tls/`` (clients trust ``tls.CA_FILE``).
        ``feature_gates``: the alpha gates on, as kube-apiserver's ``--feature-gates`` (and the
        ``--runtime-config`` that goes with them): by default workload-aware scheduling's, so
        scheduling.k8s.io/v1alpha2 is served; without GenericWorkload it is not."""
        self.store = Store(history)
        self.store.feature_gates = frozenset(feature_gates)
        self.tls = tls
        self.faults = Faults()
        self.requests: list[tuple[str, str]] = []
        self.bookmark_interval = bookmark_interval
        self.port = port
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._hub: Hub | None = None
        self._api: Api | None = None
        self._bookmarks: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "APIServer":
        ready = threading.Event()
        loop = asyncio.new_event_loop()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)
            ready.set()
            loop.run_forever()

        self._thread = threading.Thread(target=run, name="test-apiserver", daemon=True)
        self._thread.start()
        ready.wait()
        self._call(self._start())
        return self

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._hub = Hub(self.store, loop, self.bookmark_interval)
        self._api = Api(self.store, self._hub, self.faults, self.requests)
        self._bookmarks = loop.create_task(self._hub.run_bookmarks())
        await self._serve()

    async def _serve(self) -> None:
        assert self._api is not None and self._hub is not None
        controls = Controls(self.store, self._hub, self.faults, self.requests, self.load)
        app = build_app(self._api, controls.install)
        # handler_cancellation: a watch whose client went away is cancelled at once (not at its next write).
        runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0, access_log=None,
                               handler_cancellation=True)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self.port, reuse_address=True,
                           ssl_context=server_context() if self.tls else None)
        await site.start()
        server = site._server  # noqa: SLF001 - the bound port is only known from the socket
        assert isinstance(server, asyncio.Server) and server.sockets
        self.port = int(server.sockets[0].getsockname()[1])
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"
        self._api.address = f"127.0.0.1:{self.port}"
        self._runner = runner

    async def _close(self) -> None:
        if self._hub is not None:
            self._hub.drop_all()
        await asyncio.sleep(0)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def stop(self) -> None:
        if self._loop is None:
            return
        self._call(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(_TIMEOUT)
        self._loop.close()
        self._loop = None

    async def _stop(self) -> None:
        await self._close()
        if self._bookmarks is not None:
            self._bookmarks.cancel()
        if self._hub is not None:
            self.store.listeners.remove(self._hub._notify)  # noqa: SLF001

    def restart(self) -> None:
        """Stop serving and serve again on the same port: state kept, connections dropped, and
        the history etcd compacted (``compact_etcd``) forgotten."""
        self._call(self._restart())

    async def _restart(self) -> None:
        await self._close()
        self.store.forget_compacted()
        await self._serve()

    def _call(self, coro: Coroutine[object, object, None]) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(_TIMEOUT)

    def __enter__(self) -> "APIServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- state, as another client would write it ---------------------------
    @property
    def revision(self) -> int:
        return self.store.revision

    def create(self, obj: Obj) -> Obj:
        """Create as a client would (pods get defaults), keeping any status given."""
        resource = resource_for(str(obj.get("kind")), _api_version(obj))
        namespace = str(meta(obj).get("namespace") or "") or None
        stored = writes.create(self.store, resource, clone(obj), namespace, keep_status=True)
        return writes.with_kind(resource, clone(stored))

    def update(self, obj: Obj) -> Obj:
        """Replace the whole object (spec and status); Conflict if its resourceVersion is stale."""
        resource = resource_for(str(obj.get("kind")), _api_version(obj))
        md = meta(obj)
        namespace = str(md.get("namespace") or "") or None
        stored, _ = writes.update(self.store, resource, namespace, str(md.get("name")), clone(obj), raw=True)
        return writes.with_kind(resource, clone(stored))

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        writes.delete(self.store, resource_for(kind), namespace, name)

    def get(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        resource = resource_for(kind)
        found = self.store.get(resource, object_key(resource, namespace, name))
        return None if found is None else writes.with_kind(resource, clone(found))

    def list(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        resource = resource_for(kind)
        with self.store.lock:
            table = self.store.table(resource)
            keys = sorted(k for k in table if namespace is None or k.startswith(namespace + "/"))
            return [writes.with_kind(resource, clone(table[k])) for k in keys]

    def load(self, objs: builtins.list[Obj]) -> None:
        """Bulk create (one lock hold, one ADDED event each)."""
        with self.store.lock:
            for obj in objs:
                resource = resource_for(str(obj.get("kind")), _api_version(obj))
                namespace = str(meta(obj).get("namespace") or "") or None
                writes.create(self.store, resource, clone(obj), namespace, keep_status=True)

    def compact(self) -> None:
        """Compaction as a client sees it after the API server restarted: every older
        revision answers 410 at once."""
        self.store.compact()

    def compact_etcd(self) -> None:
        """Compaction as a real server shows it before a restart: still served from the
        watch cache (transcripts 26 to 29); ``restart()`` makes it 410 (35 to 40)."""
        self.store.compact_etcd()

    def drop_watches(self, *, abort: bool = False) -> None:
        """End every open watch stream; clients must re-watch.

        By default a stream ends cleanly, as a server-side timeout ends it; with
        ``abort`` the connection is reset mid-stream, as a crashed server or a
        broken network would leave it.
        """
        hub = self._hub
        assert hub is not None and self._loop is not None

        async def drop() -> None:
            hub.drop_all(abort)

        self._call(drop())

    @property
    def watch_count(self) -> int:
        return 0 if self._hub is None else len(self._hub.watchers)


def _api_version(obj: JSONDict) -> str | None:
    value = obj.get("apiVersion")
    return str(value) if value else None
