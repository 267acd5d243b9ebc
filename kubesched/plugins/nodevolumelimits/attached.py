"""The attachable volumes of the pods placed on each node, kept as per-driver count columns.

Upstream's Filter walks the pods of every node it asks about; kubesched answers for all
nodes at once from columns kept current as pods come and go (a ``PodObserver``): per
driver, the number of distinct volumes attached on each row, the rows each volume is
attached on, each row's limit and where each in-tree plugin is migrated. Which driver
and handle a pod's claim stands for depends on claims, PVs, classes and CSINodes, so
any change to those throws the columns away; they are rebuilt from the placed pods on
the next filter.
"""

from __future__ import annotations

from typing import Callable, Mapping, overload

import numpy as np

from ...framework import BoolArray, IntArray, SnapshotView
from ...framework.handle import JSONObject
from ...objects import NodeInfo, PodInfo
from ...objects.storage import CSINodeInfo
from ..volumebinding.index import StorageIndex
from .migration import IN_TREE_PLUGINS, migration_on

__all__ = ["AttachedVolumes", "Entry", "NodeLimits", "Resolver", "counts_on", "node_limits", "over_limit"]

# One attachable volume: (in-tree plugin it is migrated from, or ""; unique name; CSI driver).
Entry = tuple[str, str, str]
Resolver = Callable[[PodInfo], list[Entry]]
# What a node's CSINode says: per driver, its attach limit; the in-tree plugins it migrated.
NodeLimits = tuple[Mapping[str, int], frozenset[str]]

_NO_LIMITS: NodeLimits = ({}, frozenset())


def node_limits(csi_node: CSINodeInfo | None) -> NodeLimits:
    """A node's per-driver limits and migrated plugins; both forms of Filter read a node
    through this, the columns row by row, the per-node form for the node it is given."""
    if csi_node is None:
        return _NO_LIMITS
    return csi_node.limits, frozenset(p for p in IN_TREE_PLUGINS if migration_on(csi_node, p))


def counts_on(plugin: str, migrated: frozenset[str]) -> bool:
    """Whether a volume counts on a node: a CSI volume always, one of an in-tree plugin only
    where that plugin is migrated."""
    return not plugin or plugin in migrated


@overload
def over_limit(new: int, have: int, limit: int) -> bool: ...
@overload
def over_limit(new: IntArray, have: IntArray, limit: IntArray) -> BoolArray: ...
def over_limit(new: int | IntArray, have: int | IntArray, limit: int | IntArray) -> bool | BoolArray:
    """The node fails when the pod brings new volumes of a driver the node limits and the
    attached plus new ones exceed the limit (``limit`` < 0: no limit). Elementwise on
    columns (batch form) as on counts (per-node form)."""
    return (new > 0) & (limit >= 0) & (have + new > limit)


class AttachedVolumes:
    def __init__(self, index: StorageIndex, resolve: Resolver) -> None:
        self.index = index
        self.resolve = resolve
        self.dirty = True
        self.size = 0
        self.counts: dict[str, IntArray] = {}  # driver -> distinct volumes attached, per row
        self.limits: dict[str, IntArray] = {}  # driver -> allocatable count per row (-1: none)
        self.migrated: dict[str, BoolArray] = {}  # in-tree plugin -> rows whose CSINode migrated it
        self.migrated_on: list[frozenset[str]] = []  # row -> the plugins its CSINode migrated
        self.where: dict[str, dict[int, int]] = {}  # unique volume -> row -> pods using it there
        for kind in ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode"):
            index.stores[kind].add_handler(self)

    # -- invalidation: ObjectHandler of the storage stores, PodObserver's nodes_changed --------
    def on_object_add(self, obj: JSONObject) -> None:
        self.dirty = True

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self.dirty = True

    def on_object_delete(self, obj: JSONObject) -> None:
        self.dirty = True

    def nodes_changed(self) -> None:
        self.dirty = True

    # -- PodObserver ------------------------------------------------------------------------
    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None:
        if not self.dirty and pod.volumes and node.row < self.size:
            self._apply(pod, node.row, 1)

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None:
        if not self.dirty and pod.volumes and node.row < self.size:
            self._apply(pod, node.row, -1)

    def _apply(self, pod: PodInfo, row: int, delta: int) -> None:
        migrated = self.migrated_on[row]
        for plugin, unique, driver in self.resolve(pod):
            if not counts_on(plugin, migrated):
                continue
            rows = self.where.setdefault(unique, {})
            before = rows.get(row, 0)
            after = before + delta
            if after > 0:
                rows[row] = after
            else:
                rows.pop(row, None)
                if not rows:
                    del self.where[unique]
            if (before == 0) != (after <= 0):  # the volume appeared on, or left, the node
                column = self.counts.get(driver)
                if column is None:
                    column = self.counts[driver] = np.zeros(self.size, dtype=np.int64)
                column[row] += 1 if after > 0 else -1

    # -- the columns, rebuilt when stale ------------------------------------------------------
    def current(self, snapshot: SnapshotView) -> "AttachedVolumes":
        if self.dirty or self.size != snapshot.table.size:
            self._rebuild(snapshot)
        return self

    def _rebuild(self, snapshot: SnapshotView) -> None:
        size = snapshot.table.size
        self.size, self.counts, self.limits, self.where = size, {}, {}, {}
        self.migrated = {plugin: np.zeros(size, dtype=bool) for plugin in IN_TREE_PLUGINS}
        self.migrated_on = [_NO_LIMITS[1]] * size
        infos = snapshot.node_infos
        for row in range(size):
            info = infos[row]
            if info is None:
                continue
            limits, migrated = node_limits(self.index.csi_node(info.node.name))
            for driver, limit in limits.items():
                column = self.limits.get(driver)
                if column is None:
                    column = self.limits[driver] = np.full(size, -1, dtype=np.int64)
                column[row] = limit
            self.migrated_on[row] = migrated
            for plugin in migrated:
                self.migrated[plugin][row] = True
        self.dirty = False
        for row in range(size):
            info = infos[row]
            if info is not None:
                for pod in info.pods.values():
                    if pod.volumes:
                        self._apply(pod, row, 1)
