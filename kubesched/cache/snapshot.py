"""``Snapshot``: what one scheduling cycle reads of the cache, and a pod-group cycle's placement.

Its own module because the cache's bookkeeping is one job and the view a cycle reads
another; ``cache.py`` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol, Sequence, cast

import numpy as np

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from .group_cycle_lists import GroupCycleLists
from .node_table import NodeTable

__all__ = ["CacheView", "PlacementNodes", "Snapshot", "SnapshotError"]


class CacheView(Protocol):
    """What the snapshot reads of the cache (``Cache``)."""

    table: NodeTable
    nodes: dict[str, NodeInfo]
    by_row: list[NodeInfo | None]
    namespaces: dict[str, dict[str, str]]
    namespace_generation: int
    group_cycle: GroupCycleLists | None

    def namespace_labels(self, namespace: str) -> dict[str, str]: ...


class SnapshotError(RuntimeError):
    """A placement the snapshot cannot take (a node that is not in it)."""


@dataclass(slots=True, frozen=True)
class PlacementNodes:
    """The nodes a pod-group cycle may use while it tries one placement: their rows in the
    placement's order (the node walk's order) and as a mask over the table's rows."""

    name: str
    order: np.ndarray
    mask: np.ndarray


class Snapshot:
    """What one scheduling cycle reads: the node infos, the node table and namespaces.

    Cycles run one at a time and the cache only changes between them, so the
    snapshot is a view on the cache rather than a copy.

    A pod-group cycle may restrict the scheduler's node walk to one placement's nodes
    (``assume_placement``, upstream's ``AssumePlacement``); plugins still see every node.
    """

    __slots__ = ("_cache", "placement", "_node_tuple", "__weakref__")

    def __init__(self, cache: CacheView) -> None:
        self._cache = cache
        self.placement: PlacementNodes | None = None
        self._node_tuple: tuple[int, tuple[NodeInfo, ...]] | None = None  # (node generation, nodes)

    # -- placements (pod-group cycles) ----------------------------------------------
    def assume_placement(self, name: str, rows: Sequence[int] | np.ndarray) -> None:
        """Restrict the node walk to ``rows`` (table rows, in the walk's order) until
        ``forget_placement``. A placement of every node is no restriction, as upstream's.
        Raises ``SnapshotError`` for a row that holds no node."""
        table = self._cache.table
        order = np.asarray(rows, dtype=np.int64)
        if len(order) == table.num_nodes:
            self.placement = None
            return
        size = table.size
        if len(order) and (int(order.min()) < 0 or int(order.max()) >= size or not table.alive[order].all()):
            self.placement = None
            raise SnapshotError(f"placement {name!r} names a node that is not in the snapshot")
        mask = np.zeros(size, dtype=bool)
        mask[order] = True
        self.placement = PlacementNodes(name, order, mask)

    def forget_placement(self) -> None:
        self.placement = None

    @property
    def order_in_placement(self) -> np.ndarray:
        """Rows the node walk visits, in order: the placement's, else every node's (``table.order``)."""
        placement = self.placement
        return self._cache.table.order if placement is None else placement.order

    @property
    def num_nodes_in_placement(self) -> int:
        """upstream's ``NumNodesInPlacement``: the placement's size, else every node."""
        placement = self.placement
        return self._cache.table.num_nodes if placement is None else len(placement.order)

    def in_placement(self, row: int) -> bool:
        """Whether the node at ``row`` may be used (always, outside a placement)."""
        placement = self.placement
        return placement is None or bool(placement.mask[row])

    @property
    def table(self) -> NodeTable:
        return self._cache.table

    @property
    def node_infos(self) -> list[NodeInfo | None]:
        """Node infos by table row (None for a freed row)."""
        return self._cache.by_row

    @property
    def num_nodes(self) -> int:
        return self._cache.table.num_nodes

    def get(self, name: str) -> NodeInfo | None:
        return self._cache.nodes.get(name)

    def list(self) -> list[NodeInfo]:
        """Node infos in snapshot order."""
        by_row = self._cache.by_row
        return [by_row[r] for r in self._cache.table.order]

    def node_tuple(self) -> tuple[NodeInfo, ...]:
        """Node infos in snapshot order (``list()``) as one tuple, the same object until a node
        is added, removed or changed in what the scheduler reads (``table.node_generation``):
        a pod-group cycle's parent placement, built once rather than per group cycle, by
        which placement generators recognise the parent they derived domains from before."""
        table = self._cache.table
        kept = self._node_tuple
        if kept is not None and kept[0] == table.node_generation:
            return kept[1]
        # rows in the order are live: no None among them
        nodes = cast("tuple[NodeInfo, ...]", tuple(map(self._cache.by_row.__getitem__, table.order.tolist())))
        self._node_tuple = (table.node_generation, nodes)
        return nodes

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return self._cache.namespace_labels(namespace)

    @property
    def namespaces(self) -> dict[str, dict[str, str]]:
        return self._cache.namespaces

    @property
    def namespace_generation(self) -> int:
        return self._cache.namespace_generation

    def pods(self) -> Iterable[PodInfo]:
        """Every pod placed on a node (bound or assumed)."""
        return (pod for info in self._cache.nodes.values() for pod in info.pods.values())

    def pod_group_cycle_lists(self) -> GroupCycleLists | None:
        """While a pod-group cycle runs, what upstream's per-cycle snapshot lists leave out of
        the pods the cycle placed (``framework.views.PodGroupCycleLists``); None otherwise."""
        return self._cache.group_cycle
