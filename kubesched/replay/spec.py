"""What a replay is asked (``ReplaySpec``) and what it answers (``ReplayResult``).

Both are plain, picklable data, so replays can run in other processes (``kubesched
sweep`` ships specs to workers and gathers results) and be written as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kubesched.plugins.gpushare import POLICIES

from .errors import ReplayError
from .events import PodEvent, SeriesPoint

__all__ = ["DEFAULT_ARRIVAL", "DEFAULT_SEED", "LevelPoint", "Mode", "ReplayResult", "ReplaySpec", "default_levels",
           "TieBreak", "policy_name", "plugin_name"]

Mode = Literal["fgd", "timeline"]
TieBreak = Literal["name", "random"]
DEFAULT_ARRIVAL = 1.3
"""The paper's experiment: GPU requests arrive until 130% of the cluster's GPUs."""
DEFAULT_SEED = 42
"""The paper's first seed (its ten runs use 42..51)."""
LEVEL_STEP = 0.01


@dataclass(frozen=True, slots=True)
class ReplaySpec:
    """One replay.

    ``nodes``/``pods``: trace paths (``.csv``: the Alibaba trace; else Kubernetes YAML or
    JSON). ``policy``: a short name (``FGD``, ``BestFit``, ...) or a Score plugin name.
    ``mode``: ``fgd``, the paper's protocol (pods arrive in a seeded random order and
    never leave, until the GPU they asked for reaches ``arrival`` times the cluster's
    GPUs), or ``timeline`` (pods arrive at their creation time and leave at their
    deletion time; ``arrival`` is not used). ``levels``: arrived GPU, as shares of the
    cluster's, at which the state is recorded (empty: every 1%).
    """

    nodes: str
    pods: str
    policy: str = "FGD"
    seed: int = DEFAULT_SEED
    mode: Mode = "fgd"
    arrival: float = DEFAULT_ARRIVAL
    levels: tuple[float, ...] = ()
    tie_break: TieBreak = "name"

    def __post_init__(self) -> None:
        plugin_name(self.policy)  # an unknown policy fails here, before any work
        if self.mode not in ("fgd", "timeline"):
            raise ReplayError(f"mode must be fgd or timeline, got {self.mode!r}")
        if not self.arrival > 0:
            raise ReplayError(f"arrival must be above 0, got {self.arrival}")
        if self.tie_break not in ("name", "random"):
            raise ReplayError(f"tie_break must be name or random, got {self.tie_break!r}")
        if any(not level > 0 for level in self.levels):
            raise ReplayError(f"levels must be above 0, got {list(self.levels)}")


@dataclass(frozen=True, slots=True)
class LevelPoint:
    """The cluster when the arrived GPU requests first reached ``level`` of its GPUs.

    GPU amounts are in GPUs (1,000 milli-GPU); ``fragmentation`` is the FGD paper's
    measure against the trace's typical pods, ``fragmentation_ratio`` its share of the
    unallocated GPUs.
    """

    level: float
    arrived: float  # arrived GPU requests / cluster GPUs (at least ``level``)
    allocation_ratio: float  # allocated GPUs / cluster GPUs
    allocated_gpus: float
    unallocated_gpus: float
    fragmentation_gpus: float
    fragmentation_ratio: float
    pods_arrived: int
    pods_scheduled: int
    pods_failed: int
    time: float = 0.0  # virtual seconds since the trace's first arrival (the fgd mode's clock stays at 0)


@dataclass(slots=True)
class ReplayResult:
    spec: ReplaySpec
    policy: str  # the short name
    trace: str  # the pod trace's file name
    nodes: int
    gpu_capacity: float  # GPUs
    points: list[LevelPoint] = field(default_factory=list)
    pods_arrived: int = 0
    pods_scheduled: int = 0
    pods_failed: int = 0
    attempts: int = 0
    seconds: float = 0.0  # wall-clock time of the replay
    end: LevelPoint | None = None  # timeline mode: the cluster after the trace's final departures
    pod_events: list[PodEvent] = field(default_factory=list)  # recorded on request (run_replay(record=True))
    series: list[SeriesPoint] = field(default_factory=list)  # likewise: the cluster against virtual time

    @property
    def final(self) -> LevelPoint:
        """The end of the replay: after the trace's final departures in the timeline mode
        (``end``), the last level point in the fgd mode (where pods never leave)."""
        return self.end if self.end is not None else self.points[-1]

    def at(self, level: float) -> LevelPoint | None:
        """The point recorded for ``level`` (None if the replay never reached it)."""
        return next((p for p in self.points if abs(p.level - level) < 1e-9), None)


def plugin_name(policy: str) -> str:
    """The Score plugin of a policy given by its short or plugin name (any case)."""
    wanted = policy.lower()
    for short, plugin in POLICIES.items():
        if wanted in (short.lower(), plugin.lower()):
            return plugin
    raise ReplayError(f"unknown policy {policy!r}; want one of {', '.join(POLICIES)}")


def policy_name(policy: str) -> str:
    """The short name of a policy given by its short or plugin name."""
    plugin = plugin_name(policy)
    return next(short for short, name in POLICIES.items() if name == plugin)


def default_levels(end: float) -> tuple[float, ...]:
    """Every 1% of the cluster's GPUs up to ``end`` (``end`` itself last)."""
    steps = int(round(end / LEVEL_STEP, 6))
    levels = [round((i + 1) * LEVEL_STEP, 6) for i in range(steps)]
    if not levels or levels[-1] < end - 1e-9:
        levels.append(round(end, 6))
    return tuple(levels)
