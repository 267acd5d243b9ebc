"""GPUPacking: a Score plugin that keeps whole GPU nodes free.

GPU pods go where GPUs are already in use, so the free GPUs stay together on few
nodes and a pod that needs many of them still finds a node; pods that need no GPU stay
off GPU nodes, so they do not take the CPU and memory GPU pods need there.

For a node with ``A`` GPUs allocatable and ``U`` requested by the pods on it, and a pod
requesting ``g`` GPUs (``resourceName``, ``nvidia.com/gpu`` by default)::

    g > 0, A > 0:   score = 100 * min(U + g, A) // A      the node's GPU use once the pod is there
    g > 0, A = 0:   score = 0                             (no GPU here: NodeResourcesFit rejects the node)
    g = 0, A = 0:   score = 100                           a node without GPUs: the place for it
    g = 0, A > 0:   score = 50 * min(U, A) // A           a GPU node: the fuller its GPUs, the less
                                                          a GPU pod could use what this pod takes

so a GPU pod prefers the node it leaves fullest (an exact fit scores 100), and a pod
without GPUs prefers any node without GPUs (100) to a GPU node (at most 50, 0 when its
GPUs are idle). Scores are integers in 0..100; ``score_nodes`` (over the node table)
and ``score`` (one node) compute the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    IntArray,
    PluginSpec,
    RowArray,
    SnapshotView,
)
from kubesched.objects import NodeInfo, PodInfo

__all__ = ["NAME", "GPU", "GPUPacking", "GPUPackingArgs", "new", "spec"]

NAME = "GPUPacking"
GPU = "nvidia.com/gpu"
SHARED_GPU_NODE_SCORE = MAX_NODE_SCORE // 2
"""The most a GPU node scores for a pod that requests no GPU."""


@dataclass(frozen=True, slots=True)
class GPUPackingArgs:
    resource_name: str = GPU
    """The extended resource to pack."""

    def validate(self) -> list[tuple[str, str]]:
        return [] if self.resource_name else [("resourceName", "Required value")]


class GPUPacking:
    """Score, in both forms: ``score_nodes`` over the node table, ``score`` per node."""

    name = NAME

    def __init__(self, args: GPUPackingArgs) -> None:
        self.resource = args.resource_name

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        table = snapshot.table
        alloc = np.asarray(table.allocatable(self.resource)[rows], dtype=np.int64)
        used = np.asarray(table.requested(self.resource)[rows], dtype=np.int64)
        has_gpus = alloc > 0
        safe_alloc = np.where(has_gpus, alloc, 1)
        want = pod.requests.requests.get(self.resource)
        if want > 0:
            scores = np.where(has_gpus, MAX_NODE_SCORE * np.minimum(used + want, alloc) // safe_alloc, 0)
        else:
            scores = np.where(has_gpus, SHARED_GPU_NODE_SCORE * np.minimum(used, alloc) // safe_alloc, MAX_NODE_SCORE)
        return np.asarray(scores, dtype=np.int64)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        alloc = node.allocatable.get(self.resource)
        used = node.requested.get(self.resource)
        want = pod.requests.requests.get(self.resource)
        if want > 0:
            return MAX_NODE_SCORE * min(used + want, alloc) // alloc if alloc > 0 else 0
        return SHARED_GPU_NODE_SCORE * min(used, alloc) // alloc if alloc > 0 else MAX_NODE_SCORE


def new(args: GPUPackingArgs, handle: Handle) -> GPUPacking:
    return GPUPacking(args)


spec: PluginSpec[GPUPackingArgs] = PluginSpec(NAME, new, args_type=GPUPackingArgs)
"""The entry point (``kubesched.plugins`` group, name ``gpu_packing``)."""
