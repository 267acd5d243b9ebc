"""Informers: a reflector, a store of parsed objects and ordered handler calls.

Together they do what client-go's ``sharedIndexInformer`` does for a handler registered
without a resync period (as kube-scheduler registers its handlers):

* A watch event updates the store and makes one call: ADDED/MODIFIED of an unknown key
  is ``on_add``, of a known key ``on_update(old, new)``; DELETED of a known key is
  ``on_delete`` with the object's final state (deletes of objects the handler never saw,
  e.g. ones ``parse`` rejected, make no call).
* A snapshot (LIST or watch-list initial events) is reconciled as ``DeltaFIFO.Replace``:
  objects absent from it are deleted with ``on_delete(DeletedFinalStateUnknown(key,
  last_known))``; known objects whose resourceVersion changed are ``on_update``; new ones
  ``on_add`` (``is_in_initial_list`` only during the first snapshot). Known objects with an
  unchanged resourceVersion make **no** call: upstream turns them into resync
  notifications, which handlers without a resync period never get, and the scheduler's
  pod update handler ignores same-version updates anyway.

Objects are parsed once per change with ``parse`` after ``metadata.managedFields`` is
dropped; an object ``parse`` rejects is logged once (kind, namespace, name) and skipped.
Handlers run on the event loop, in order; a handler's exception is logged and does not
stop the informer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, cast

from .backoff import INITIAL_BACKOFF, Backoff
from .client import ApiClient
from .reflector import Reflector, key_and_version
from .watch import DELETED

__all__ = ["Resource", "DeletedFinalStateUnknown", "EventHandler", "Informer", "POD_FIELD_SELECTOR", "PODS", "NODES"]

log = logging.getLogger(__name__)

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

# Upstream's scheduler watches every pod not in a terminal phase.
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass(frozen=True, slots=True)
class Resource:
    """What an informer watches: a collection path and its selectors."""

    path: str  # "/api/v1/pods", "/apis/apps/v1/replicasets"
    kind: str  # "Pod"
    field_selector: str = ""
    label_selector: str = ""


PODS = Resource("/api/v1/pods", "Pod", field_selector=POD_FIELD_SELECTOR)
NODES = Resource("/api/v1/nodes", "Node")


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown(Generic[T]):
    """client-go's tombstone: the object was deleted while we were not watching."""

    key: str
    obj: T  # the last state we knew


class EventHandler(Protocol[T_contra]):
    """Receives every change, on the event loop thread, in order, one call per change."""

    def on_add(self, obj: T_contra, is_in_initial_list: bool) -> None: ...
    def on_update(self, old: T_contra, new: T_contra) -> None: ...
    def on_delete(self, obj: T_contra | DeletedFinalStateUnknown[T_contra]) -> None: ...


@dataclass(slots=True)
class _Prepared(Generic[T]):
    """A snapshot's object as ``prepare`` left it: decoded (None when rejected), or unchanged."""

    key: str
    version: str
    obj: T | None
    unchanged: bool = False


