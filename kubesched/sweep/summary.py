"""A sweep's results averaged over seeds: one row per policy (or configuration) and level.

Replays are grouped by pod list, arrival level and policy; comparisons by snapshot and
configuration. Each figure is the mean over the group's seeds with its standard
deviation (the population one, as ``kubesched replay``'s report has it; 0 for one seed).
Rows are plain data: the terminal table, the CSV and the HTML report print the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import fmean, pstdev
from typing import Iterable, Sequence

from kubesched.planning import CompareResult, ConfigRun
from kubesched.plugins.gpushare import POLICIES
from kubesched.replay import ReplayResult

__all__ = ["CompareRow", "ReplayRow", "Stat", "compare_rows", "replay_rows", "seeds_text", "stat"]


@dataclass(frozen=True, slots=True)
class Stat:
    """Mean and standard deviation over seeds."""

    mean: float
    std: float

    def text(self, scale: float = 1.0, digits: int = 1) -> str:
        return f"{self.mean * scale:.{digits}f} ± {self.std * scale:.{digits}f}"


def stat(values: Iterable[float]) -> Stat:
    data = list(values)
    return Stat(fmean(data), pstdev(data)) if data else Stat(0.0, 0.0)


@dataclass(frozen=True, slots=True)
class ReplayRow:
    """One policy on one pod list at one arrival level, at the end of its replays."""

    trace: str  # the pod list's file name
    pods: str  # its path, as given
    mode: str
    arrival: float  # the arrival level asked for (fgd); timeline: the GPU requests arrived by the end, mean over seeds
    policy: str
    seeds: list[int]
    allocation: Stat  # allocated / cluster GPUs
    allocated_gpus: Stat
    unallocated_gpus: Stat
    fragmentation_gpus: Stat
    fragmentation_ratio: Stat  # of the unallocated GPUs
    pods_failed: Stat
    seconds: Stat  # wall-clock time of one replay


def replay_rows(results: Iterable[ReplayResult]) -> list[ReplayRow]:
    """Rows in the grid's pod-list order (first seen), then by arrival, then the paper's policy order."""
    groups: dict[tuple[str, str, float, str], list[ReplayResult]] = {}
    for result in results:
        spec = result.spec
        groups.setdefault((spec.pods, spec.mode, spec.arrival, result.policy), []).append(result)
    traces = list(dict.fromkeys(pods for pods, _, _, _ in groups))
    order = list(POLICIES)

    def rank(key: tuple[str, str, float, str]) -> tuple[int, str, float, int]:
        pods, mode, arrival, policy = key
        return traces.index(pods), mode, arrival, order.index(policy) if policy in order else len(order)

    rows = []
    for key in sorted(groups, key=rank):
        pods, mode, arrival, policy = key
        members = sorted(groups[key], key=lambda r: r.spec.seed)
        ends = [r.final for r in members if r.points]
        rows.append(ReplayRow(
            trace=members[0].trace, pods=pods, mode=mode,
            arrival=arrival if mode == "fgd" else fmean(p.arrived for p in ends) if ends else 0.0,
            policy=policy, seeds=[r.spec.seed for r in members],
            allocation=stat(p.allocation_ratio for p in ends),
            allocated_gpus=stat(p.allocated_gpus for p in ends),
            unallocated_gpus=stat(p.unallocated_gpus for p in ends),
            fragmentation_gpus=stat(p.fragmentation_gpus for p in ends),
            fragmentation_ratio=stat(p.fragmentation_ratio for p in ends),
            pods_failed=stat(p.pods_failed for p in ends),
            seconds=stat(r.seconds for r in members),
        ))
    return rows


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One configuration on one snapshot, over its seeds."""

    snapshot: str  # the snapshot's file name
    path: str  # its path, as given
    config: str  # the configuration's label, as ``kubesched compare`` names it
    baseline: bool  # the first configuration: the others are compared with it
    seeds: list[int]
    pending: int  # pending pods in the snapshot
    scheduled: Stat
    unschedulable: Stat
    preempted: Stat
    moved: Stat | None  # placed on another node than under the baseline (None: the baseline)
    became_unschedulable: Stat | None  # placed by the baseline, not here
    became_schedulable: Stat | None  # not placed by the baseline, placed here
    cpu: Stat  # share of the cluster's allocatable cpu requested after the run
    memory: Stat
    nodes_used: Stat
    room: Stat  # how many more of the common pending pod shape fit (fragmentation)
    seconds: Stat  # wall-clock time of one configuration's run


def compare_rows(results: Iterable[CompareResult]) -> list[CompareRow]:
    """Rows in snapshot order (first seen), configurations in the order given."""
    groups: dict[str, list[CompareResult]] = {}
    for result in results:
        groups.setdefault(result.snapshot, []).append(result)
    rows = []
    for path, members in groups.items():
        members.sort(key=lambda r: r.seed)
        for i, label in enumerate(members[0].labels):
            runs = [r.configs[i] for r in members]
            changes = [r.changes[i - 1] for r in members] if i else []
            rows.append(CompareRow(
                snapshot=Path(path).name, path=path, config=label, baseline=i == 0,
                seeds=[r.seed for r in members], pending=members[0].pending,
                scheduled=stat(r.scheduled for r in runs),
                unschedulable=stat(r.unschedulable for r in runs),
                preempted=stat(r.preempted for r in runs),
                moved=stat(c.moved for c in changes) if i else None,
                became_unschedulable=stat(c.became_unschedulable for c in changes) if i else None,
                became_schedulable=stat(c.became_schedulable for c in changes) if i else None,
                cpu=stat(_share(r, "cpu") for r in runs),
                memory=stat(_share(r, "memory") for r in runs),
                nodes_used=stat(r.nodes_used for r in runs),
                room=stat(r.fragmentation.room for r in runs),
                seconds=stat(r.seconds for r in runs),
            ))
    return rows


def _share(run: ConfigRun, resource: str) -> float:
    usage = run.resource(resource)
    return usage.share if usage is not None else 0.0


def seeds_text(seeds: Sequence[int]) -> str:
    """``42..51`` for a run of seeds, else the list."""
    ordered = sorted(seeds)
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}..{ordered[-1]}"
    return ", ".join(str(s) for s in ordered)
