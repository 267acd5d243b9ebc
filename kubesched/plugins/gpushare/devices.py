"""Per-node GPU device state: how much of each device is free, and which pod holds what.

The scheduler's node table counts a node's GPU in total (the ``kubesched.io/gpu-milli``
extended resource); which *device* a share sits on is GpuShare's to know, so this
state lives in the plugin, one row per node-table row (rows are stable for a node's
lifetime, so a policy can read the device columns of every node with numpy):

* ``free[row, d]``: free milli-GPU on device ``d`` of the node (0..1000; columns past
  the node's device count hold 0, so they never fit anything and add nothing);
* ``affinity[row, k]``: pods on the node asking for a share (``k = 0``) or for ``k``
  whole GPUs, which GpuClustering reads;
* ``versions[row]``: bumps whenever the row's devices change, so policies can cache
  per-row work;
* ``largest[row]``, ``idle[row]``, ``total[row]``: the most free milli-GPU on one
  device, the idle devices, and the free milli-GPU of all devices, kept as rows
  change, so that "does it fit?" is one comparison per node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubesched.framework import BoolArray, IntArray, NodeTableView, RowArray

from .request import GPU_MILLI, MILLI, GpuRequest

__all__ = ["AFFINITY_KINDS", "DeviceState", "Placement", "affinity_kind", "best_fit_devices"]

AFFINITY_KINDS = 17
"""Columns of ``affinity``: shares, then 1..16 whole GPUs (more fold into the last)."""


def affinity_kind(request: GpuRequest) -> int:
    """The ``affinity`` column of a GPU pod: 0 for a share, ``k`` for ``k`` whole GPUs."""
    return 0 if request.share else min(request.count, AFFINITY_KINDS - 1)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a pod's GPU request sits: ``milli`` on each of ``devices`` of the node at ``row``."""

    row: int
    node: str
    devices: tuple[int, ...]
    request: GpuRequest


def best_fit_devices(free: IntArray, request: GpuRequest) -> tuple[int, ...] | None:
    """open-gpu-share's default choice on one node (``free``: its device column values).

    A share goes to the device with the least free milli-GPU that still holds it (the
    first such device on a tie); whole GPUs are the first fully free devices. None
    when the node cannot hold the request.
    """
    if request.share:
        fitting = np.flatnonzero(free >= request.milli)
        if not fitting.size:
            return None
        return (int(fitting[np.argmin(free[fitting])]),)
    idle = np.flatnonzero(free == MILLI)
    if idle.size < request.count:
        return None
    return tuple(int(d) for d in idle[: request.count])


