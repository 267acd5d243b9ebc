"""The columnar node table: one row per node, one numpy column per quantity.

Batch plugins read whole columns and answer for every node at once; the cache
keeps the columns current, row by row, as pods and nodes come and go. Columns that
depend only on node objects (label values, taint sets, images, the zone order) are
built on first use and then patched at the one row a node add, update or removal
touches, so that node churn costs what it changes, not a rebuild over every node.

This module joins the parts and says what a node change touches; each part has its
module: the rows and quantities (``node_columns``), pod totals, the row log and
``row_cached`` (``pod_accounting``), node-derived indexes (``node_indexes``) and the
zone order (``zone_order``).
"""

from __future__ import annotations

from ..objects.node import Node
from .node_indexes import NodeIndexes
from .pod_accounting import PodAccounting
from .zone_order import REGION_LABELS, ZONE_LABELS, ZoneOrder, zone_key

__all__ = ["REGION_LABELS", "ZONE_LABELS", "NodeTable", "zone_key"]


class NodeTable(PodAccounting, NodeIndexes, ZoneOrder):
    """Per-node columns, indexed by row. Rows of removed nodes are reused.

    Implements ``framework.NodeTableView`` (the read-only view batch plugins get); the
    scheduler's cache is the only writer.
    """

    def __init__(self, capacity: int = 64) -> None:
        PodAccounting.__init__(self, capacity)
        NodeIndexes.__init__(self)
        ZoneOrder.__init__(self)
        self.node_generation = 0  # bumps on any node change; derived columns follow it

    def add_node(self, node: Node) -> int:
        row = self._claim_row()
        self._join_zone(row, node)
        self.names[row] = node.name
        self.nodes[row] = node
        self._write_columns(row, node)
        self._node_changed(row, None, node, order="added")
        return row

    def update_node(self, row: int, node: Node) -> bool:
        """A new version of the node at ``row``; False when nothing the scheduler reads changed.

        Such an update (a heartbeat, a condition) costs O(1). Otherwise only
        what depends on the changed parts is patched at this row: label columns and
        selector masks on a label change, the zone order only when the zone moved, taint
        sets on a taint change, the image index on an image change; allocatable is
        written in place.
        """
        old = self.nodes[row]
        if old is None:
            self.names[row] = node.name
            self.nodes[row] = node
            self._write_columns(row, node)
            self._node_changed(row, None, node, order="rebuild")
            return True
        labels = old.labels != node.labels
        taints = old.taints != node.taints
        images = old.images != node.images
        columns = old.allocatable != node.allocatable or old.unschedulable != node.unschedulable
        # Annotations feed no column, but plugins read them from ``nodes``: their caches
        # (``node_derived``) must see the node change.
        annotations = old.annotations != node.annotations
        self.nodes[row] = node
        if not (labels or taints or images or columns or annotations):
            return False
        moved = labels and zone_key(old.labels) != zone_key(node.labels)
        if moved:
            self._remove_from_zone(row, old)
            self._join_zone(row, node)
        if columns:
            self._write_columns(row, node)
        self._node_changed(row, old, node, order="rebuild" if moved else "")
        return True

    def remove_node(self, row: int) -> None:
        node = self.nodes[row]
        if node is not None:
            self._remove_from_zone(row, node)
        self._forget_ports(row)
        self._release_row(row)
        self._node_changed(row, node, None, order="removed")

    def _node_changed(self, row: int, old: Node | None, new: Node | None, order: str) -> None:
        """One row's node came (``old`` None), went (``new`` None) or changed: patch what
        is derived from node objects at that row, as a fresh build would have it.

        ``order`` says what happened to the zone order: "added" (the row joined the end of
        its zone), "removed", "rebuild" (it moved between zones) or "" (unchanged).
        ``node_generation`` moves, since plugins key their own node-derived caches
        (``node_derived``, layouts) on it without saying which parts they read.
        """
        if order:
            self._patch_order(row, order)
        self._patch_indexes(row, old, new)
        self.node_generation += 1
