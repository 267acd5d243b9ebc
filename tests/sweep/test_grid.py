"""Grids expand to the specs of the cross product, in a fixed order; bad grids are one GridError line."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.planning import CompareSpec
from kubesched.plugins.gpushare import POLICIES
from kubesched.replay import ReplaySpec
from kubesched.sweep import CompareGrid, GridError, ReplayGrid, expand_paths, missing_files, seed_range

from .conftest import DATA, NODES, PACKING, PODS, SNAPSHOT


def test_a_replay_grid_is_the_cross_product_of_variants_arrivals_policies_and_seeds() -> None:
    grid = ReplayGrid(NODES, (PODS, "other.csv"), ("fgd", "Random"), (1, 2, 3), (1.3, 1.0))
    specs = grid.specs()
    assert len(specs) == grid.size == 2 * 2 * 2 * 3
    assert specs[0] == ReplaySpec(NODES, PODS, "FGD", 1, "fgd", 1.0, (), "name")
    cells = [(s.pods, s.arrival, s.policy, s.seed) for s in specs]
    assert cells == sorted(cells, key=lambda c: ((PODS, "other.csv").index(c[0]), c[1], ("FGD", "Random").index(c[2]), c[3]))
    assert len(set(specs)) == len(specs)


def test_policies_are_named_by_their_short_name_and_default_to_the_papers_six() -> None:
    assert ReplayGrid(NODES, (PODS,), ("fgd", "FGDScore", "bestfit")).policies == ("FGD", "BestFit")
    assert ReplayGrid(NODES, (PODS,)).policies == tuple(POLICIES)


def test_a_comparison_grid_puts_every_config_in_each_snapshot_and_seed() -> None:
    grid = CompareGrid((SNAPSHOT, "b.json"), ("default", PACKING), (7, 8))
    assert grid.specs() == [CompareSpec(SNAPSHOT, ("default", PACKING), 7, "random"),
                            CompareSpec(SNAPSHOT, ("default", PACKING), 8, "random"),
                            CompareSpec("b.json", ("default", PACKING), 7, "random"),
                            CompareSpec("b.json", ("default", PACKING), 8, "random")]


def test_seed_range_counts_from_the_first_seed() -> None:
    assert seed_range(3) == (42, 43, 44)
    assert seed_range(2, first=0) == (0, 1)


def test_globs_expand_sorted_and_plain_paths_stay_as_given() -> None:
    assert expand_paths([str(DATA / "*pods.csv"), "plain.csv"], "--variant") == (
        str(DATA / "bad-pods.csv"), str(DATA / "pods.csv"), "plain.csv")
    assert expand_paths(["*pods.csv"], "variants", base=DATA) == (str(DATA / "bad-pods.csv"), str(DATA / "pods.csv"))


def test_missing_files_names_each_unreadable_path(tmp_path: Path) -> None:
    grid = ReplayGrid(NODES, (PODS, str(tmp_path / "gone.csv"), str(tmp_path)))
    assert missing_files(grid) == [f"{tmp_path / 'gone.csv'}: No such file or directory", f"{tmp_path}: not a file"]
    assert missing_files(CompareGrid((SNAPSHOT,), ("default", PACKING))) == []


@pytest.mark.parametrize(("build", "message"), [
    (lambda: ReplayGrid(NODES, ()), "a replay grid needs at least one pod list (--variant)"),
    (lambda: ReplayGrid(NODES, (PODS,), ("Tetris",)),
     "unknown policy 'Tetris'; want one of Random, DotProduct, GpuClustering, GpuPacking, BestFit, FGD"),
    (lambda: ReplayGrid(NODES, (PODS,), seeds=(1, 1)), "seeds repeat: [1, 1]"),
    (lambda: ReplayGrid(NODES, (PODS,), arrivals=(1.3, 0.0)), "arrival levels must be above 0, got [1.3, 0.0]"),
    (lambda: ReplayGrid(NODES, (PODS,), arrivals=(1.0, 1.3), mode="timeline"),
     "the timeline mode replays the trace's own times: give no arrival levels"),
    (lambda: CompareGrid((SNAPSHOT,), ("default",)), "a comparison grid needs two or more configurations (--config), got 1"),
    (lambda: seed_range(0), "seeds must be at least 1, got 0"),
    (lambda: expand_paths(["/nowhere/*.csv"], "--variant"), "--variant '/nowhere/*.csv': no file matches"),
])
def test_bad_grids_raise_one_line(build: object, message: str) -> None:
    with pytest.raises(GridError) as caught:
        build()  # type: ignore[operator]
    assert str(caught.value) == message
