"""Watches: the cacher's fan-out of store events to open watch streams.

Every store event is serialized once (``Event.frame``) and the same bytes go to
every unfiltered watcher. Filtered watchers follow the cacher's rules: an
update that starts matching is ADDED, one that stops matching is DELETED
carrying the previous object at the event's revision. Bookmarks are sent
periodically and once before a watch times out; a WatchList
(sendInitialEvents) replays the state as ADDED then a bookmark annotated
``k8s.io/initial-events-end``. Resuming from a compacted revision gets the
cacher's error watcher: HTTP 200 and one ERROR event with a 410 Expired Status.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from dataclasses import dataclass, field

import orjson
from aiohttp import web

from tests.apiserver import errors
from tests.apiserver.options import ListOptions, parse_revision
from tests.apiserver.resources import Resource
from tests.apiserver.selectors import Predicate
from tests.apiserver.storage import Event, Store

JSONDict = dict[str, object]
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def bookmark_frame(resource: Resource, rev: int, initial_end: bool = False) -> bytes:
    md: JSONDict = {"resourceVersion": str(rev)}
    if initial_end:
        md["annotations"] = {INITIAL_EVENTS_END: "true"}
    body = {"type": "BOOKMARK", "object": {"kind": resource.kind, "apiVersion": resource.api_version,
                                           "metadata": md}}
    return orjson.dumps(body) + b"\n"


def error_frame(err: errors.StatusError) -> bytes:
    return orjson.dumps({"type": "ERROR", "object": err.status()}) + b"\n"


@dataclass(eq=False, slots=True)
class Watcher:
    """One open watch: what it selects, what it has been sent up to, and its outbox."""

    resource: Resource
    pred: Predicate
    bookmarks: bool
    last_rev: int
    pending: list[bytes] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    abort: bool = False

    def push(self, data: bytes) -> None:
        self.pending.append(data)
        self.wake.set()

    def offer(self, ev: Event) -> None:
        """Queue the event as this watcher should see it, if at all."""
        if ev.rev <= self.last_rev or ev.resource is not self.resource:
            return
        self.last_rev = ev.rev
        ns = self.pred.namespace
        if ns and self.resource.namespaced and not ev.key.startswith(ns + "/"):
            return
        if not self.pred.has_selectors:
            self.push(ev.frame(ev.type))
            return
        now = ev.type != "DELETED" and self.pred.matches(ev.obj)
        before = ev.prev is not None and self.pred.matches(ev.prev)
        if now and before:
            self.push(ev.frame("MODIFIED"))
        elif now:
            self.push(ev.frame("ADDED"))
        elif before:
            self.push(ev.frame("DELETED", "obj" if ev.type == "DELETED" else "prev"))

    def close(self, abort: bool = False) -> None:
        self.closed = True
        self.abort = abort
        self.wake.set()


class Hub:
    """Fans store events out to watchers on the server's event loop, in revision order."""

    def __init__(self, store: Store, loop: asyncio.AbstractEventLoop, bookmark_interval: float) -> None:
        self.store = store
        self.loop = loop
        self.bookmark_interval = bookmark_interval
        self.watchers: set[Watcher] = set()
        self.dispatched = store.revision
        self._queue: deque[Event] = deque()
        self._scheduled = False
        self._loop_thread = threading.get_ident()
        store.listeners.append(self._notify)

    def _notify(self, ev: Event) -> None:
        # Called under the store lock from any thread; the drain runs on the loop.
        self._queue.append(ev)
        if not self._scheduled:
            self._scheduled = True
            self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self.store.lock:
            events = list(self._queue)
            self._queue.clear()
            self._scheduled = False
        for ev in events:
            for watcher in self.watchers:
                watcher.offer(ev)
            self.dispatched = ev.rev

    def bookmark_all(self) -> None:
        for watcher in self.watchers:
            if watcher.bookmarks and not watcher.closed and watcher.last_rev <= self.dispatched:
                # A watch from a revision the store has not reached hears nothing, not even
                # bookmarks, until it gets there (transcript 32).
                watcher.last_rev = max(watcher.last_rev, self.dispatched)
                watcher.push(bookmark_frame(watcher.resource, watcher.last_rev))

    async def run_bookmarks(self) -> None:
        while True:
            await asyncio.sleep(self.bookmark_interval)
            self.bookmark_all()

    def drop_all(self, abort: bool = False) -> None:
        """End every stream: cleanly (as a server-side timeout ends it) or by resetting the connection."""
        for watcher in list(self.watchers):
            watcher.close(abort)

    def open(self, resource: Resource, pred: Predicate, opts: ListOptions) -> Watcher:
        """Register a watcher and queue its backlog; raises StatusError for an expired start."""
        store = self.store
        with store.lock:
            rv_text = opts.resource_version
            if opts.send_initial_events:
                rev = store.revision
                watcher = Watcher(resource, pred, opts.allow_bookmarks, rev)
                state = store.table(resource)
                prefix = f"{pred.namespace}/" if pred.namespace and resource.namespaced else ""
                kind = {"kind": resource.kind, "apiVersion": resource.api_version}
                for key in sorted(state):
                    if prefix and not key.startswith(prefix):
                        continue
                    obj = state[key]
                    if pred.matches(obj):
                        watcher.pending.append(b'{"type":"ADDED","object":' + orjson.dumps({**kind, **obj}) + b"}\n")
                if opts.allow_bookmarks:
                    watcher.pending.append(bookmark_frame(resource, rev, initial_end=True))
            elif rv_text in ("", "0"):
                watcher = Watcher(resource, pred, opts.allow_bookmarks, store.revision)
            else:
                rev = parse_revision(rv_text)
                if rev < store.floor:
                    raise errors.expired(f"too old resource version: {rev} ({store.floor})")
                watcher = Watcher(resource, pred, opts.allow_bookmarks, rev)
                for ev in store.events_since(rev):
                    watcher.offer(ev)
                watcher.last_rev = max(rev, store.revision)
            self.watchers.add(watcher)
            watcher.wake.set()
            return watcher

    async def serve_error(self, request: web.Request, err: errors.StatusError) -> web.StreamResponse:
        """The cacher's error watcher: HTTP 200, one ERROR event carrying the Status, end of stream."""
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        await response.write(error_frame(err))
        await response.write_eof()
        return response

    async def serve(self, request: web.Request, resource: Resource, pred: Predicate,
                    opts: ListOptions) -> web.StreamResponse:
        """Stream one watch as newline-delimited JSON until timeout, drop, or client close."""
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        try:
            watcher = self.open(resource, pred, opts)
        except errors.StatusError as err:
            return await self.serve_error(request, err)
        await response.prepare(request)
        deadline = None if opts.timeout_seconds is None else self.loop.time() + opts.timeout_seconds
        try:
            while True:
                if watcher.pending:
                    data = b"".join(watcher.pending)
                    watcher.pending.clear()
                    await response.write(data)
                    continue
                if watcher.closed:
                    if watcher.abort and request.transport is not None:
                        request.transport.abort()
                        self.watchers.discard(watcher)
                        return response
                    break
                watcher.wake.clear()
                remaining = None if deadline is None else deadline - self.loop.time()
                if remaining is not None and remaining <= 0:
                    if watcher.bookmarks and watcher.last_rev <= self.dispatched:
                        watcher.last_rev = max(watcher.last_rev, self.dispatched)
                        await response.write(bookmark_frame(resource, watcher.last_rev))
                    break
                try:
                    await asyncio.wait_for(watcher.wake.wait(), remaining)
                except TimeoutError:
                    pass
        except (ConnectionResetError, asyncio.CancelledError):
            self.watchers.discard(watcher)
            raise
        finally:
            self.watchers.discard(watcher)
        try:
            await response.write_eof()
        except ConnectionResetError:
            pass
        return response
