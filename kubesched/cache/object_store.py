"""Objects of kinds the scheduler does not model, kept for plugins (``Handle.object_store``).

One ``ObjectStore`` per kind, fed by whoever owns the cluster view: the simulator
from the snapshot, the live mode from an informer. Each change is passed to the
plugins' handlers and announced as a cluster event, so queueing hints can react to
it as they do to nodes and pods.
"""

from __future__ import annotations

from typing import Callable

from ..framework.events import ActionType, ClusterEvent
from ..framework.handle import JSONObject, ObjectHandler

__all__ = ["ObjectStore", "ObjectStores", "object_key", "resource_name"]

EventSink = Callable[[ClusterEvent, object | None, object | None], None]


def resource_name(api_version: str, plural: str) -> str:
    """Upstream's event resource for a kind: ``<plural>.<version>.<group>`` (``<plural>`` in the core group)."""
    group, _, version = api_version.rpartition("/")
    return f"{plural}.{version}.{group}" if group else plural


def object_key(obj: JSONObject) -> tuple[str, str]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return "", ""
    namespace, name = meta.get("namespace", ""), meta.get("name", "")
    return (namespace if isinstance(namespace, str) else ""), (name if isinstance(name, str) else "")


class ObjectStore:
    """Objects of one kind by (namespace, name), with their change handlers."""

    def __init__(self, api_version: str, kind: str, plural: str, sink: EventSink | None = None) -> None:
        self._api_version = api_version
        self._kind = kind
        self._resource = resource_name(api_version, plural)
        self.plural = plural  # the live mode watches /apis/<group>/<version>/<plural>
        self._objects: dict[tuple[str, str], JSONObject] = {}
        self._handlers: list[ObjectHandler] = []
        self._sink = sink

    @property
    def api_version(self) -> str:
        return self._api_version

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def resource(self) -> str:
        return self._resource

    def get(self, namespace: str, name: str) -> JSONObject | None:
        return self._objects.get((namespace, name))

    def list(self, namespace: str | None = None) -> list[JSONObject]:
        if namespace is None:
            return list(self._objects.values())
        return [o for (ns, _), o in self._objects.items() if ns == namespace]

    def add_handler(self, handler: ObjectHandler) -> None:
        """Register a handler; it is first told of every object already here."""
        self._handlers.append(handler)
        for obj in list(self._objects.values()):
            handler.on_object_add(obj)

    def set_sink(self, sink: EventSink | None) -> None:
        self._sink = sink

    # -- fed by the cluster view --------------------------------------------------
    def upsert(self, obj: JSONObject) -> None:
        key = object_key(obj)
        old = self._objects.get(key)
        self._objects[key] = obj
        if old is None:
            for handler in self._handlers:
                handler.on_object_add(obj)
            self._emit(ActionType.ADD, None, obj)
        else:
            for handler in self._handlers:
                handler.on_object_update(old, obj)
            self._emit(ActionType.UPDATE, old, obj)

    def delete(self, obj: JSONObject) -> None:
        old = self._objects.pop(object_key(obj), None)
        if old is None:
            return
        for handler in self._handlers:
            handler.on_object_delete(old)
        self._emit(ActionType.DELETE, old, None)

    def _emit(self, action: ActionType, old: JSONObject | None, new: JSONObject | None) -> None:
        if self._sink is not None:
            self._sink(ClusterEvent(self._resource, action), old, new)


class ObjectStores:
    """The stores of every kind plugins asked for, by (apiVersion, kind)."""

    def __init__(self) -> None:
        self._stores: dict[tuple[str, str], ObjectStore] = {}
        self._sink: EventSink | None = None

    def get_or_create(self, api_version: str, kind: str, plural: str) -> ObjectStore:
        store = self._stores.get((api_version, kind))
        if store is None:
            store = self._stores[(api_version, kind)] = ObjectStore(api_version, kind, plural, self._sink)
        return store

    def find(self, api_version: str, kind: str) -> ObjectStore | None:
        return self._stores.get((api_version, kind))

    def all(self) -> list[ObjectStore]:
        return list(self._stores.values())

    def set_sink(self, sink: EventSink) -> None:
        """Where changes go as cluster events (the scheduling queue)."""
        self._sink = sink
        for store in self._stores.values():
            store.set_sink(sink)