class Informer(Generic[T]):
    """Keeps a parsed copy of one resource and tells ``handler`` about every change."""

    def __init__(self, client: ApiClient, resource: Resource, parse: Callable[[dict[str, object]], T],
                 handler: EventHandler[T], *, page_size: int = 500, watch_list: bool = True,
                 resync_backoff_max: float = 30.0, name: str | None = None,
                 backoff_initial: float = INITIAL_BACKOFF) -> None:
        self.resource = resource
        self.name = name or resource.kind
        self._parse = parse
        self._handler = handler
        self._items: dict[str, tuple[T, str]] = {}  # key -> (parsed object, resourceVersion)
        self._rejected: set[str] = set()  # keys whose rejection was logged
        self._synced = False
        self._synced_event = asyncio.Event()
        self._reflector = Reflector(client, resource, self, page_size=page_size, watch_list=watch_list,
                                    backoff=Backoff(backoff_initial, resync_backoff_max), name=self.name)

    @property
    def last_sync_resource_version(self) -> str:
        return self._reflector.last_sync_resource_version

    async def run(self) -> None:
        """List/watch until cancelled, recovering from every failure as client-go does."""
        await self._reflector.run()

    def has_synced(self) -> bool:
        """The first snapshot has been delivered to the handler."""
        return self._synced

    async def wait_synced(self) -> None:
        await self._synced_event.wait()

    def get(self, key: str) -> T | None:
        entry = self._items.get(key)
        return entry[0] if entry is not None else None

    def list(self) -> list[T]:
        return [entry[0] for entry in self._items.values()]

    def __len__(self) -> int:
        return len(self._items)

    # --- Sink: called by the reflector --------------------------------------------------------

    def prepare(self, raw: dict[str, object]) -> _Prepared[T]:
        """One object of a snapshot, decoded as it arrives so that its raw document can go at
        once (a sync of 150,000 pods would otherwise hold every document until the end).
        An object whose resourceVersion the store already has is not decoded again."""
        key, version = key_and_version(raw)
        old = self._items.get(key)
        if old is not None and old[1] == version:
            return _Prepared(key, version, None, unchanged=True)
        return _Prepared(key, version, self._decode(key, raw))

    def replace(self, items: Sequence[object], resource_version: str) -> None:
        """Reconcile the store with a complete snapshot (``DeltaFIFO.Replace``); ``items`` are
        what ``prepare`` made of the snapshot's objects."""
        initial = not self._synced
        store = self._items
        handler = self._handler
        on_add, on_update, call = handler.on_add, handler.on_update, self._call
        seen: set[str] = set()
        for prepared in cast("Sequence[_Prepared[T]]", items):
            key = prepared.key
            seen.add(key)
            obj = prepared.obj
            if obj is None:
                continue  # unchanged (upstream's resync notification, not delivered) or rejected
            old = store.get(key)
            store[key] = (obj, prepared.version)
            if old is None:
                call(on_add, obj, initial)
            else:
                call(on_update, old[0], obj)
        for key in [k for k in store if k not in seen]:
            last = store.pop(key)[0]
            self._rejected.discard(key)
            self._call(handler.on_delete, DeletedFinalStateUnknown(key, last))
        self._rejected.intersection_update(seen)
        if initial:
            self._synced = True
            self._synced_event.set()
            log.info("%s: synced %d objects at resourceVersion %s", self.name, len(store), resource_version)

    def apply(self, event_type: str, raw: dict[str, object]) -> None:
        """One watch event (ADDED, MODIFIED or DELETED)."""
        key, version = key_and_version(raw)  # the metadata read once
        store = self._items
        if event_type == DELETED:
            self._rejected.discard(key)
            old = store.pop(key, None)
            if old is None:
                return
            final = self._decode(key, raw, quiet=True)
            self._call(self._handler.on_delete, final if final is not None else old[0])
            return
        obj = self._decode(key, raw)
        if obj is None:
            return
        old = store.get(key)
        store[key] = (obj, version)
        if old is None:
            self._call(self._handler.on_add, obj, False)
        else:
            self._call(self._handler.on_update, old[0], obj)

    # --- helpers -----------------------------------------------------------------------------

    def _decode(self, key: str, raw: dict[str, object], *, quiet: bool = False) -> T | None:
        meta = raw.get("metadata")
        if isinstance(meta, dict):
            meta.pop("managedFields", None)  # the raw dict is ours: decoded for this event only
        try:
            obj = self._parse(raw)
        except Exception as exc:
            if not quiet and key not in self._rejected:
                self._rejected.add(key)
                log.warning("%s: skipping %s %s: %s: %s", self.name, self.resource.kind, key or "<unnamed>",
                            type(exc).__name__, exc)
            return None
        if self._rejected:
            self._rejected.discard(key)
        return obj

    def _call(self, method: Callable[..., object], *args: object) -> None:
        try:
            method(*args)
        except Exception:
            log.exception("%s: event handler %s failed", self.name, getattr(method, "__name__", method))

