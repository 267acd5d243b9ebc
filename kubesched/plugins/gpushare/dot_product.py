"""DotProductScore: Tetris's alignment heuristic, as the FGD paper's baseline runs it.

The node's free resources and the pod's request, each as (cpu, GPU) scaled by the
largest node (128 cores, 8 GPUs), are multiplied; the smaller the dot product, the
higher the score::

    score = 100 * (1 - (cpu_left * cpu / 128000**2 + gpu_left * gpu / 8000**2) / 2)

with ``gpu_left`` the node's free milli-GPU on all devices and ``gpu`` the pod's total
(the simulator's ``merge`` dimension and ``max`` normalisation); a node without the
cpu scores 0. A share goes to the best-fit device.
"""

from __future__ import annotations

import numpy as np

from kubesched.framework import MAX_NODE_SCORE, CycleState, Handle, IntArray, PluginSpec, RowArray, SnapshotView
from kubesched.objects import PodInfo

from .common import MAX_SPEC_CPU, MAX_SPEC_GPU, cpu_left, pod_cpu, truncate
from .cycle import gpu_cycle

__all__ = ["NAME", "DotProductScore", "new", "spec"]

NAME = "DotProductScore"


class DotProductScore:
    name = NAME

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        cycle = gpu_cycle(state)
        cpu = pod_cpu(pod)
        left = cpu_left(snapshot.table, rows)
        gpu_left = cycle.devices.total_free(rows)
        dot = (left * cpu / MAX_SPEC_CPU**2 + gpu_left * cycle.request.total / MAX_SPEC_GPU**2) / 2
        return np.where(left >= cpu, truncate(MAX_NODE_SCORE * (1 - dot)), 0).astype(np.int64)


def new(args: None, handle: Handle) -> DotProductScore:
    return DotProductScore()


spec = PluginSpec(NAME, new)
