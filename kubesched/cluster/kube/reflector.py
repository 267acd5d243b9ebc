"""List/watch protocol for one resource: client-go's ``Reflector`` (``tools/cache/reflector.go``).

The reflector keeps a store in step with the server and knows nothing of parsing or
handlers: it hands complete snapshots to ``Sink.replace`` and single changes to
``Sink.apply``. Its loop, as upstream's ``ListAndWatch`` under ``wait.BackoffUntil``:

1. Snapshot. With watch-list, one watch with ``sendInitialEvents=true`` and
   ``resourceVersionMatch=NotOlderThan``: the initial ADDED events are collected until the
   BOOKMARK annotated ``k8s.io/initial-events-end``, then replaced at once, and the same
   stream goes on as the watch. If the server refuses it (any error, or the stream ends
   without that bookmark, as a server that ignores the parameters does), a paginated
   LIST instead (``limit``/``continue``; a 410 on a continue token lists again in full,
   unpaginated, as ``tools/pager`` does). The LIST's resourceVersion is upstream's
   ``relistResourceVersion``: "0" (any cached state) the first time, the last synced
   version afterwards, "" (a consistent read) after the server said that version is gone.
2. Watch from the last resourceVersion with ``allowWatchBookmarks`` and a ``timeoutSeconds``
   drawn from [5, 10) minutes. Bookmarks only advance the resourceVersion. A stream that
   ends (timeout, dropped connection) is reopened at once from where it stopped; a refused
   connection or a 429 reopens it after a backoff; a 410 (HTTP or ERROR event), any other
   error, or a stream that ended within a second without events leads to a new snapshot
   after a backoff.

Backoff (``backoff.Backoff``): 800 ms doubling to 30 s, jittered, reset after 2 min of calm;
a ``Retry-After`` from the server lengthens a wait, never shortens it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import suppress
from typing import Protocol

from .backoff import Backoff
from .client import ApiClient
from .errors import ApiError, api_error_from_status
from .watch import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED, WatchEvent

__all__ = ["Reflector", "Sink", "WatchedResource", "INITIAL_EVENTS_END_ANNOTATION", "object_key"]

log = logging.getLogger(__name__)

INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"
MIN_WATCH_TIMEOUT = 300  # seconds; the reflector's minWatchTimeout
SHORT_WATCH = 1.0  # a watch closed this fast without events is suspicious (upstream: relist)


class WatchedResource(Protocol):
    """What the reflector reads of ``informer.Resource``."""

    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def field_selector(self) -> str: ...
    @property
    def label_selector(self) -> str: ...


class Sink(Protocol):
    """Where the reflector delivers state: the informer's store.

    A snapshot's objects are handed over one by one as they arrive (``prepare``, which may
    decode them at once so the raw documents are freed), then all together (``replace``)."""

    def prepare(self, obj: dict[str, object]) -> object: ...
    def replace(self, items: Sequence[object], resource_version: str) -> None: ...
    def apply(self, event_type: str, obj: dict[str, object]) -> None: ...


def object_key(obj: Mapping[str, object]) -> str:
    """client-go's ``MetaNamespaceKeyFunc``: ``namespace/name``, or ``name`` when cluster-scoped."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):  # decoded JSON: a dict (cheaper to test than Mapping)
        return ""
    name = meta.get("name") or ""
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else str(name)


def resource_version(obj: Mapping[str, object]) -> str:
    """``metadata.resourceVersion`` of an object, a list or a bookmark ("" when absent)."""
    meta = obj.get("metadata")
    if type(meta) is dict or isinstance(meta, Mapping):  # decoded JSON: a dict (no ABC check)
        rv = meta.get("resourceVersion")
        if type(rv) is str:
            return rv
    return ""


def key_and_version(obj: Mapping[str, object]) -> tuple[str, str]:
    """``object_key`` and ``resource_version`` of a decoded object, its metadata read once
    (every object of a snapshot needs both)."""
    meta = obj.get("metadata")
    if type(meta) is not dict:
        return object_key(obj), resource_version(obj)
    name = meta.get("name") or ""
    namespace = meta.get("namespace")
    rv = meta.get("resourceVersion")
    return f"{namespace}/{name}" if namespace else str(name), rv if type(rv) is str else ""


