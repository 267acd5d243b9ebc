"""What the runner hands back and how it names things: the extension points, filter and
score outcomes, the framework's error, and Go's formatting of string lists in messages."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .status import Status
from .views import BoolArray, IntArray, RowArray

__all__ = [
    "EXTENSION_POINTS",
    "POINT_METHODS",
    "MAX_PERMIT_TIMEOUT",
    "FrameworkError",
    "FilterOutcome",
    "ScoreOutcome",
    "go_list",
    "no_rejections",
]

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    "placementGenerate",
    "placementScore",
)
"""Every extension point a configuration names, in upstream's ``Plugins`` order: the pod's
points, then the pod-group cycle's placement points (TopologyAwareWorkloadScheduling)."""

# Which method makes a plugin usable at an extension point.
POINT_METHODS: dict[str, tuple[str, ...]] = {
    "preEnqueue": ("pre_enqueue",),
    "queueSort": ("less",),
    "preFilter": ("pre_filter",),
    "filter": ("filter_nodes", "filter"),
    "postFilter": ("post_filter",),
    "preScore": ("pre_score",),
    "score": ("score_nodes", "score"),
    "reserve": ("reserve",),
    "permit": ("permit",),
    "preBind": ("pre_bind",),
    "bind": ("bind",),
    "postBind": ("post_bind",),
    "placementGenerate": ("generate_placements",),
    "placementScore": ("score_placement",),
}


MAX_PERMIT_TIMEOUT = 15 * 60.0  # seconds; upstream caps a Permit wait at 15 minutes


class FrameworkError(RuntimeError):
    """A plugin broke the contract (bad score range, exception, ...)."""


@dataclass(slots=True)
class FilterOutcome:
    """Which plugin rejected which row: ``status_index[row]`` into ``statuses``, -1 if none.

    Treat both arrays as read-only: when no row was rejected ``status_index`` is shared.
    ``passed`` holds the rows that survived every filter run on them so far; with
    per-node plugins, ``rejected_at`` keeps the position (in filter order) of the
    plugin that rejected each row, so per-node plugins run later on a window of rows
    still see upstream's "first failing plugin" order.
    """

    status_index: np.ndarray
    statuses: list[Status]
    passed: BoolArray  # bool per row: survived every filter
    rejected_at: np.ndarray | None = None  # int16 per row: filter position of the rejection
    owns_arrays: bool = False  # whether status_index and passed are this outcome's own, to update in place

    def status_of(self, row: int) -> Status | None:
        idx = int(self.status_index[row])
        return self.statuses[idx] if idx >= 0 else None


@dataclass(slots=True)
class ScoreOutcome:
    """Weighted scores per plugin over the scored rows, and their totals."""

    rows: RowArray
    by_plugin: dict[str, IntArray] = field(default_factory=dict)
    total: IntArray | None = None


_NO_REJECTIONS: dict[int, np.ndarray] = {}


def no_rejections(size: int) -> np.ndarray:
    """A shared, read-only ``status_index`` of ``size`` rows, none rejected."""
    found = _NO_REJECTIONS.get(size)
    if found is None:
        if len(_NO_REJECTIONS) > 64:
            _NO_REJECTIONS.clear()
        found = np.full(size, -1, dtype=np.int32)
        found.flags.writeable = False
        _NO_REJECTIONS[size] = found
    return found


def go_list(items: list[str]) -> str:
    """Go's ``%v`` of a string slice: ``[a b c]``."""
    return "[" + " ".join(items) + "]"
