"""A dry run that takes pods off their nodes and puts every node back after (upstream's
``Snapshot.BackupSnapshot``, for workload-aware preemption).

Upstream copies every NodeInfo of the snapshot, lets preemption remove victims from the
copies while the pod group's algorithm is run again and again on them, then swaps the
originals back. kubesched's snapshot is a view of the cache, so the dry run changes the
cache's nodes themselves, through the same path as a pod that leaves or joins a node (the
node's sums, the node table, the pod observers' indexes), and ``restore`` undoes what is
left of it: the pods still off their nodes go back, and each node changed gets back its
pods' order, which later preemptions read. Only the nodes change: the cache still knows
every pod (assumed, bound, members of their groups), as upstream's cache does while it
works on the copies.

One dry run at a time per cache (upstream's "cannot stack backups"); pods the pod group's
algorithm assumes meanwhile are forgotten by it before it returns.
"""

from __future__ import annotations

import weakref

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from .cache import Cache, CacheError

__all__ = ["SnapshotBackup"]

_BACKED_UP: "weakref.WeakSet[Cache]" = weakref.WeakSet()


class SnapshotBackup:
    """The cluster as a PodGroupPostFilter plugin may change it (``DryRunSnapshot``)."""

    def __init__(self, cache: Cache) -> None:
        if cache in _BACKED_UP:
            raise CacheError("cannot stack backups")
        _BACKED_UP.add(cache)
        self._cache = cache
        self._removed: dict[str, tuple[PodInfo, NodeInfo]] = {}  # uid -> (the node's record, its node)
        # node name -> (node, its pods, pods with affinity, with required anti-affinity) before the first change
        self._orders: dict[str, tuple[NodeInfo, dict[str, PodInfo], dict[str, PodInfo], dict[str, PodInfo]]] = {}
        self._open = True

    def list(self) -> list[NodeInfo]:
        return self._cache.snapshot().list()

    def get(self, name: str) -> NodeInfo | None:
        return self._cache.nodes.get(name)

    def remove_pod(self, pod: PodInfo) -> None:
        """Take ``pod`` off its node; CacheError when it is on none (or the dry run is over)."""
        self._check_open()
        info = self._cache.nodes.get(pod.node_name)
        placed = info.pods.get(pod.uid) if info is not None else None
        if info is None or placed is None:
            raise CacheError(f"pod {pod.key} is not on node {pod.node_name!r}")
        if info.name not in self._orders:
            self._orders[info.name] = (info, dict(info.pods), dict(info.pods_with_affinity),
                                       dict(info.pods_with_required_anti_affinity))
        self._cache._unplace(placed, info)
        self._removed[pod.uid] = (placed, info)

    def add_pod(self, pod: PodInfo) -> None:
        """Put back a pod ``remove_pod`` took off (at the end of its node's pods, as upstream's
        ``AddPodInfo``); CacheError for any other pod."""
        self._check_open()
        found = self._removed.pop(pod.uid, None)
        if found is None:
            raise CacheError(f"pod {pod.key} was not taken off its node in this dry run")
        placed, info = found
        self._cache._place(placed, info)

    def restore(self) -> None:
        """Every node as it was before the dry run; the backup is spent."""
        if not self._open:
            return
        self._open = False
        try:
            for placed, info in self._removed.values():
                self._cache._place(placed, info)
            for info, pods, with_affinity, with_anti_affinity in self._orders.values():
                info.pods = pods
                info.pods_with_affinity = with_affinity
                info.pods_with_required_anti_affinity = with_anti_affinity
        finally:
            self._removed.clear()
            self._orders.clear()
            _BACKED_UP.discard(self._cache)

    def _check_open(self) -> None:
        if not self._open:
            raise CacheError("the dry run is over: its snapshot backup was restored")
