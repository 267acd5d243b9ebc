"""The first pass of filtering with nominated pods, kept current from cycle to cycle.

Every pod filtered is checked again on each node with pods nominated at its priority
or above (``apply_nominated_pods``). With many preemptors waiting, that is a Python
call per nominated node per cycle. When the pod's filters are node-local (see
``dry_run_cache``), a node's first-pass verdict for pods of one shape changes only
when the node, its pods or its nominated pods change: the verdicts are kept and only
those nodes are filtered again, found through the node table's log of changed rows
and the nominator's log of changed nominations.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ..cycle_state import CycleState
from ..runtime import Framework
from ..status import Status
from ..views import SnapshotView
from .dry_run_cache import NODE_LOCAL_FILTERS, pod_shape
from .protocols import NominatedPods

__all__ = ["NominatedVerdicts"]

Verdict = Callable[[NodeInfo], "Status | None"]


class NominatedVerdicts:
    """First-pass verdicts of nominated nodes for one pod shape at a time, as arrays: slot
    ``i`` holds a node's row and its status (an index into ``statuses``, -1 for a pass),
    so a cycle applies them all with a few array operations."""

    __slots__ = ("_key", "_node_generation", "_pod_generation", "_nominations", "_slots", "_free",
                 "rows", "status", "statuses", "_status_ids")

    def __init__(self) -> None:
        self._key: Hashable | None = None
        self._node_generation = -1
        self._pod_generation = -1
        self._nominations = -1
        self._reset()

    def _reset(self) -> None:
        self._slots: dict[str, int] = {}
        self._free: list[int] = []
        self.rows = np.full(64, -1, dtype=np.int64)
        self.status = np.full(64, -1, dtype=np.int64)
        self.statuses: list[Status] = []  # equal verdicts share one entry
        self._status_ids: dict[Status, int] = {}

    @staticmethod
    def key(fwk: Framework, state: CycleState, pod: PodInfo) -> Hashable | None:
        """What the verdicts depend on besides the nodes; None when they cannot be kept."""
        skip = state.skip_filter_plugins
        if any(name not in NODE_LOCAL_FILTERS and name not in skip for name in fwk.plugin_names("filter")):
            return None
        shape = pod_shape(pod)
        return None if shape is None else (id(fwk), shape, skip)

    def slot_of(self, name: str) -> int | None:
        return self._slots.get(name)

    def update(self, key: Hashable, snapshot: SnapshotView, nominator: NominatedPods, verdict: Verdict) -> None:
        """Bring every nominated node's verdict for pods of this key up to date, filtering
        again only what changed. ``verdict`` counts every nominated pod, so the verdict of
        the node the pod at hand is nominated to counts its own nomination: the caller
        leaves that slot out and asks for that node anew."""
        table = snapshot.table
        changed = self._changed(key, table.node_generation, table, nominator)
        if changed is None:
            self._reset()
            changed = set(nominator.nominated_node_names())
        for name in changed:
            node = snapshot.get(name)
            if node is None or not nominator.nominated_pods_for_node(name):
                self._drop(name)
                continue
            self._set(name, node.row, verdict(node))
        self._key = key
        self._node_generation = table.node_generation
        self._pod_generation = table.pod_generation
        self._nominations = nominator.version

    def _set(self, name: str, row: int, status: Status | None) -> None:
        slot = self._slots.get(name)
        if slot is None:
            if self._free:
                slot = self._free.pop()
            else:
                slot = len(self._slots)
                if slot >= len(self.rows):
                    self.rows = np.concatenate((self.rows, np.full(len(self.rows), -1, dtype=np.int64)))
                    self.status = np.concatenate((self.status, np.full(len(self.status), -1, dtype=np.int64)))
            self._slots[name] = slot
        index = -1
        if status is not None:
            found = self._status_ids.get(status)
            if found is None:
                found = self._status_ids[status] = len(self.statuses)
                self.statuses.append(status)
            index = found
        self.rows[slot] = row
        self.status[slot] = index

    def _drop(self, name: str) -> None:
        slot = self._slots.pop(name, None)
        if slot is not None:
            self.rows[slot] = -1
            self.status[slot] = -1
            self._free.append(slot)

    def _changed(self, key: Hashable, node_generation: int, table: object,
                 nominator: NominatedPods) -> set[str] | None:
        """Nodes to filter again since the last call; None when everything must be."""
        if key != self._key or node_generation != self._node_generation:
            return None
        rows_changed: Callable[[int], list[int] | None] | None = getattr(table, "rows_changed_since", None)
        rows = rows_changed(self._pod_generation) if rows_changed is not None else None
        nodes = nominator.changed_since(self._nominations)
        if rows is None or nodes is None:
            return None
        names = getattr(table, "names")
        changed = set(nodes)
        changed.update(names[r] for r in set(rows))
        return changed
