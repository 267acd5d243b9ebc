"""GpuClustering: pods of one kind together (shares with shares, 2-GPU pods with 2-GPU pods).

The paper's GPU Clustering baseline. A GPU pod's kind is "share" or "k whole GPUs";
nodes rank by the kinds of the GPU pods they already run, then by how little GPU they
have free (``25 * (8000 - free) / 8000``, in integer arithmetic, added to each band):

* only pods of the pod's kind: 75..100;
* pods of its kind among others: 50..75;
* no GPU pods: 25..50;
* only other kinds: 0..25.

A pod without GPU scores 0 everywhere. A share goes to the best-fit device.
"""

from __future__ import annotations

import numpy as np

from kubesched.framework import MAX_NODE_SCORE, CycleState, Handle, IntArray, PluginSpec, RowArray, SnapshotView
from kubesched.objects import PodInfo

from .common import MAX_SPEC_GPU
from .cycle import gpu_cycle
from .devices import affinity_kind

__all__ = ["NAME", "GpuClusteringScore", "new", "spec"]

NAME = "GpuClusteringScore"
_BAND = MAX_NODE_SCORE // 4


class GpuClusteringScore:
    name = NAME

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        cycle = gpu_cycle(state)
        if not cycle.request.wants_gpu:
            return np.zeros(len(rows), dtype=np.int64)
        kinds = cycle.devices.affinity[rows] > 0
        same = kinds[:, affinity_kind(cycle.request)]
        present = kinds.sum(axis=1)
        fuller = _BAND * (MAX_SPEC_GPU - cycle.devices.total_free(rows))
        fullness = np.sign(fuller) * (np.abs(fuller) // MAX_SPEC_GPU)  # Go's division: towards zero
        band = np.where(same, np.where(present == 1, 3, 2), np.where(present == 0, 1, 0))
        return np.asarray(fullness + band * _BAND, dtype=np.int64)


def new(args: None, handle: Handle) -> GpuClusteringScore:
    return GpuClusteringScore()


spec = PluginSpec(NAME, new)
