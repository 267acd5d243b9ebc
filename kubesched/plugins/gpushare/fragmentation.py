"""GPU fragmentation as the FGD paper measures it, over every node at once.

A node's fragmentation is measured against the *typical pods* of the workload: the
most frequent pod shapes (cpu, milli-GPU per device, devices, accepted models) that
together make up 95% of the pods, each weighted by its frequency. For one typical
pod ``m`` and a node whose devices have ``T`` milli-GPU free in total:

* if ``m`` cannot run on the node at all (it asks for no GPU, or the node's model is
  not one ``m`` accepts, or too few devices have room for it, or the node lacks the
  cpu for it), all ``T`` is fragmentation: none of it can go to ``m``;
* otherwise only the devices too full for ``m`` (free below ``m``'s milli-GPU) are.

The node's fragmentation is the frequency-weighted sum over typical pods; FGD scores
a placement by how much it lowers that sum. Memory plays no part (as in the paper's
simulator). With ``U_m`` the free milli-GPU on devices that can hold ``m``, ``s_m``
whether ``m`` can run on the node and ``w_m`` its weight::

    F = sum_m  w_m * (T - s_m * U_m) / sum_m w_m

With integer weights (pod counts, as ``typical_pods`` gives them) the sums are exact
in floating point, so a placement that changes nothing scores exactly "no change"
(FGD's 50), as the paper's simulator, which computes both sides alike, finds it.

Per-device counts are summarised per distinct milli-GPU threshold (``cnt[t]``: devices
with at least ``t`` free, ``U[t]``: their free milli-GPU), so a placement's effect
needs only the devices it touches.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from kubesched.framework import BoolArray, FloatArray, IntArray, NodeTableView

from .request import GPU_MODEL, MILLI, parse_models

__all__ = ["POPULARITY", "FragmentationModel", "NodeStats", "PodShape", "TypicalPod", "cluster_fragmentation", "typical_pods"]

POPULARITY = 0.95
"""Typical pods cover this share of all pods (the paper's simulator: 95%)."""


@dataclass(frozen=True, slots=True, order=True)
class PodShape:
    """What fragmentation reads of a pod: cpu (millicores), milli-GPU per device,
    devices, accepted GPU models (``A|B``; empty: any). Ordered as the paper's
    simulator orders equally frequent shapes."""

    cpu_milli: int
    gpu_milli: int
    gpu_count: int
    gpu_model: str = ""


@dataclass(frozen=True, slots=True)
class TypicalPod:
    shape: PodShape
    weight: float  # how often it occurs: a count, or a frequency (only ratios matter)


def typical_pods(shapes: Iterable[PodShape], popularity: float = POPULARITY) -> list[TypicalPod]:
    """The most frequent shapes until they cover ``popularity`` of the pods, weighted by
    their counts.

    Shapes are taken one at a time by decreasing count (equal counts: the larger shape
    first, as the paper's simulator sorts them) until their pods reach the share.
    """
    counts = Counter(shapes)
    total = sum(counts.values())
    if not total:
        return []
    ranked = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
    chosen: list[tuple[PodShape, int]] = []
    covered = 0
    for shape, count in ranked:
        if covered >= popularity * total:
            break
        chosen.append((shape, count))
        covered += count
    return [TypicalPod(shape, float(count)) for shape, count in chosen]


@dataclass(slots=True)
class NodeStats:
    """Per node (rows of a device matrix): free milli-GPU in total, and per threshold
    the devices with at least that much free and their free milli-GPU."""

    total: IntArray  # (R,)
    count: IntArray  # (R, G)
    room: IntArray  # (R, G)


class FragmentationModel:
    """Typical pods as arrays, and the fragmentation of nodes against them."""

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        self.typical = list(typical)
        shapes = [t.shape for t in self.typical]
        self.cpu = np.array([s.cpu_milli for s in shapes], dtype=np.int64)
        self.milli = np.array([s.gpu_milli if s.gpu_count > 0 else 0 for s in shapes], dtype=np.int64)
        self.count = np.array([s.gpu_count if s.gpu_milli > 0 else 0 for s in shapes], dtype=np.int64)
        self.weight = np.array([t.weight for t in self.typical], dtype=np.float64)
        self.wants_gpu = self.count > 0
        self.models = [parse_models(s.gpu_model) for s in shapes]
        self.thresholds = np.unique(self.milli[self.wants_gpu]).astype(np.int64)
        # Each GPU-wanting type's threshold column (CPU types point at column 0, unused).
        self.column = np.searchsorted(self.thresholds, self.milli).clip(0, max(len(self.thresholds) - 1, 0))
        self.total_weight = float(self.weight.sum())

    def __len__(self) -> int:
        return len(self.typical)

    # -- nodes ----------------------------------------------------------------------
    def access(self, table: NodeTableView) -> BoolArray:
        """(rows, types): whether each node's GPU model is one each typical pod accepts
        (False for types that ask for no GPU: they never count as satisfied)."""
        return table.node_derived(("FragmentationModel.access", id(self)), lambda: self._access(table))

    def _access(self, table: NodeTableView) -> BoolArray:
        ids, value_ids = table.label_column(GPU_MODEL)
        out = np.zeros((table.size, len(self.typical)), dtype=bool)
        for m, models in enumerate(self.models):
            if not self.wants_gpu[m]:
                continue
            if not models:
                out[:, m] = True
            else:
                wanted = [value_ids[name] for name in models if name in value_ids]
                out[:, m] = np.isin(ids, wanted)
        return out

    def stats(self, free: IntArray) -> NodeStats:
        """Threshold summaries of device matrix ``free`` (R, W)."""
        if not len(self.thresholds):
            empty = np.zeros((free.shape[0], 0), dtype=np.int64)
            return NodeStats(np.asarray(free.sum(axis=1), dtype=np.int64), empty, empty)
        holds = free[:, :, None] >= self.thresholds[None, None, :]
        count = holds.sum(axis=1, dtype=np.int64)
        room = (holds * free[:, :, None]).sum(axis=1, dtype=np.int64)
        return NodeStats(np.asarray(free.sum(axis=1), dtype=np.int64), count, room)

    def fragmentation(self, stats: NodeStats, cpu_left: IntArray, access: BoolArray) -> FloatArray:
        """Fragmentation (milli-GPU, frequency-weighted) of nodes in this state.

        ``cpu_left`` (R,) and ``access`` (R, types) belong to the same nodes as ``stats``.
        """
        total = stats.total.astype(np.float64)
        if not len(self.typical):
            return np.zeros(len(total))
        satisfied = self.satisfied(stats, cpu_left, access)
        room = stats.room[:, self.column] if len(self.thresholds) else np.zeros(satisfied.shape, dtype=np.int64)
        usable = (satisfied * room) @ self.weight
        return np.asarray((self.total_weight * total - usable) / self.total_weight, dtype=np.float64)

    def satisfied(self, stats: NodeStats, cpu_left: IntArray, access: BoolArray) -> BoolArray:
        """(R, types): typical pods that could run on each node as it is."""
        if not len(self.thresholds):
            return np.zeros((len(stats.total), len(self.typical)), dtype=bool)
        devices_ok = stats.count[:, self.column] >= self.count[None, :]
        cpu_ok = cpu_left[:, None] >= self.cpu[None, :]
        return np.asarray(access & devices_ok & cpu_ok & self.wants_gpu[None, :], dtype=bool)

    # -- after a placement ------------------------------------------------------------
    def after_share(self, stats: NodeStats, free_before: IntArray, milli: int) -> NodeStats:
        """The stats once ``milli`` is taken from a device that had ``free_before`` free
        (one candidate device per entry of ``stats``/``free_before``)."""
        after = free_before - milli
        if not len(self.thresholds):
            return NodeStats(stats.total - milli, stats.count, stats.room)
        held = free_before[:, None] >= self.thresholds[None, :]
        holds = after[:, None] >= self.thresholds[None, :]
        count = stats.count - held + holds
        room = stats.room - held * free_before[:, None] + holds * after[:, None]
        return NodeStats(stats.total - milli, count, room)

    def after_whole(self, stats: NodeStats, devices: int) -> NodeStats:
        """The stats once ``devices`` idle devices are taken (every threshold is at most
        one device, so each idle device counted at every threshold)."""
        return NodeStats(stats.total - devices * MILLI, stats.count - devices, stats.room - devices * MILLI)


def cluster_fragmentation(model: FragmentationModel, free: IntArray, cpu_left: IntArray,
                          access: BoolArray) -> tuple[float, int]:
    """(fragmented milli-GPU, idle milli-GPU) summed over the nodes given."""
    stats = model.stats(free)
    return float(model.fragmentation(stats, cpu_left, access).sum()), int(stats.total.sum())

