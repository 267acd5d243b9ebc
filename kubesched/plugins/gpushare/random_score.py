"""RandomScore: a uniformly random feasible node, and a random device for a share.

The paper's Random baseline: PreScore picks one of the feasible nodes at random and
Score gives it 100 (the others 0); a share goes to a random device with room for it
(open-gpu-share's ``random`` device selection), whole GPUs to the first idle devices.
Seeded (``args.seed``), so a replay repeats.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    IntArray,
    PluginSpec,
    PreFilterResult,
    RowArray,
    SnapshotView,
    StateKey,
    Status,
)
from kubesched.objects import PodInfo

from .cycle import DEVICE_CHOOSER
from .devices import DeviceState, best_fit_devices
from .request import GpuRequest

__all__ = ["NAME", "RandomScore", "RandomScoreArgs", "new", "spec"]

NAME = "RandomScore"
_PICKED: StateKey[int] = StateKey("kubesched.io/random-score-row")


@dataclass(frozen=True, slots=True)
class RandomScoreArgs:
    seed: int = 0
    """Seed of the node and device draws."""


class RandomScore:
    name = NAME

    def __init__(self, args: RandomScoreArgs) -> None:
        self.rng = random.Random(args.seed)

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        state.write(DEVICE_CHOOSER, self)
        return None, None

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        state.write(_PICKED, int(rows[self.rng.randrange(len(rows))]))
        return None

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        return np.where(rows == state.read(_PICKED), MAX_NODE_SCORE, 0).astype(np.int64)

    def choose(self, devices: DeviceState, row: int, request: GpuRequest) -> tuple[int, ...] | None:
        if not request.share:
            return best_fit_devices(devices.free[row], request)
        fitting = np.flatnonzero(devices.free[row] >= request.milli)
        return (int(fitting[self.rng.randrange(fitting.size)]),) if fitting.size else None


def new(args: RandomScoreArgs, handle: Handle) -> RandomScore:
    return RandomScore(args)


spec: PluginSpec[RandomScoreArgs] = PluginSpec(NAME, new, args_type=RandomScoreArgs)
