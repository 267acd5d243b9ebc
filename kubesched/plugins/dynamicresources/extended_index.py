"""Which DeviceClass backs an extended resource (upstream's ``ExtendedResourceCache``),
shared by DynamicResources and NodeResourcesFit through the DeviceClass store.

A class backs ``deviceclass.resource.kubernetes.io/<its name>`` and, when it sets one,
its ``spec.extendedResourceName``; of several classes naming the same resource, the one
created last wins (the smallest name on a tie).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

from ...framework import Handle
from ...framework.handle import JSONObject, ObjectStore
from ...objects.resources import is_extended_resource
from .names import API_VERSION, DEVICE_CLASS, DEVICE_CLASS_PREFIX, PLURALS

__all__ = ["ExtendedResourceIndex", "extended_resource_index", "is_dra_extended_resource"]


def is_dra_extended_resource(name: str) -> bool:
    """``IsDRAExtendedResourceName``: a name a DeviceClass could back (an extended resource, or
    ``deviceclass.resource.kubernetes.io/<class>``)."""
    return is_extended_resource(name) or name.startswith(DEVICE_CLASS_PREFIX)


def _fields(obj: JSONObject) -> tuple[str, str, str | None]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    extended = spec.get("extendedResourceName")
    return str(meta.get("name") or ""), str(meta.get("creationTimestamp") or ""), extended if isinstance(extended, str) else None


class ExtendedResourceIndex:
    def __init__(self, store: ObjectStore) -> None:
        self._classes: dict[str, tuple[str, str | None]] = {}  # class name -> (created, extendedResourceName)
        self._by_resource: dict[str, str] | None = None
        self.resource = store.resource  # the cluster-event resource of DeviceClass changes
        store.add_handler(self)

    def on_object_add(self, obj: JSONObject) -> None:
        name, created, extended = _fields(obj)
        self._classes[name] = (created, extended)
        self._by_resource = None

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self._classes.pop(_fields(old)[0], None)
        self.on_object_add(new)

    def on_object_delete(self, obj: JSONObject) -> None:
        self._classes.pop(_fields(obj)[0], None)
        self._by_resource = None

    def class_name_for(self, resource: str) -> str | None:
        """The name of the class backing ``resource``; None when no class does."""
        if self._by_resource is None:
            self._by_resource = self._build()
        return self._by_resource.get(resource)

    def backs(self, resource: str) -> bool:
        return self.class_name_for(resource) is not None

    def empty(self) -> bool:
        return not self._classes

    def _build(self) -> dict[str, str]:
        out: dict[str, str] = {}
        chosen: dict[str, tuple[str, str]] = {}  # resource -> (created, class) of the winner
        for name, (created, extended) in self._classes.items():
            out[DEVICE_CLASS_PREFIX + name] = name
            if extended is None:
                continue
            current = chosen.get(extended)
            if current is None or created > current[0] or (created == current[0] and name < current[1]):
                chosen[extended] = (created, name)
        for resource, (_, name) in chosen.items():
            out[resource] = name
        return out


_INDEXES: "weakref.WeakKeyDictionary[ObjectStore, ExtendedResourceIndex]" = weakref.WeakKeyDictionary()


def extended_resource_index(handle: Handle) -> ExtendedResourceIndex:
    """The index over this scheduler's DeviceClass store (one per store, shared by plugins)."""
    store = handle.object_store(API_VERSION, DEVICE_CLASS, PLURALS[DEVICE_CLASS])
    found = _INDEXES.get(store)
    if found is None:
        found = _INDEXES[store] = ExtendedResourceIndex(store)
    return found