class Reflector:
    """Runs list/watch for one resource until cancelled, feeding ``sink``."""

    def __init__(self, client: ApiClient, resource: WatchedResource, sink: Sink, *, page_size: int = 500,
                 watch_list: bool = True, backoff: Backoff | None = None, name: str | None = None,
                 rng: random.Random | None = None) -> None:
        self.client = client
        self.resource = resource
        self.sink = sink
        self.page_size = page_size
        self.watch_list = watch_list
        self.backoff = backoff or Backoff()
        self.name = name or resource.kind
        self._random = rng or random.Random()
        self.last_sync_resource_version = ""
        self._rv_unavailable = False  # the server said our last version is gone: read consistently

    def _selectors(self) -> dict[str, str]:
        params: dict[str, str] = {}
        if self.resource.field_selector:
            params["fieldSelector"] = self.resource.field_selector
        if self.resource.label_selector:
            params["labelSelector"] = self.resource.label_selector
        return params

    def _watch_timeout(self) -> str:
        return str(int(MIN_WATCH_TIMEOUT * (self._random.random() + 1.0)))

    async def run(self) -> None:
        """List and watch forever; every failure is logged and retried after the backoff."""
        while True:
            retry_after: float | None = None
            try:
                await self._list_and_watch()
            except ApiError as exc:
                log.warning("%s: list/watch of %s failed: %s", self.name, self.resource.path, exc)
                retry_after = exc.retry_after
            except Exception:  # a bug must not stop the informer for good
                log.exception("%s: list/watch of %s failed", self.name, self.resource.path)
            await self._sleep_backoff(retry_after)

    async def _sleep_backoff(self, retry_after: float | None) -> None:
        delay = self.backoff.next()
        if retry_after is not None:
            delay = max(delay, retry_after)
        await asyncio.sleep(delay)

    async def _list_and_watch(self) -> None:
        stream: AsyncIterator[WatchEvent] | None = None
        if self.watch_list:
            stream = await self._watch_list()
        if stream is None:
            await self._list()
        await self._watch(stream)

    # --- snapshot ------------------------------------------------------------------------

    async def _watch_list(self) -> AsyncIterator[WatchEvent] | None:
        """The initial state through a watch; the open stream, or None to fall back to LIST.

        As upstream's ``watchList``: a refused connection or a 429 backs off and tries
        again, an expired or too-new resourceVersion retries at once from "" (the latest
        state), any other error falls back to LIST. Unlike upstream, which retries, a
        stream that ends before the initial-events-end bookmark also falls back: a server
        that ignores ``sendInitialEvents`` would otherwise never let the informer sync.
        """
        while True:
            params = self._selectors()
            params.update(sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
                          allowWatchBookmarks="true", timeoutSeconds=self._watch_timeout())
            rv = "" if self._rv_unavailable else self.last_sync_resource_version
            if rv:
                params["resourceVersion"] = rv
            stream = self.client.watch(self.resource.path, params)
            try:
                if await self._initial_events(stream):
                    return stream
                reason = "the stream ended before the initial-events-end bookmark"
            except asyncio.CancelledError:
                await _close(stream)
                raise
            except ApiError as exc:
                if exc.is_connection_refused() or exc.is_too_many_requests():
                    await _close(stream)
                    log.info("%s: watch-list of %s failed (%s); backing off", self.name, self.resource.path, exc)
                    await self._sleep_backoff(exc.retry_after)
                    continue
                if exc.is_gone() or exc.is_too_large_resource_version():
                    await _close(stream)
                    self._rv_unavailable = True
                    continue
                reason = str(exc)
            await _close(stream)
            log.warning("%s: watch-list of %s ended with an error (%s); falling back to LIST",
                        self.name, self.resource.path, reason)
            return None

    async def _initial_events(self, stream: AsyncIterator[WatchEvent]) -> bool:
        """Collect the initial events and replace the store at their end; False if they never end."""
        initial: dict[str, object] = {}
        prepare = self.sink.prepare
        async for event in stream:
            kind = event.type
            if kind == ADDED or kind == MODIFIED:
                initial[object_key(event.object)] = prepare(event.object)
            elif kind == DELETED:
                initial.pop(object_key(event.object), None)
            elif kind == BOOKMARK:
                if _initial_events_end(event.object):
                    version = resource_version(event.object)
                    self._rv_unavailable = False
                    self.sink.replace(list(initial.values()), version)
                    self.last_sync_resource_version = version
                    return True
            elif kind == ERROR:
                raise api_error_from_status(event.object)
        return False

    async def _list(self) -> None:
        rv = self._relist_resource_version()
        try:
            items, version = await self._paged_list(rv)
        except ApiError as exc:
            if not (exc.is_gone() or exc.is_too_large_resource_version()):
                raise
            self._rv_unavailable = True
            items, version = await self._paged_list(self._relist_resource_version())
        self._rv_unavailable = False
        self.sink.replace(items, version)
        self.last_sync_resource_version = version

    async def list_once(self, resource_version: str = "") -> tuple[list[object], str]:
        """One paginated LIST and no watch (a snapshot's read), each item through the sink's
        ``prepare``: ``""`` reads consistently, "0" accepts the server's cache."""
        return await self._paged_list(resource_version)

    def _relist_resource_version(self) -> str:
        if self._rv_unavailable:
            return ""
        return self.last_sync_resource_version or "0"

    async def _paged_list(self, rv: str) -> tuple[list[object], str]:
        """All items and the list's resourceVersion, page by page as ``tools/pager``."""
        base = self._selectors()
        if rv:
            base["resourceVersion"] = rv
        params = dict(base)
        if self.page_size > 0:
            params["limit"] = str(self.page_size)
        items: list[object] = []
        prepare = self.sink.prepare
        continuing = False
        while True:
            try:
                page = await self.client.request("GET", self.resource.path, params=params)
            except ApiError as exc:
                if not (continuing and exc.is_gone()):
                    raise
                # The continue token expired: one full list with the original options.
                log.info("%s: continue token of %s expired; listing in full", self.name, self.resource.path)
                page = await self.client.request("GET", self.resource.path, params=base)
                return [prepare(item) for item in _items(page)], resource_version(page)
            items.extend(prepare(item) for item in _items(page))
            token = _continue_token(page)
            if not token:
                return items, resource_version(page)
            params = self._selectors()
            params["limit"] = str(self.page_size)
            params["continue"] = token
            continuing = True

    # --- watch ---------------------------------------------------------------------------

    async def _watch(self, stream: AsyncIterator[WatchEvent] | None) -> None:
        """Watch until a new snapshot is needed (return or raise), as upstream's ``watch``.

        A stream that ends -- the server's timeout, a dropped or reset connection, which
        client-go's stream decoder also treats as a normal end -- is reopened at once from
        the last resourceVersion. A refused connection or a 429 is retried after a backoff.
        A 410 returns for a new snapshot; any other error (including ``InternalError``:
        kube-scheduler sets no ``MaxInternalErrorRetryDuration``) raises, and the caller
        takes a new snapshot after a backoff. So does a watch that ended within a second
        without any event (upstream's ``VeryShortWatchError``).
        """
        while True:
            if stream is None:
                params = self._selectors()
                params.update(allowWatchBookmarks="true", timeoutSeconds=self._watch_timeout(),
                              resourceVersion=self.last_sync_resource_version)
                stream = self.client.watch(self.resource.path, params)
            started = time.monotonic()
            counter = [0]
            try:
                await self._consume(stream, counter)
            except ApiError as exc:
                if exc.is_gone():
                    log.info("%s: watch of %s expired (%s); relisting", self.name, self.resource.path, exc.message)
                    return
                if counter[0] == 0 and (exc.is_connection_refused() or exc.is_too_many_requests()):
                    log.info("%s: watch of %s failed (%s); backing off", self.name, self.resource.path, exc)
                    await self._sleep_backoff(exc.retry_after)
                    continue
                if not exc.is_transport():
                    raise
                log.info("%s: watch of %s broke (%s); rewatching", self.name, self.resource.path, exc)
            finally:
                await _close(stream)
                stream = None
            if counter[0] == 0 and time.monotonic() - started < SHORT_WATCH:
                raise ApiError(0, "VeryShortWatch", "the watch closed within a second without events")

    async def _consume(self, stream: AsyncIterator[WatchEvent], counter: list[int]) -> None:
        apply = self.sink.apply
        async for event in stream:
            counter[0] += 1
            kind = event.type
            if kind == ADDED or kind == MODIFIED or kind == DELETED:
                apply(kind, event.object)
                version = resource_version(event.object)
                if version:
                    self.last_sync_resource_version = version
            elif kind == BOOKMARK:
                version = resource_version(event.object)
                if version:
                    self.last_sync_resource_version = version
            elif kind == ERROR:
                raise api_error_from_status(event.object)
            else:
                log.warning("%s: unknown watch event type %r", self.name, kind)


async def _close(stream: AsyncIterator[WatchEvent]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        with suppress(Exception):
            await aclose()


def _initial_events_end(obj: Mapping[str, object]) -> bool:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return False
    annotations = meta.get("annotations")
    return isinstance(annotations, Mapping) and annotations.get(INITIAL_EVENTS_END_ANNOTATION) == "true"


def _items(page: Mapping[str, object]) -> list[dict[str, object]]:
    items = page.get("items")
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []



def _continue_token(page: Mapping[str, object]) -> str:
    meta = page.get("metadata")
    if isinstance(meta, Mapping):
        token = meta.get("continue")
        if isinstance(token, str):
            return token
    return ""
