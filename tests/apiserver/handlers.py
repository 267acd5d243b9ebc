"""HTTP routing: kube-apiserver's paths onto the generic storage.

``/api/v1/[namespaces/{ns}/]{plural}[/{name}[/{subresource}]]`` and the same
under ``/apis/{group}/{version}``, plus version, health and discovery. Every
failure is answered as a ``Status`` object.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson
from aiohttp import web

from tests.apiserver import discovery, errors, writes
from tests.apiserver.admission import bind, success_status
from tests.apiserver.faults import Faults
from tests.apiserver.listing import list_body
from tests.apiserver.managed_fields import MANAGER, manager_from_user_agent
from tests.apiserver.patching import JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH
from tests.apiserver.options import parse_options, parse_revision
from tests.apiserver.resources import BY_PATH, Resource, object_key
from tests.apiserver.selectors import predicate_from_query
from tests.apiserver.storage import JSONDict, Store
from tests.apiserver.watch import Hub
from tests.apiserver.workload_resources import served

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
JSON_TYPE = "application/json"
TOO_LARGE_WAIT = 3.0


def json_response(body: object, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type=JSON_TYPE, headers=headers)


def error_response(err: errors.StatusError) -> web.Response:
    return json_response(err.status(), err.code, err.headers or None)


def too_many_requests(retry_after: int | None) -> web.Response:
    """The 429 of API Priority and Fairness (Retry-After 2) or of the max-in-flight filter
    (Retry-After 1): plain text, not a Status (transcripts 33 and 42)."""
    response = web.Response(status=429, text="Too many requests, please try again later.\n")
    response.headers["Content-Type"] = "text/plain; charset=utf-8"
    response.headers["Retry-After"] = str(retry_after if retry_after is not None else 1)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _no_route() -> errors.StatusError:
    return errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})


@dataclass(frozen=True, slots=True)
class Target:
    """What a resource path names."""

    resource: Resource
    namespace: str | None
    name: str | None
    subresource: str | None


def parse_path(parts: list[str], served: discovery.Served = lambda resource: True) -> Target | JSONDict | None:
    """A resource target, a discovery document, or None (404); ``served``: whether the server
    has storage for a resource (alpha ones need their feature gate)."""
    if parts[:1] == ["api"]:
        if len(parts) == 1:
            return None
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"]:
        if len(parts) == 1:
            return discovery.group_list(served)
        if len(parts) == 2:
            return discovery.group(parts[1], served)
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if not rest:
        return discovery.resource_list(group, version, served)
    namespace = None
    nested = len(rest) >= 3 and ((group, version, rest[2]) in BY_PATH or (not group and rest[2] == "bindings"))
    if rest[0] == "namespaces" and nested:
        namespace, rest = rest[1], rest[2:]
    if namespace is not None and rest == ["bindings"] and not group:
        return Target(BY_PATH[("", "v1", "pods")], namespace, None, "bindings")
    resource = BY_PATH.get((group, version, rest[0]))
    if resource is None or len(rest) > 3 or not served(resource):
        return None
    if namespace is not None and not resource.namespaced:
        return None
    return Target(resource, namespace, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None)


class Api:
    """The request handlers over one store, watch hub and fault table."""

    def __init__(self, store: Store, hub: Hub, faults: Faults, requests: list[tuple[str, str]]) -> None:
        self.store = store
        self.hub = hub
        self.faults = faults
        self.requests = requests
        self.address = ""

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Log, inject faults, map errors to Status.

        A client that disconnects cancels only a watch (so it is forgotten at
        once); any other request runs to completion regardless, as a write the
        real server started is not undone because its client gave up.
        """
        if request.query.get("watch") in ("true", "1", "True", "TRUE", "t", "T"):
            return await self._serve(request, handler)
        return await asyncio.shield(self._serve(request, handler))

    async def _serve(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.can_read_body:
            await request.read()  # cached: the request stays whole even if its client leaves
        target = request.path_qs
        MANAGER.set(manager_from_user_agent(request.headers.get("User-Agent", "")))  # this request's task only
        if not request.path.startswith("/_test/"):
            self.requests.append((request.method, target))
            rule = self.faults.take(request.method, target)
            if rule is not None:
                if rule.delay:
                    await asyncio.sleep(rule.delay)
                if rule.status == 429 and rule.reason is None:
                    return too_many_requests(rule.retry_after)
                if rule.status is not None:
                    message = "injected fault" if rule.status != 429 else "Too many requests, please try again later."
                    err = errors.for_code(rule.status, rule.message or message, rule.retry_after)
                    if rule.reason:
                        err.reason = rule.reason
                    return error_response(err)
        try:
            return await handler(request)
        except errors.StatusError as err:
            return error_response(err)
        except web.HTTPException:
            raise
        except Exception as exc:  # noqa: BLE001 - upstream answers any handler panic as InternalError
            return error_response(errors.StatusError(500, "InternalError", f"Internal error occurred: {exc!r}",
                                                     {"causes": [{"message": repr(exc)}]}))

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok", content_type="text/plain")

    async def version(self, request: web.Request) -> web.Response:
        return json_response(discovery.VERSION)

    async def core(self, request: web.Request) -> web.Response:
        return json_response(discovery.core_versions(self.address))

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        gates = self.store.feature_gates
        found = parse_path(parts, lambda resource: served(resource, gates))
        if found is None:
            return error_response(_no_route())
        if not isinstance(found, Target):
            if request.method != "GET":
                raise errors.method_not_allowed(request.method)
            return json_response(found)
        method = request.method
        if found.subresource == "bindings" or found.subresource == "binding":
            if method != "POST":
                raise errors.method_not_allowed(method)
            return await self.binding(request, found)
        if found.subresource not in (None, "status"):
            return error_response(_no_route())
        if found.subresource == "status" and not found.resource.has_status:
            return error_response(_no_route())
        if found.resource.namespaced and found.namespace is None and (found.name is not None or method != "GET"):
            # Cluster-wide paths of namespaced resources only serve list and watch.
            if found.name is None:
                raise errors.method_not_allowed(method)
            return error_response(_no_route())
        if found.name is None:
            if method == "GET":
                return await self.collection(request, found)
            if method == "POST":
                return await self.create(request, found)
            raise errors.method_not_allowed(method)
        if method == "GET":
            return await self.get(request, found)
        if method == "PUT":
            return await self.update(request, found)
        if method == "PATCH":
            return await self.patch(request, found)
        if method == "DELETE" and found.subresource is None:
            return await self.delete(request, found)
        raise errors.method_not_allowed(method)

    async def body(self, request: web.Request) -> object:
        raw = await request.read()
        try:
            return orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError as exc:
            raise errors.bad_request(f"error decoding request body: {exc}") from exc

    async def object_body(self, request: web.Request) -> JSONDict:
        body = await self.body(request)
        if not isinstance(body, dict):
            raise errors.bad_request("the request body must be a JSON object")
        return body

    async def wait_for(self, rev: int) -> None:
        """NotOlderThan a future revision: wait a little for it, as the watch cache does, then 504."""
        deadline = asyncio.get_running_loop().time() + TOO_LARGE_WAIT
        while self.store.revision < rev:
            if asyncio.get_running_loop().time() >= deadline:
                raise errors.too_large_resource_version(rev, self.store.revision)
            await asyncio.sleep(0.01)

    async def collection(self, request: web.Request, target: Target) -> web.StreamResponse:
        query = request.query
        opts = parse_options(query)
        pred = predicate_from_query(query, target.resource, target.namespace)
        fresh = opts.resource_version not in ("", "0") and opts.match != "Exact" and not opts.continue_token
        if opts.watch:
            # The cacher waits for a future revision only before replaying initial events, and
            # reports its timeout through the error watcher; a plain watch just starts there.
            if fresh:
                wanted = parse_revision(opts.resource_version)
                if opts.send_initial_events:
                    try:
                        await self.wait_for(wanted)
                    except errors.StatusError as err:
                        return await self.hub.serve_error(request, err)
            return await self.hub.serve(request, target.resource, pred, opts)
        if fresh:
            await self.wait_for(parse_revision(opts.resource_version))
        if opts.resource_version == "0" and not opts.continue_token and opts.limit:
            # Served from the watch cache, which does not paginate: every item, no continue (transcript 04).
            opts = dataclasses.replace(opts, limit=0)
        return web.Response(body=list_body(self.store, target.resource, pred, opts), content_type=JSON_TYPE)

    async def get(self, request: web.Request, target: Target) -> web.Response:
        rv = request.query.get("resourceVersion", "")
        if rv not in ("", "0"):
            await self.wait_for(parse_revision(rv))
        key = object_key(target.resource, target.namespace, str(target.name))
        obj = self.store.get(target.resource, key)
        if obj is None:
            raise errors.not_found(target.resource, str(target.name))
        return json_response(writes.with_kind(target.resource, obj))

    async def create(self, request: web.Request, target: Target) -> web.Response:
        obj = await self.object_body(request)
        stored = writes.create(self.store, target.resource, obj, target.namespace, keep_status=False)
        return json_response(writes.with_kind(target.resource, stored), 201)

    async def update(self, request: web.Request, target: Target) -> web.Response:
        obj = await self.object_body(request)
        stored, created = writes.update(self.store, target.resource, target.namespace, str(target.name), obj,
                                        target.subresource)
        return json_response(writes.with_kind(target.resource, stored), 201 if created else 200)

    async def patch(self, request: web.Request, target: Target) -> web.Response:
        media = request.headers.get("Content-Type", "").split(";", 1)[0].strip()
        if media not in (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH):
            raise errors.unsupported_media_type(media)
        body = await self.body(request)
        stored = writes.patch(self.store, target.resource, target.namespace, str(target.name),
                              request.headers.get("Content-Type", ""), body, target.subresource)
        return json_response(writes.with_kind(target.resource, stored))

    async def delete(self, request: web.Request, target: Target) -> web.Response:
        body = await self.body(request)
        options = body if isinstance(body, dict) else None
        deleted = writes.delete(self.store, target.resource, target.namespace, str(target.name), options)
        return json_response(writes.delete_response(target.resource, deleted))

    async def binding(self, request: web.Request, target: Target) -> web.Response:
        body = await self.object_body(request)
        md = body.get("metadata")
        name = target.name or (str(md.get("name") or "") if isinstance(md, dict) else "")
        if isinstance(md, dict) and md.get("namespace") not in (None, "", target.namespace):
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
        bind(self.store, str(target.namespace), name, body)
        return json_response(success_status(), 201)


def build_app(api: Api, extra: Callable[[web.Application], None] | None = None) -> web.Application:
    app = web.Application(middlewares=[api.middleware], client_max_size=1 << 30)
    app.router.add_get("/version", api.version)
    for probe in ("/healthz", "/livez", "/readyz"):
        app.router.add_get(probe, api.health)
    app.router.add_get("/api", api.core)
    if extra is not None:
        extra(app)
    app.router.add_route("*", "/{tail:.*}", api.dispatch)
    return app
