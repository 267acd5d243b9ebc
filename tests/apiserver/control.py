"""Test-only HTTP controls under ``/_test/``, for a server running in another process.

The benchmark drives a standalone server (``python -m tests.apiserver``); these
routes give it what the in-process Python API gives tests: bulk load,
compaction, dropping watches, fault injection and counters. Production code
never calls them.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson
from aiohttp import web

from tests.apiserver import errors
from tests.apiserver.faults import Faults
from tests.apiserver.handlers import json_response
from tests.apiserver.storage import JSONDict, Store
from tests.apiserver.watch import Hub


class Controls:
    def __init__(self, store: Store, hub: Hub, faults: Faults, requests: list[tuple[str, str]],
                 load: Callable[[list[JSONDict]], None]) -> None:
        self.store = store
        self.hub = hub
        self.faults = faults
        self.requests = requests
        self.load_objects = load

    def install(self, app: web.Application) -> None:
        app.router.add_post("/_test/load", self.load)
        app.router.add_post("/_test/compact", self.compact)
        app.router.add_post("/_test/drop_watches", self.drop_watches)
        app.router.add_get("/_test/faults", self.list_faults)
        app.router.add_post("/_test/faults", self.add_fault)
        app.router.add_delete("/_test/faults", self.clear_faults)
        app.router.add_get("/_test/stats", self.stats)
        app.router.add_get("/_test/requests", self.request_log)

    async def load(self, request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        items = body.get("items") if isinstance(body, dict) else body
        if not isinstance(items, list):
            raise errors.bad_request("expected a JSON list of objects or {\"items\": [...]}")
        self.load_objects([i for i in items if isinstance(i, dict)])
        return json_response({"loaded": len(items), "revision": self.store.revision})

    async def compact(self, request: web.Request) -> web.Response:
        self.store.compact()
        return json_response({"revision": self.store.revision})

    async def drop_watches(self, request: web.Request) -> web.Response:
        count = len(self.hub.watchers)
        self.hub.drop_all(request.query.get("abort") in ("1", "true"))
        return json_response({"dropped": count})

    async def list_faults(self, request: web.Request) -> web.Response:
        return json_response([rule.describe() for rule in self.faults.rules])

    async def add_fault(self, request: web.Request) -> web.Response:
        spec = orjson.loads(await request.read())
        if not isinstance(spec, dict):
            raise errors.bad_request("expected a fault object")
        rule = self.faults.add(method=spec.get("method"), path=str(spec.get("path", "")),
                               status=spec.get("status", 500), retry_after=spec.get("retry_after"),
                               times=spec.get("times", 1), delay=float(spec.get("delay", 0.0)),
                               reason=spec.get("reason"), message=spec.get("message"))
        return json_response(rule.describe(), 201)

    async def clear_faults(self, request: web.Request) -> web.Response:
        self.faults.clear()
        return json_response({})

    async def stats(self, request: web.Request) -> web.Response:
        with self.store.lock:
            counts = {f"{r.plural}.{r.group}" if r.group else r.plural: len(t)
                      for r, t in self.store.objects.items()}
            body: JSONDict = {"revision": self.store.revision, "floor": self.store.floor, "objects": counts,
                              "watchers": len(self.hub.watchers), "requests": len(self.requests)}
        return json_response(body)

    async def request_log(self, request: web.Request) -> web.Response:
        since = int(request.query.get("since", "0"))
        return json_response([list(r) for r in self.requests[since:]])
