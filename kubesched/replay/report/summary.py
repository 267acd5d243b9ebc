"""Replay results averaged over seeds: one curve per policy, as the paper draws them."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean, pstdev
from typing import Iterable, Sequence

from kubesched.plugins.gpushare import POLICIES

from ..spec import LevelPoint, ReplayResult

__all__ = ["PAPER_FINAL", "EndState", "PolicyCurve", "summarize"]

PAPER_FINAL: dict[str, float] = {
    "FGD": 0.954,
    "BestFit": 0.931,
    "GpuPacking": 0.920,
    "GpuClustering": 0.919,
    "DotProduct": 0.909,
    "Random": 0.875,
}
"""The FGD paper's GPU allocation ratio at the end of the 130% arrival (default trace)."""


@dataclass(frozen=True, slots=True)
class EndState:
    """The timeline mode's end of a replay, after the trace's final departures, averaged over seeds."""

    arrived: float
    time: float  # virtual seconds: the trace's last event
    allocation: float
    allocation_std: float
    unallocated_gpus: float
    fragmentation_gpus: float
    fragmentation_ratio: float
    pods_failed: float


@dataclass(slots=True)
class PolicyCurve:
    """One policy (on one trace, in one mode, at one arrival target, with one tie-break)
    averaged over its seeds, level by level."""

    label: str
    policy: str
    trace: str
    mode: str
    arrival: float  # the fgd mode's target (0 in the timeline mode, which has none)
    tie_break: str
    seeds: list[int]
    levels: list[float]
    allocation: list[float]  # mean allocation ratio
    allocation_std: list[float]
    unallocated_gpus: list[float]
    fragmentation_gpus: list[float]
    fragmentation_ratio: list[float]
    pods_failed: list[float]
    seconds: float  # mean wall-clock time of one replay
    nodes: int = 0  # the cluster's nodes (the paper's figures are for its 1,213, not for a sample)
    end: EndState | None = None  # timeline mode: after the final departures (the curve ends at the last arrival)
    times: list[float] = field(default_factory=list)  # timeline mode: virtual seconds when each level was reached
    # Recorded replays (run_replay(record=True)): the allocation after every event, mean over seeds, against time.
    series_times: list[float] = field(default_factory=list)
    series_allocation: list[float] = field(default_factory=list)

    def at(self, level: float) -> int | None:
        """The index of ``level`` in ``levels`` (None if not recorded)."""
        return next((i for i, x in enumerate(self.levels) if abs(x - level) < 1e-9), None)

    @property
    def final_allocation(self) -> float:
        return self.allocation[-1] if self.allocation else 0.0


_Key = tuple[str, str, str, float, str]  # policy, trace, mode, arrival, tie-break


def summarize(results: Iterable[ReplayResult]) -> list[PolicyCurve]:
    """Group results by policy, trace, mode, arrival target and tie-break, and average each
    group over its seeds at the levels all of them recorded; policies in the paper's
    order. Labels name what tells curves apart (``FGD · openb_pod_list_gpushare40.csv``)."""
    groups: dict[_Key, list[ReplayResult]] = {}
    for result in results:
        spec = result.spec
        arrival = spec.arrival if spec.mode == "fgd" else 0.0
        groups.setdefault((result.policy, result.trace, spec.mode, arrival, spec.tie_break), []).append(result)
    varies = [len({key[i] for key in groups}) > 1 for i in range(5)]
    order = list(POLICIES)
    curves = []
    for key, members in sorted(groups.items(), key=lambda kv: (_rank(order, kv[0][0]), *kv[0][1:])):
        policy, trace, mode, arrival, tie_break = key
        parts = [policy, trace if varies[1] else "", mode if varies[2] else "",
                 f"{arrival * 100:g}%" if varies[3] and arrival else "", f"{tie_break} ties" if varies[4] else ""]
        curves.append(_curve(" · ".join(p for p in parts if p), key, members))
    return curves


def _rank(order: list[str], policy: str) -> int:
    return order.index(policy) if policy in order else len(order)


def _curve(label: str, key: _Key, results: Sequence[ReplayResult]) -> PolicyCurve:
    common = set.intersection(*(set(round(p.level, 9) for p in r.points) for r in results))
    levels = sorted(common)
    per_level: list[list[LevelPoint]] = [[_point(r, level) for r in results] for level in levels]
    policy, trace, mode, arrival, tie_break = key
    return PolicyCurve(
        label=label,
        policy=policy,
        trace=trace,
        mode=mode,
        arrival=arrival,
        tie_break=tie_break,
        seeds=sorted(r.spec.seed for r in results),
        levels=levels,
        allocation=[fmean(p.allocation_ratio for p in points) for points in per_level],
        allocation_std=[pstdev(p.allocation_ratio for p in points) for points in per_level],
        unallocated_gpus=[fmean(p.unallocated_gpus for p in points) for points in per_level],
        fragmentation_gpus=[fmean(p.fragmentation_gpus for p in points) for points in per_level],
        fragmentation_ratio=[fmean(p.fragmentation_ratio for p in points) for points in per_level],
        pods_failed=[fmean(p.pods_failed for p in points) for points in per_level],
        seconds=fmean(r.seconds for r in results),
        nodes=max(r.nodes for r in results),
        times=[fmean(p.time for p in points) for points in per_level],
        **_series(results),
        end=_end([r.end for r in results if r.end is not None]) if all(r.end is not None for r in results) else None,
    )


def _series(results: Sequence[ReplayResult]) -> dict[str, list[float]]:
    """Each seed's allocation as a step function of virtual time, averaged at every time
    any of them changed (nothing when a replay was not recorded)."""
    if not results or any(not r.series for r in results):
        return {}
    times = sorted({p.time for r in results for p in r.series})
    steps = [_steps(r, times) for r in results]
    return {"series_times": times, "series_allocation": [fmean(column) for column in zip(*steps)]}


def _steps(result: ReplayResult, times: Sequence[float]) -> list[float]:
    """The replay's allocation at each of ``times``: its value after the last event at or before it."""
    out: list[float] = []
    points = result.series
    i, value = 0, 0.0
    for t in times:
        while i < len(points) and points[i].time <= t:
            value = points[i].gpu_allocation_ratio
            i += 1
        out.append(value)
    return out


def _end(ends: Sequence[LevelPoint]) -> EndState | None:
    if not ends:
        return None
    return EndState(
        arrived=fmean(p.arrived for p in ends),
        time=fmean(p.time for p in ends),
        allocation=fmean(p.allocation_ratio for p in ends),
        allocation_std=pstdev(p.allocation_ratio for p in ends),
        unallocated_gpus=fmean(p.unallocated_gpus for p in ends),
        fragmentation_gpus=fmean(p.fragmentation_gpus for p in ends),
        fragmentation_ratio=fmean(p.fragmentation_ratio for p in ends),
        pods_failed=fmean(p.pods_failed for p in ends),
    )


def _point(result: ReplayResult, level: float) -> LevelPoint:
    point = result.at(level)
    if point is None:  # cannot happen: levels are those every result recorded
        raise KeyError(level)
    return point
