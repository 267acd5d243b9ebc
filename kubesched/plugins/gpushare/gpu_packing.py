"""GpuPackingScore: shares onto used devices first, then idle devices of used nodes,
then idle nodes.

The paper's GPU Packing baseline. Scores, highest first:

1. the pod fits on devices already in use (a share on a busy device): 100 minus a
   tenth of the free percentage left on the devices it uses, at least 50;
2. it needs idle devices of a node already in use: 50 minus the idle devices it takes,
   at least 33;
3. every device of the node is idle: 33 minus the node's devices (at least the
   device count itself), so smaller idle nodes go first.

The devices it would use are picked least-free first. A pod without GPU scores 0
everywhere. A share goes to the best-fit device.
"""

from __future__ import annotations

import numpy as np

from kubesched.framework import MAX_NODE_SCORE, CycleState, Handle, IntArray, PluginSpec, RowArray, SnapshotView
from kubesched.objects import PodInfo

from .cycle import gpu_cycle
from .request import MILLI

__all__ = ["NAME", "GpuPackingScore", "new", "spec"]

NAME = "GpuPackingScore"
_IDLE_NODE = MAX_NODE_SCORE // 3
_USED_NODE = MAX_NODE_SCORE // 2


class GpuPackingScore:
    name = NAME

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        cycle = gpu_cycle(state)
        request = cycle.request
        if not request.wants_gpu:
            return np.zeros(len(rows), dtype=np.int64)
        free = cycle.devices.free[rows]
        devices = cycle.devices.devices[rows]
        idle = (free == MILLI).sum(axis=1)
        idle_node = np.maximum(_IDLE_NODE - idle, idle)
        if request.share:
            # The least-free device with room: a busy one (case 1) or an idle one (case 2).
            best = np.where(free >= request.milli, free, MILLI + 1).min(axis=1)
            busy = np.maximum(MAX_NODE_SCORE - (best * 100 // MILLI) // 10, _USED_NODE)
            used = np.where(best >= MILLI, max(_USED_NODE - 1, _IDLE_NODE), busy)
        else:
            used = np.full(len(rows), max(_USED_NODE - request.count, _IDLE_NODE))
        return np.where(idle == devices, idle_node, used).astype(np.int64)


def new(args: None, handle: Handle) -> GpuPackingScore:
    return GpuPackingScore()


spec = PluginSpec(NAME, new)
