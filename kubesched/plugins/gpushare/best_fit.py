"""BestFitScore: the node the pod leaves with the least free cpu and GPU.

The paper's BestFit baseline: what the node has left once the pod is placed, cpu and
GPU each scaled by the largest node (128 cores, 8 GPUs) and weighted equally::

    raw = 100 * (1 - (0.5 * (cpu_left - cpu) / 128000 + 0.5 * (gpu_left - gpu) / 8000))

then rescaled so the scored nodes span 0..100 (all 0 when they tie). A share goes to
the best-fit device.
"""

from __future__ import annotations

import numpy as np

from kubesched.framework import MAX_NODE_SCORE, CycleState, Handle, IntArray, PluginSpec, RowArray, SnapshotView
from kubesched.objects import PodInfo

from .common import MAX_SPEC_CPU, MAX_SPEC_GPU, cpu_left, pod_cpu, truncate
from .cycle import gpu_cycle

__all__ = ["NAME", "BestFitScore", "min_max_normalize", "new", "spec"]

NAME = "BestFitScore"


class BestFitScore:
    name = NAME

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        cycle = gpu_cycle(state)
        cpu_after = cpu_left(snapshot.table, rows) - pod_cpu(pod)
        gpu_after = cycle.devices.total_free(rows) - cycle.request.total
        left = cpu_after / MAX_SPEC_CPU * 0.5 + gpu_after / MAX_SPEC_GPU * 0.5
        return truncate((1.0 - left) * MAX_NODE_SCORE)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return min_max_normalize(scores)


def min_max_normalize(scores: IntArray) -> IntArray:
    """The paper's simulator's NormalizeScore: the lowest to 0, the highest to 100
    (integer arithmetic); all 0 when every score is the same."""
    if not scores.size:
        return scores
    low, high = int(scores.min()), int(scores.max())
    if high == low:
        return np.zeros_like(scores)
    return np.asarray((scores - low) * MAX_NODE_SCORE // (high - low), dtype=np.int64)


def new(args: None, handle: Handle) -> BestFitScore:
    return BestFitScore()


spec = PluginSpec(NAME, new)
