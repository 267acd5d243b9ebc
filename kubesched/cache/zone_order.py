"""The order in which the scheduler visits nodes: upstream's ``nodeTree``, zones interleaved.

Upstream's snapshot lists nodes zone by zone in turn (the first node of every zone,
then the second, ...), and that order decides which nodes a cycle looks at first and
how ties fall. It depends only on each node's zone and arrival, so it is kept here,
apart from the columns: patched in O(1) for a cluster of one zone, rebuilt with array
operations on next use when zones interleave.
"""

from __future__ import annotations

import numpy as np

from ..objects.node import Node

__all__ = ["REGION_LABELS", "ZONE_LABELS", "ZoneOrder", "zone_key"]

# ``GetZoneKey`` looks for the deprecated beta label first: a node carrying both is filed
# under its beta zone (region). Only the node order uses this key; PodTopologySpread and
# VolumeZone read the labels their own way, as upstream's do.
ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")


def zone_key(labels: dict[str, str]) -> str:
    """``utilnode.GetZoneKey``: region and zone, or "" when the node has neither (a label
    present with an empty value still wins over the other one, as upstream's lookup)."""
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class ZoneOrder:
    """Rows by zone in arrival order, and the interleaved ``order``; see ``NodeTable``."""

    size: int  # NodeColumns': rows in use or freed

    def __init__(self) -> None:
        self._zones: dict[str, list[int]] = {}  # zone key -> rows in arrival order
        self._order: np.ndarray | None = None
        self._order_is_identity: bool | None = None

    def _join_zone(self, row: int, node: Node) -> None:
        self._zones.setdefault(zone_key(node.labels), []).append(row)

    def _remove_from_zone(self, row: int, node: Node) -> None:
        key = zone_key(node.labels)
        rows = self._zones.get(key)
        if rows and row in rows:
            rows.remove(row)
            if not rows:
                del self._zones[key]

    def _patch_order(self, row: int, change: str) -> None:
        """``change``: the row was "added" (last of its zone), "removed", or moved zones ("rebuild")."""
        self._order_is_identity = None
        order = self._order
        if order is None:
            return
        if change == "added" and len(self._zones) == 1:  # one zone: the row simply comes last
            self._order = np.append(order, np.int64(row))
        elif change == "removed" and len(self._zones) <= 1:
            self._order = order[order != row]
        else:  # several zones interleave: rebuilt (with array operations) on next use
            self._order = None

    @property
    def order(self) -> np.ndarray:
        """Live rows in upstream's snapshot order: zones interleaved round-robin (``nodeTree``)."""
        if self._order is None:
            zones = [np.asarray(rows, dtype=np.int64) for rows in self._zones.values()]
            if len(zones) <= 1:
                self._order = zones[0] if zones else np.zeros(0, dtype=np.int64)
            else:  # the i-th row of every zone, zone by zone, then the (i+1)-th ...
                depth = np.concatenate([np.arange(len(z)) for z in zones])
                zone = np.concatenate([np.full(len(z), k) for k, z in enumerate(zones)])
                self._order = np.concatenate(zones)[np.lexsort((zone, depth))]
        return self._order

    @property
    def num_nodes(self) -> int:
        return len(self.order)

    @property
    def order_is_identity(self) -> bool:
        """Whether ``order`` is every row in row order (no freed rows, one zone or none)."""
        found = self._order_is_identity
        if found is None:
            order = self.order
            found = len(order) == self.size and bool((order == np.arange(self.size)).all())
            self._order_is_identity = found
        return found