class DeviceState:
    """The devices of every node, and the placements GpuShare made or learnt."""

    def __init__(self) -> None:
        self.free: IntArray = np.zeros((0, 1), dtype=np.int64)
        self.devices: IntArray = np.zeros(0, dtype=np.int64)
        self.versions: IntArray = np.zeros(0, dtype=np.int64)
        self.affinity: IntArray = np.zeros((0, AFFINITY_KINDS), dtype=np.int64)
        self.largest: IntArray = np.zeros(0, dtype=np.int64)
        self.idle: IntArray = np.zeros(0, dtype=np.int64)
        self.total: IntArray = np.zeros(0, dtype=np.int64)
        self.owners: list[str] = []  # the node whose devices each row holds ("": none)
        self.placements: dict[str, Placement] = {}  # by pod uid
        self._node_generation = -1

    # -- rows ---------------------------------------------------------------------
    def sync(self, table: NodeTableView) -> None:
        """Match rows to the table's nodes. A node new to its row starts with every
        device free; a node whose GPU count changed is resized (devices it lost drop
        the pods on them from the accounting, as a node update does in the cache)."""
        if table.node_generation == self._node_generation and len(self.owners) >= table.size:
            return
        self._grow(table.size)
        alloc, _ = table.scalar_columns(GPU_MILLI)
        alive = table.alive
        names = table.names
        for row in range(table.size):
            name = names[row] if alive[row] else ""
            count = int(alloc[row]) // MILLI if name else 0
            if self.owners[row] != name:
                self._reset(row, name, count)
            elif count != self.devices[row]:
                self._resize(row, count)
        self._node_generation = table.node_generation

    def _grow(self, size: int) -> None:
        have = len(self.owners)
        if size <= have:
            return
        extra = size - have
        self.free = np.vstack([self.free, np.zeros((extra, self.free.shape[1]), dtype=np.int64)])
        self.devices = np.concatenate([self.devices, np.zeros(extra, dtype=np.int64)])
        self.versions = np.concatenate([self.versions, np.zeros(extra, dtype=np.int64)])
        self.affinity = np.vstack([self.affinity, np.zeros((extra, AFFINITY_KINDS), dtype=np.int64)])
        self.largest = np.concatenate([self.largest, np.zeros(extra, dtype=np.int64)])
        self.idle = np.concatenate([self.idle, np.zeros(extra, dtype=np.int64)])
        self.total = np.concatenate([self.total, np.zeros(extra, dtype=np.int64)])
        self.owners.extend([""] * extra)

    def _widen(self, width: int) -> None:
        if width > self.free.shape[1]:
            pad = np.zeros((self.free.shape[0], width - self.free.shape[1]), dtype=np.int64)
            self.free = np.hstack([self.free, pad])

    def _reset(self, row: int, name: str, count: int) -> None:
        for uid in [uid for uid, p in self.placements.items() if p.row == row]:
            del self.placements[uid]
        self._widen(count)
        self.free[row, :] = 0
        self.free[row, :count] = MILLI
        self.devices[row] = count
        self.affinity[row, :] = 0
        self.owners[row] = name
        self._changed(row)

    def _resize(self, row: int, count: int) -> None:
        self._widen(count)
        for uid in [uid for uid, p in self.placements.items() if p.row == row and max(p.devices) >= count]:
            self.release(uid)
        self.free[row, count:] = 0
        old = int(self.devices[row])
        if count > old:
            self.free[row, old:count] = MILLI
        self.devices[row] = count
        self._changed(row)

    def _changed(self, row: int) -> None:
        free = self.free[row]
        self.largest[row] = free.max()
        self.idle[row] = (free == MILLI).sum()
        self.total[row] = free.sum()
        self.versions[row] += 1

    # -- reading ------------------------------------------------------------------
    def total_free(self, rows: RowArray) -> IntArray:
        """Free milli-GPU of each node in ``rows``, all devices together."""
        return self.total[rows]

    def fits(self, request: GpuRequest, rows: RowArray | None = None) -> BoolArray:
        """Whether each node in ``rows`` (default: every row) has devices for ``request``
        (the model aside)."""
        if not request.wants_gpu:
            return np.ones(len(self.owners) if rows is None else len(rows), dtype=bool)
        if request.share:
            largest = self.largest if rows is None else self.largest[rows]
            return np.asarray(largest >= request.milli, dtype=bool)
        idle = self.idle if rows is None else self.idle[rows]
        return np.asarray(idle >= request.count, dtype=bool)

    def capacity_milli(self) -> int:
        return int(self.devices.sum()) * MILLI

    def allocated_milli(self) -> int:
        return self.capacity_milli() - int(self.total.sum())

    # -- placing ------------------------------------------------------------------
    def assign(self, uid: str, row: int, devices: tuple[int, ...], request: GpuRequest) -> None:
        """Take ``request.milli`` on each of ``devices`` of ``row`` for pod ``uid``."""
        if uid in self.placements:
            raise ValueError(f"pod {uid} already holds GPUs on {self.placements[uid].node}")
        count = int(self.devices[row])
        if len(set(devices)) != len(devices) or any(not 0 <= d < count for d in devices):
            raise ValueError(f"devices {devices} do not exist on {self.owners[row]} ({count} GPUs)")
        picked = list(devices)
        if (self.free[row, picked] < request.milli).any():
            raise ValueError(f"devices {devices} of {self.owners[row]} cannot hold {request.milli} milli-GPU each")
        self.free[row, picked] -= request.milli
        self.affinity[row, affinity_kind(request)] += 1
        self._changed(row)
        self.placements[uid] = Placement(row, self.owners[row], tuple(devices), request)

    def release(self, uid: str) -> bool:
        """Give back what pod ``uid`` holds; False when it holds nothing (idempotent)."""
        placement = self.placements.pop(uid, None)
        if placement is None:
            return False
        row = placement.row
        self.free[row, list(placement.devices)] += placement.request.milli
        self.affinity[row, affinity_kind(placement.request)] -= 1
        self._changed(row)
        return True

    def place_best_fit(self, uid: str, row: int, request: GpuRequest) -> bool:
        """Account a pod bound before the scheduler saw it, on the devices open-gpu-share
        would pick now (a snapshot does not say which devices it uses)."""
        devices = best_fit_devices(self.free[row], request)
        if devices is None:
            return False
        self.assign(uid, row, devices, request)
        return True
