"""The storage objects the four volume plugins read, parsed once and indexed (upstream's listers).

Every volume plugin of a profile shares one ``StorageIndex`` (it hangs off the
PersistentVolume store, one per scheduler): the stores' handlers keep typed records
current as objects come and go, so a cycle reads dictionaries instead of parsing
documents. Objects that fail to parse (live, a cluster can hold anything) are left
out, as if absent; snapshots are validated when loaded.
"""

from __future__ import annotations

import logging
import weakref
from typing import Callable, Generic, TypeVar

from ...framework.handle import Handle, JSONObject, ObjectStore
from ...objects.errors import ObjectError
from ...objects.storage import (
    STORAGE_KINDS,
    CSIDriverInfo,
    CSINodeInfo,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    parse_capacity,
    parse_csi_driver,
    parse_csi_node,
    parse_pv,
    parse_pvc,
    parse_storage_class,
)

__all__ = ["StorageIndex", "storage_index", "STORAGE_OBJECT_KINDS"]

log = logging.getLogger(__name__)

# ``PluginSpec.object_kinds`` of the volume plugins.
STORAGE_OBJECT_KINDS: tuple[tuple[str, str], ...] = tuple((v, k) for v, k, _ in STORAGE_KINDS)

T = TypeVar("T")
K = TypeVar("K")


def _key(obj: JSONObject) -> tuple[str, str]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return "", ""
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class _Feed(Generic[T]):
    """An ``ObjectHandler`` keeping one kind's typed records by (namespace, name)."""

    def __init__(self, parse: Callable[[JSONObject], T], on_change: Callable[[T | None, T | None], None]) -> None:
        self.parse = parse
        self.records: dict[tuple[str, str], T] = {}
        self.on_change = on_change

    def _parse(self, obj: JSONObject) -> T | None:
        try:
            return self.parse(obj)
        except ObjectError as err:
            log.warning("ignoring unreadable storage object %s: %s", "/".join(_key(obj)), err)
            return None

    def on_object_add(self, obj: JSONObject) -> None:
        record = self._parse(obj)
        old = self.records.pop(_key(obj), None)
        if record is not None:
            self.records[_key(obj)] = record
        self.on_change(old, record)

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self.on_object_add(new)

    def on_object_delete(self, obj: JSONObject) -> None:
        old = self.records.pop(_key(obj), None)
        self.on_change(old, None)


class StorageIndex:
    """PVs (also by storage class), claims, classes, CSINodes, CSIDrivers and capacities."""

    def __init__(self, handle: Handle) -> None:
        self.stores: dict[str, ObjectStore] = {
            kind: handle.object_store(version, kind, plural) for version, kind, plural in STORAGE_KINDS
        }
        self.pvs_by_class: dict[str, dict[str, PersistentVolume]] = {}
        self._pvs = self._feed("PersistentVolume", parse_pv, self._pv_changed)
        self._pvcs = self._feed("PersistentVolumeClaim", parse_pvc, None)
        self._classes = self._feed("StorageClass", parse_storage_class, None)
        self._csi_nodes = self._feed("CSINode", parse_csi_node, None)
        self._csi_drivers = self._feed("CSIDriver", parse_csi_driver, None)
        self._capacities = self._feed("CSIStorageCapacity", parse_capacity, None)

    def _feed(self, kind: str, parse: Callable[[JSONObject], T],
              on_change: Callable[[T | None, T | None], None] | None) -> dict[tuple[str, str], T]:
        feed: _Feed[T] = _Feed(parse, on_change or (lambda old, new: None))
        self.stores[kind].add_handler(feed)
        return feed.records

    def _pv_changed(self, old: PersistentVolume | None, new: PersistentVolume | None) -> None:
        if old is not None:
            self.pvs_by_class.get(old.storage_class, {}).pop(old.name, None)
        if new is not None:
            self.pvs_by_class.setdefault(new.storage_class, {})[new.name] = new

    def resource(self, kind: str) -> str:
        """The cluster-event resource of a storage kind's changes."""
        return self.stores[kind].resource

    # -- listers ------------------------------------------------------------------
    def pv(self, name: str) -> PersistentVolume | None:
        return self._pvs.get(("", name))

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._pvcs.get((namespace, name))

    def storage_class(self, name: str) -> StorageClass | None:
        return self._classes.get(("", name))

    def csi_node(self, name: str) -> CSINodeInfo | None:
        return self._csi_nodes.get(("", name))

    def csi_driver(self, name: str) -> CSIDriverInfo | None:
        return self._csi_drivers.get(("", name))

    def capacities(self) -> list[CSIStorageCapacity]:
        return list(self._capacities.values())

    def pvs_of_class(self, storage_class: str) -> list[PersistentVolume]:
        return list(self.pvs_by_class.get(storage_class, {}).values())


_INDEXES: "weakref.WeakKeyDictionary[object, StorageIndex]" = weakref.WeakKeyDictionary()


def storage_index(handle: Handle) -> StorageIndex:
    """The index shared by every volume plugin of the scheduler that owns ``handle``'s stores."""
    version, kind, plural = STORAGE_KINDS[0]
    anchor = handle.object_store(version, kind, plural)
    index = _INDEXES.get(anchor)
    if index is None:
        index = _INDEXES[anchor] = StorageIndex(handle)
    return index
