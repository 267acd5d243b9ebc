"""Replay results averaged over seeds: one curve per policy, as the paper draws them."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Iterable, Sequence

from kubesched.plugins.gpushare import POLICIES

from ..spec import LevelPoint, ReplayResult

__all__ = ["PAPER_FINAL", "PolicyCurve", "summarize"]

PAPER_FINAL: dict[str, float] = {
    "FGD": 0.954,
    "BestFit": 0.931,
    "GpuPacking": 0.920,
    "GpuClustering": 0.919,
    "DotProduct": 0.909,
    "Random": 0.875,
}
"""The FGD paper's GPU allocation ratio at the end of the 130% arrival (default trace)."""


@dataclass(slots=True)
class PolicyCurve:
    """One policy (on one trace, in one mode) averaged over its seeds, level by level."""

    label: str
    policy: str
    trace: str
    mode: str
    seeds: list[int]
    levels: list[float]
    allocation: list[float]  # mean allocation ratio
    allocation_std: list[float]
    unallocated_gpus: list[float]
    fragmentation_gpus: list[float]
    fragmentation_ratio: list[float]
    pods_failed: list[float]
    seconds: float  # mean wall-clock time of one replay

    def at(self, level: float) -> int | None:
        """The index of ``level`` in ``levels`` (None if not recorded)."""
        return next((i for i, x in enumerate(self.levels) if abs(x - level) < 1e-9), None)

    @property
    def final_allocation(self) -> float:
        return self.allocation[-1] if self.allocation else 0.0


def summarize(results: Iterable[ReplayResult]) -> list[PolicyCurve]:
    """Group results by (policy, trace, mode) and average them over seeds at the levels
    every result of the group recorded; policies in the paper's order."""
    groups: dict[tuple[str, str, str], list[ReplayResult]] = {}
    for result in results:
        groups.setdefault((result.policy, result.trace, result.spec.mode), []).append(result)
    traces = {trace for _, trace, _ in groups}
    modes = {mode for _, _, mode in groups}
    order = list(POLICIES)
    curves = []
    for (policy, trace, mode), members in sorted(groups.items(), key=lambda kv: (_rank(order, kv[0][0]), kv[0][1], kv[0][2])):
        label = policy + (f" · {trace}" if len(traces) > 1 else "") + (f" · {mode}" if len(modes) > 1 else "")
        curves.append(_curve(label, policy, trace, mode, members))
    return curves


def _rank(order: list[str], policy: str) -> int:
    return order.index(policy) if policy in order else len(order)


def _curve(label: str, policy: str, trace: str, mode: str, results: Sequence[ReplayResult]) -> PolicyCurve:
    common = set.intersection(*(set(round(p.level, 9) for p in r.points) for r in results))
    levels = sorted(common)
    per_level: list[list[LevelPoint]] = [[_point(r, level) for r in results] for level in levels]
    return PolicyCurve(
        label=label,
        policy=policy,
        trace=trace,
        mode=mode,
        seeds=sorted(r.spec.seed for r in results),
        levels=levels,
        allocation=[fmean(p.allocation_ratio for p in points) for points in per_level],
        allocation_std=[pstdev(p.allocation_ratio for p in points) for points in per_level],
        unallocated_gpus=[fmean(p.unallocated_gpus for p in points) for points in per_level],
        fragmentation_gpus=[fmean(p.fragmentation_gpus for p in points) for points in per_level],
        fragmentation_ratio=[fmean(p.fragmentation_ratio for p in points) for points in per_level],
        pods_failed=[fmean(p.pods_failed for p in points) for points in per_level],
        seconds=fmean(r.seconds for r in results),
    )


def _point(result: ReplayResult, level: float) -> LevelPoint:
    point = result.at(level)
    if point is None:  # cannot happen: levels are those every result recorded
        raise KeyError(level)
    return point
