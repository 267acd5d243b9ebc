"""The node table's rows and numeric columns: one numpy array per quantity, grown by doubling.

Kept apart from what is derived from the columns (indexes, the zone order, cached
per-row values) because it is the one part every other part reads: which rows exist,
which are live, and the allocatable and requested quantities of each. Rows of removed
nodes are freed and reused, so a row number stays valid as long as its node lives.
"""

from __future__ import annotations

import numpy as np

from ..framework.views import IntArray
from ..objects.node import Node

__all__ = ["NodeColumns"]

_INT_COLUMNS = (
    "alloc_cpu",
    "alloc_mem",
    "alloc_eph",
    "alloc_pods",
    "req_cpu",
    "req_mem",
    "req_eph",
    "nz_cpu",
    "nz_mem",
    "pod_count",
)
_REQUESTED_COLUMNS = ("req_cpu", "req_mem", "req_eph", "nz_cpu", "nz_mem", "pod_count")  # zeroed on a new row


class NodeColumns:
    """Rows (names, node objects, liveness) and per-row quantities; see ``NodeTable``."""

    # int64 columns, set in __init__ and widened in _grow (see _INT_COLUMNS)
    alloc_cpu: IntArray
    alloc_mem: IntArray
    alloc_eph: IntArray
    alloc_pods: IntArray
    req_cpu: IntArray
    req_mem: IntArray
    req_eph: IntArray
    nz_cpu: IntArray
    nz_mem: IntArray
    pod_count: IntArray

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.size = 0  # rows in use or freed; columns are valid up to here
        self.names: list[str] = []
        self.nodes: list[Node | None] = []
        self.alive = np.zeros(capacity, dtype=bool)
        self.unschedulable = np.zeros(capacity, dtype=bool)
        for column in _INT_COLUMNS:
            setattr(self, column, np.zeros(capacity, dtype=np.int64))
        self.scalar_alloc: dict[str, np.ndarray] = {}
        self.scalar_req: dict[str, np.ndarray] = {}
        self._free: list[int] = []

    # -- rows ---------------------------------------------------------------
    def _grow(self) -> None:
        new = self.capacity * 2

        def widen(arr: np.ndarray) -> np.ndarray:
            out = np.zeros(new, dtype=arr.dtype)
            out[: self.capacity] = arr
            return out

        self.alive = widen(self.alive)
        self.unschedulable = widen(self.unschedulable)
        for column in _INT_COLUMNS:
            setattr(self, column, widen(getattr(self, column)))
        for store in (self.scalar_alloc, self.scalar_req):
            for name in store:
                store[name] = widen(store[name])
        self.capacity = new

    def _claim_row(self) -> int:
        """A live row for a new node (a freed one first), with nothing requested on it yet."""
        if self._free:
            row = self._free.pop()
        else:
            if self.size == self.capacity:
                self._grow()
            row = self.size
            self.size += 1
            self.names.append("")
            self.nodes.append(None)
        self.alive[row] = True
        for column in _REQUESTED_COLUMNS:
            getattr(self, column)[row] = 0
        for arr in self.scalar_req.values():
            arr[row] = 0
        return row

    def _release_row(self, row: int) -> None:
        """The row's node is gone: the row is dead and will be reused."""
        self.alive[row] = False
        self.names[row] = ""
        self.nodes[row] = None
        self._free.append(row)

    def _write_columns(self, row: int, node: Node) -> None:
        alloc = node.allocatable
        self.alloc_cpu[row] = alloc.milli_cpu
        self.alloc_mem[row] = alloc.memory
        self.alloc_eph[row] = alloc.ephemeral_storage
        self.alloc_pods[row] = alloc.allowed_pod_number
        self.unschedulable[row] = node.unschedulable
        for name, arr in self.scalar_alloc.items():
            arr[row] = alloc.scalar.get(name, 0)
        for name, amount in alloc.scalar.items():
            self._scalar(name)[0][row] = amount

    # -- resources by name ------------------------------------------------------
    def _scalar(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        if name not in self.scalar_alloc:
            self.scalar_alloc[name] = np.zeros(self.capacity, dtype=np.int64)
            self.scalar_req[name] = np.zeros(self.capacity, dtype=np.int64)
        return self.scalar_alloc[name], self.scalar_req[name]

    def allocatable(self, resource: str) -> np.ndarray:
        """Allocatable of any resource by its name (``cpu`` in millicores, ``memory`` in bytes, ...)."""
        column = self._named_columns(resource)
        return column[0] if column is not None else self._scalar(resource)[0]

    def requested(self, resource: str) -> np.ndarray:
        """What the pods on each node request of ``resource`` (``pods``: how many pods)."""
        column = self._named_columns(resource)
        return column[1] if column is not None else self._scalar(resource)[1]

    def _named_columns(self, resource: str) -> tuple[np.ndarray, np.ndarray] | None:
        if resource == "cpu":
            return self.alloc_cpu, self.req_cpu
        if resource == "memory":
            return self.alloc_mem, self.req_mem
        if resource == "ephemeral-storage":
            return self.alloc_eph, self.req_eph
        if resource == "pods":
            return self.alloc_pods, self.pod_count
        return None

    def scalar_columns(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Allocatable and requested of an extended resource (zeros if no node has it)."""
        return self._scalar(name)
