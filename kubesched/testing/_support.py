"""What the contract checks share: the error, the report, and calling a plugin as the framework does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence, TypeVar

import numpy as np

from ..framework.cycle_state import PODS_TO_ACTIVATE, CycleState
from ..framework.interfaces import Plugin, PreFilterPlugin, PreScorePlugin
from ..framework.registry import PluginSpec
from ..framework.status import Code, Status
from ..framework.views import BoolArray, IntArray, RowArray
from ..objects.pod import PodInfo
from .clusters import RandomCluster, random_clusters

__all__ = [
    "ContractError",
    "ContractReport",
    "as_scores",
    "build",
    "call",
    "clusters_or_default",
    "decode",
    "new_state",
    "pre_filter",
    "prepare_scoring",
    "score_rows",
    "verdict",
]

A = TypeVar("A")
R = TypeVar("R")


class ContractError(AssertionError):
    """A plugin broke the plugin contract; the message says where and how to reproduce it."""


@dataclass
class ContractReport:
    """What the checks compared; a check that compared nothing fails instead of reporting zeros."""

    plugin: str
    checks: list[str] = field(default_factory=list)
    clusters: int = 0
    pods: int = 0
    filter_rows_compared: int = 0
    filter_rows_rejected: int = 0
    score_rows_compared: int = 0
    scores_checked: int = 0
    score_values: set[int] = field(default_factory=set)
    hints_called: int = 0
    unreserve_calls: int = 0
    permit_calls: int = 0
    permit_waits: int = 0
    permit_rejections: int = 0
    extension_checks: int = 0
    placements_generated: int = 0
    placement_scores: int = 0
    notes: list[str] = field(default_factory=list)

    def merge(self, other: "ContractReport") -> "ContractReport":
        self.checks += [c for c in other.checks if c not in self.checks]
        self.clusters = max(self.clusters, other.clusters)
        self.pods = max(self.pods, other.pods)
        self.filter_rows_compared += other.filter_rows_compared
        self.filter_rows_rejected += other.filter_rows_rejected
        self.score_rows_compared += other.score_rows_compared
        self.scores_checked += other.scores_checked
        self.score_values |= other.score_values
        self.hints_called += other.hints_called
        self.unreserve_calls += other.unreserve_calls
        self.permit_calls += other.permit_calls
        self.permit_waits += other.permit_waits
        self.permit_rejections += other.permit_rejections
        self.extension_checks += other.extension_checks
        self.placements_generated += other.placements_generated
        self.placement_scores += other.placement_scores
        self.notes += [n for n in other.notes if n not in self.notes]
        return self

    def __str__(self) -> str:
        counts = [
            ("filter verdicts compared", self.filter_rows_compared),
            ("of them rejections", self.filter_rows_rejected),
            ("scores compared", self.score_rows_compared),
            ("scores range-checked", self.scores_checked),
            ("distinct scores", len(self.score_values)),
            ("hint calls", self.hints_called),
            ("unreserve calls", self.unreserve_calls),
            ("permit calls", self.permit_calls),
            ("of them waits", self.permit_waits),
            ("of them rejections", self.permit_rejections),
            ("PreFilterExtensions changes compared", self.extension_checks),
            ("placements generated", self.placements_generated),
            ("placement scores range-checked", self.placement_scores),
        ]
        shown = ", ".join(f"{label} {n}" for label, n in counts if n)
        head = f"{self.plugin}: {', '.join(self.checks) or 'no checks'} ({self.clusters} clusters, {self.pods} pods"
        return head + (f"; {shown})" if shown else ")") + "".join(f"\n  note: {n}" for n in self.notes)


def clusters_or_default(clusters: Sequence[RandomCluster] | None) -> Sequence[RandomCluster]:
    found = random_clusters() if clusters is None else clusters
    if not found:
        raise ContractError("no clusters to check the plugin on")
    return found


def build(spec: PluginSpec[A], decoded: A | None, cluster: RandomCluster) -> Plugin:
    try:
        plugin = spec.build(decoded, cluster.handle)
    except Exception as err:
        raise ContractError(f"plugin {spec.name}: its factory raised on {cluster.describe()}: "
                            f"{type(err).__name__}: {err}") from err
    name = getattr(plugin, "name", None)
    if name != spec.name:
        raise ContractError(f"plugin {spec.name}: its factory made a plugin named {name!r}; "
                            f"the name must equal the spec's ({spec.name!r}), the one configs enable it by")
    return plugin


def decode(spec: PluginSpec[A], args: object) -> A | None:
    try:
        return spec.decode(args)
    except Exception as err:
        raise ContractError(f"plugin {spec.name}: its args do not decode: {type(err).__name__}: {err}") from err


def new_state() -> CycleState:
    """A cycle state as the scheduler starts every cycle with."""
    state = CycleState()
    state.write(PODS_TO_ACTIVATE, {})
    return state


def call(plugin: Plugin, what: str, cluster: RandomCluster, pod: PodInfo, run: Callable[[], R]) -> R:
    try:
        return run()
    except ContractError:
        raise
    except Exception as err:
        raise ContractError(f"plugin {plugin.name}: {what} raised for pod {pod.key} on {cluster.describe()}: "
                            f"{type(err).__name__}: {err}") from err


def verdict(status: Status | None) -> tuple[str, tuple[str, ...]] | None:
    if status is None or status.code == Code.SUCCESS:
        return None
    return status.code.label, status.reasons


def pre_filter(plugin: Plugin, state: CycleState, pod: PodInfo, cluster: RandomCluster) -> tuple[bool, BoolArray]:
    """Run PreFilter as the framework does: (whether Filter runs for the pod, candidate rows)."""
    table = cluster.snapshot.table
    candidates = np.array(table.alive[: table.size], dtype=bool)
    if not isinstance(plugin, PreFilterPlugin):
        return True, candidates
    result, status = call(plugin, "pre_filter", cluster, pod, lambda: plugin.pre_filter(state, pod, cluster.snapshot))
    if status is not None and status.code != Code.SUCCESS:
        return False, candidates  # Skip skips Filter; a rejection ends the cycle
    if result is not None and result.node_names is not None:
        allowed = np.zeros(len(candidates), dtype=bool)
        allowed[table.rows_of(result.node_names)] = True
        candidates &= allowed
    return True, candidates


def score_rows(pod: PodInfo, cluster: RandomCluster) -> list[RowArray]:
    rows = cluster.rows()
    rng = cluster.rng(f"score/{pod.uid}")
    subset = np.asarray([r for r in rows.tolist() if rng.random() < 0.6], dtype=np.int64)
    return [rows, subset] if len(subset) else [rows]


def prepare_scoring(plugin: Plugin, state: CycleState, pod: PodInfo, rows: RowArray, cluster: RandomCluster) -> bool:
    """PreFilter and PreScore as the framework runs them before Score; False when the
    framework would not score the pod with this plugin."""
    if isinstance(plugin, PreFilterPlugin):
        _, status = call(plugin, "pre_filter", cluster, pod, lambda: plugin.pre_filter(state, pod, cluster.snapshot))
        if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
            return False
    if isinstance(plugin, PreScorePlugin):
        status = call(plugin, "pre_score", cluster, pod, lambda: plugin.pre_score(state, pod, cluster.snapshot, rows))
        if status is not None and status.code != Code.SUCCESS:
            return False
    return True


def as_scores(name: str, raw: object, count: int, pod: PodInfo, cluster: RandomCluster) -> IntArray:
    try:
        scores = np.asarray(raw)
    except Exception as err:  # pragma: no cover - whatever numpy cannot take
        raise ContractError(f"plugin {name}: scores for pod {pod.key} are not an array: {err}") from err
    if scores.shape != (count,) or not (np.issubdtype(scores.dtype, np.integer) or count == 0):
        raise ContractError(f"plugin {name}: scores for pod {pod.key} on {cluster.describe()} must be {count} integers, "
                            f"one per row asked, in that order; got {scores.dtype} {scores.shape}")
    return scores.astype(np.int64)

