"""The sweep's table: one row per policy (configuration) and level, mean and std over seeds."""

from __future__ import annotations

from statistics import fmean, pstdev

from kubesched.planning import run_compare
from kubesched.replay import run_replay
from kubesched.sweep import CompareGrid, ReplayGrid, Stat, compare_rows, replay_rows, stat

from .conftest import NODES, PACKING, PODS, SNAPSHOT


def test_stat_is_the_mean_and_population_std() -> None:
    assert stat([1.0, 2.0, 6.0]) == Stat(3.0, pstdev([1.0, 2.0, 6.0]))
    assert stat([5.0]) == Stat(5.0, 0.0)
    assert Stat(0.9543, 0.0123).text(100) == "95.4 ± 1.2"


def test_replay_rows_average_each_policy_and_arrival_over_its_seeds() -> None:
    results = [run_replay(s) for s in ReplayGrid(NODES, (PODS,), ("FGD", "Random"), (42, 43, 44), (1.3, 1.0)).specs()]
    rows = replay_rows(reversed(results))  # the order results come in does not matter
    assert [(r.arrival, r.policy) for r in rows] == [(1.0, "Random"), (1.0, "FGD"), (1.3, "Random"), (1.3, "FGD")]
    for row in rows:
        ends = [r.final for r in results if r.policy == row.policy and r.spec.arrival == row.arrival]
        assert row.seeds == [42, 43, 44]
        assert row.allocation == Stat(fmean(p.allocation_ratio for p in ends), pstdev(p.allocation_ratio for p in ends))
        assert row.fragmentation_gpus.mean == fmean(p.fragmentation_gpus for p in ends)
        assert row.pods_failed.std == pstdev(p.pods_failed for p in ends)


def test_compare_rows_average_each_configuration_over_its_seeds_against_the_baseline() -> None:
    results = [run_compare(s) for s in CompareGrid((SNAPSHOT,), ("default", PACKING), (1, 2, 3)).specs()]
    base, packing = compare_rows(results)
    assert (base.config, base.baseline, base.moved) == ("default", True, None)
    assert (packing.config, packing.baseline) == ("most-allocated.yaml", False)
    assert packing.scheduled == stat(r.configs[1].scheduled for r in results)
    assert packing.moved == stat(r.changes[0].moved for r in results)
    assert base.cpu == stat(u.share for r in results if (u := r.configs[0].resource("cpu")) is not None)
    assert base.room == stat(r.configs[0].fragmentation.room for r in results)
