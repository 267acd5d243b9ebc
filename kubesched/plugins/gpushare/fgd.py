"""FGDScore: Fragmentation Gradient Descent (Weng et al., USENIX ATC '23).

Place the pod where it grows the cluster's GPU fragmentation the least: a node scores
``sigmoid((F_before - F_after) / 1000) * 100`` (truncated), with ``F`` the node's
fragmentation against the workload's typical pods (``fragmentation``). For a share,
every device with room is tried and the node scores its best device, which Reserve
then takes (the first device on a tie); whole GPUs take the first idle devices.

The typical pods come from the args (the replay passes the trace's); without them the
plugin learns them from every pod the scheduler is told of, pending or bound.

Cost: a node's ``F`` depends only on its devices and its cpu left, so it is kept per
row and recomputed only for rows whose devices or cpu changed; the after-placement
``F`` needs one candidate per distinct free value of a node's devices.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    BoolArray,
    CycleState,
    FloatArray,
    Handle,
    IntArray,
    NodeTableView,
    PluginSpec,
    PreFilterResult,
    RowArray,
    SnapshotView,
    StateKey,
    Status,
)
from kubesched.objects import PodInfo

from .common import cpu_left, pod_cpu, truncate
from .cycle import DEVICE_CHOOSER, gpu_cycle
from .devices import DeviceState, best_fit_devices
from .fragmentation import FragmentationModel, NodeStats, PodShape, TypicalPod, typical_pods
from .request import GpuRequest, GpuRequestError, gpu_request

__all__ = ["NAME", "FGDScore", "FGDScoreArgs", "TypicalPodArgs", "new", "pod_shape", "spec"]

NAME = "FGDScore"


@dataclass(frozen=True, slots=True)
class TypicalPodArgs:
    """One typical pod: its shape and how often it occurs. Only the weights' ratios
    matter; pod counts (integers) keep FGD's arithmetic exact."""

    cpu_milli: int = 0
    gpu_milli: int = 0
    gpu_count: int = 0
    gpu_model: str = ""
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class FGDScoreArgs:
    typical_pods: list[TypicalPodArgs] = field(default_factory=list)
    """The workload's typical pods; empty: learnt from the pods the scheduler sees."""

    def validate(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        for i, pod in enumerate(self.typical_pods):
            path = f"typicalPods[{i}]"
            if pod.weight < 0:
                problems.append((f"{path}.weight", f"must not be negative, got {pod.weight}"))
            if not 0 <= pod.gpu_milli <= 1000:
                problems.append((f"{path}.gpuMilli", f"must be between 0 and 1000, got {pod.gpu_milli}"))
            if pod.gpu_count < 0 or pod.cpu_milli < 0:
                problems.append((path, "cpuMilli and gpuCount must not be negative"))
        if self.typical_pods and not sum(p.weight for p in self.typical_pods) > 0:
            problems.append(("typicalPods", "weights must not all be 0"))
        return problems

    def model(self) -> FragmentationModel:
        return FragmentationModel([TypicalPod(PodShape(p.cpu_milli, p.gpu_milli, p.gpu_count, p.gpu_model), p.weight)
                                   for p in self.typical_pods])


def pod_shape(pod: PodInfo, request: GpuRequest) -> PodShape:
    return PodShape(pod_cpu(pod), request.milli, request.count, "|".join(sorted(request.models)))


_CHOICE: StateKey["_Choice"] = StateKey("kubesched.io/fgd-choice")
_MAX_SHAPES = 512
"""Pod shapes whose answers are kept (more, and all are dropped: a workload of that many
shapes gains little from them)."""


class FGDScore:
    name = NAME

    def __init__(self, args: FGDScoreArgs, handle: Handle) -> None:
        self._learnt: Counter[PodShape] | None = None
        self._model = args.model() if args.typical_pods else FragmentationModel([])
        if not args.typical_pods:
            self._learnt = Counter()
            self._stale = False
            handle.add_pod_handler(self)
        self._rows = _RowCache()
        self._shapes: dict[tuple[int, int, int], _Answers] = {}
        self._generation = (-1, -1, -1)

    @property
    def model(self) -> FragmentationModel:
        if self._learnt is not None and self._stale:
            self._model = FragmentationModel(typical_pods(self._learnt.elements()))
            self._stale = False
        return self._model

    # -- PreFilter: the device choice for Reserve --------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        choice = _Choice(self, snapshot.table, pod_cpu(pod))
        state.write(_CHOICE, choice)
        state.write(DEVICE_CHOOSER, choice)
        return None, None

    # -- Score ------------------------------------------------------------------------
    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        cycle = gpu_cycle(state)
        scores, devices = self.evaluate(snapshot.table, cycle.devices, cycle.request, pod_cpu(pod), rows)
        choice = state.get(_CHOICE)
        if choice is not None and cycle.request.share:
            choice.devices.update(zip(rows.tolist(), devices.tolist()))
        return scores

    def evaluate(self, table: NodeTableView, devices: DeviceState, request: GpuRequest, cpu: int,
                 rows: RowArray) -> tuple[IntArray, IntArray]:
        """Scores of ``rows``, and for a share the device each row would use (-1: none).

        Kept per pod shape: a row's answer stands while its devices and cpu left do, so a
        cycle recomputes only the rows that changed since a pod of this shape was last
        scored (a handful, as one pod lands per cycle).
        """
        model = self.model
        if self._generation != (table.node_generation, table.size, id(model)):
            self._rows = _RowCache()
            self._shapes = {}
            self._generation = (table.node_generation, table.size, id(model))
        key = (cpu, request.milli, request.count)
        answers = self._shapes.get(key)
        if answers is None:
            if len(self._shapes) >= _MAX_SHAPES:
                self._shapes.clear()
            answers = self._shapes[key] = _Answers(table.size)
        left = cpu_left(table, rows)
        stale = (answers.version[rows] != devices.versions[rows]) | (answers.cpu[rows] != left)
        if stale.any():
            fix = rows[stale]
            scores, chosen = self._compute(model, table, devices, request, cpu, fix)
            answers.score[fix] = scores
            answers.device[fix] = chosen
            answers.version[fix] = devices.versions[fix]
            answers.cpu[fix] = left[stale]
        return answers.score[rows], answers.device[rows]

    def _compute(self, model: FragmentationModel, table: NodeTableView, devices: DeviceState, request: GpuRequest,
                 cpu: int, rows: RowArray) -> tuple[IntArray, IntArray]:
        stats, before, left, access = self._rows.before(model, table, devices, rows)
        chosen = np.full(len(rows), -1, dtype=np.int64)
        if not request.share:
            after_stats = model.after_whole(stats, request.count) if request.wants_gpu else stats
            after = model.fragmentation(after_stats, left - cpu, access)
            return _score(before - after), chosen
        free = devices.free[rows]
        pos, dev = np.nonzero(_first_of_value(free) & (free >= request.milli))
        scores = np.zeros(len(rows), dtype=np.int64)
        if not pos.size:
            return scores, chosen
        candidate = NodeStats(stats.total[pos], stats.count[pos], stats.room[pos])
        after = model.fragmentation(model.after_share(candidate, free[pos, dev], request.milli),
                                    left[pos] - cpu, access[pos])
        per_device = _score(before[pos] - after)
        # Per row, the best score and then the lowest device: one key, maximised per row
        # (``pos`` is sorted, as ``nonzero`` lists a row's devices together).
        width = free.shape[1]
        key = per_device * width + (width - 1 - dev)
        starts = np.flatnonzero(np.r_[True, pos[1:] != pos[:-1]])
        best = np.maximum.reduceat(key, starts)
        where = pos[starts]
        scores[where] = best // width
        chosen[where] = width - 1 - best % width
        return scores, chosen

    # -- learning the workload ------------------------------------------------------------
    def on_pod_add(self, pod: PodInfo) -> None:
        if self._learnt is None:
            return
        try:
            request = gpu_request(pod)
        except GpuRequestError:
            return
        self._learnt[pod_shape(pod, request)] += 1
        self._stale = True

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None:
        return None

    def on_pod_delete(self, pod: PodInfo) -> None:
        return None


@dataclass(slots=True)
class _Choice:
    """FGD's device for a share on each scored row (filled by Score), computed on demand
    for a node Score did not see (the only feasible node is not scored)."""

    plugin: FGDScore
    table: NodeTableView
    cpu: int
    devices: dict[int, int] = field(default_factory=dict)

    def choose(self, devices: DeviceState, row: int, request: GpuRequest) -> tuple[int, ...] | None:
        if not request.share:
            return best_fit_devices(devices.free[row], request)
        device = self.devices.get(row)
        if device is None:
            _, chosen = self.plugin.evaluate(self.table, devices, request, self.cpu, np.array([row], dtype=np.int64))
            device = int(chosen[0])
        return (device,) if device >= 0 else None


class _Answers:
    """One pod shape's score and device per row, with the row state they were computed for."""

    def __init__(self, size: int) -> None:
        self.score = np.zeros(size, dtype=np.int64)
        self.device = np.full(size, -1, dtype=np.int64)
        self.version = np.full(size, -1, dtype=np.int64)
        self.cpu = np.zeros(size, dtype=np.int64)


class _RowCache:
    """Each row's stats and fragmentation, kept while its devices and cpu left stay (the
    plugin starts a new one when nodes change)."""

    def __init__(self) -> None:
        self.version = np.zeros(0, dtype=np.int64)
        self.cpu = np.zeros(0, dtype=np.int64)
        self.frag = np.zeros(0, dtype=np.float64)
        self.stats = NodeStats(np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0), dtype=np.int64))

    def before(self, model: FragmentationModel, table: NodeTableView, devices: DeviceState,
               rows: RowArray) -> tuple[NodeStats, FloatArray, IntArray, BoolArray]:
        access_all = model.access(table)
        if len(self.version) < table.size:
            self._reset(table.size, len(model.thresholds))
        left = cpu_left(table, rows)
        stale = (self.version[rows] != devices.versions[rows]) | (self.cpu[rows] != left)
        if stale.any():
            fix = rows[stale]
            stats = model.stats(devices.free[fix])
            self.stats.total[fix] = stats.total
            self.stats.count[fix] = stats.count
            self.stats.room[fix] = stats.room
            self.frag[fix] = model.fragmentation(stats, left[stale], access_all[fix])
            self.version[fix] = devices.versions[fix]
            self.cpu[fix] = left[stale]
        stats = NodeStats(self.stats.total[rows], self.stats.count[rows], self.stats.room[rows])
        return stats, self.frag[rows], left, access_all[rows]

    def _reset(self, size: int, thresholds: int) -> None:
        self.version = np.full(size, -1, dtype=np.int64)
        self.cpu = np.zeros(size, dtype=np.int64)
        self.frag = np.zeros(size, dtype=np.float64)
        self.stats = NodeStats(np.zeros(size, dtype=np.int64), np.zeros((size, thresholds), dtype=np.int64),
                               np.zeros((size, thresholds), dtype=np.int64))


def _first_of_value(free: IntArray) -> BoolArray:
    """Devices whose free amount no lower-numbered device of the node shares: placing on
    equal devices leaves equal nodes, so only the first of each is worth trying."""
    first = np.ones(free.shape, dtype=bool)
    for d in range(1, free.shape[1]):
        first[:, d] = ~(free[:, :d] == free[:, d : d + 1]).any(axis=1)
    return first


def _score(gain: FloatArray) -> IntArray:
    """``int(sigmoid(gain / 1000) * 100)``: 50 for no change, higher when ``F`` drops
    (computed in the reference's order, so truncation agrees at the boundaries)."""
    return truncate(1.0 / (1.0 + np.exp(-gain / 1000.0)) * MAX_NODE_SCORE)


def new(args: FGDScoreArgs, handle: Handle) -> FGDScore:
    return FGDScore(args, handle)


spec: PluginSpec[FGDScoreArgs] = PluginSpec(NAME, new, args_type=FGDScoreArgs)
