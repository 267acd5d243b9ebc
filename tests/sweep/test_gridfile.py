"""The YAML grid file: the schema of docs/sweep.md, paths relative to the file, one line per mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.plugins.gpushare import POLICIES
from kubesched.sweep import CompareGrid, GridError, ReplayGrid, load_grid

from .conftest import DATA


def _grid(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


def test_a_replay_grid_file_reads_every_key(tmp_path: Path) -> None:
    path = _grid(tmp_path, f"""
kind: replay
nodes: {DATA / 'nodes.csv'}
variants: ["{DATA}/*pods.csv"]
policies: [FGD, random]
seeds: 3
first_seed: 7
arrivals: [1.0, 1.3]
mode: fgd
tie_break: random
""")
    assert load_grid(str(path)) == ReplayGrid(str(DATA / "nodes.csv"), (str(DATA / "bad-pods.csv"), str(DATA / "pods.csv")),
                                              ("FGD", "Random"), (7, 8, 9), (1.0, 1.3), "fgd", "random")


def test_defaults_and_relative_paths_resolve_against_the_grid_file(tmp_path: Path) -> None:
    path = _grid(tmp_path, "kind: replay\nnodes: n.csv\nvariants: p.csv\n")
    assert load_grid(str(path)) == ReplayGrid(str(tmp_path / "n.csv"), (str(tmp_path / "p.csv"),), tuple(POLICIES), (42,))


def test_a_comparison_grid_file_keeps_default_and_takes_a_list_of_seeds(tmp_path: Path) -> None:
    path = _grid(tmp_path, "kind: compare\nsnapshots: [a.json]\nconfigs: [default, packing.yaml]\nseeds: [3, 5]\n")
    assert load_grid(str(path)) == CompareGrid((str(tmp_path / "a.json"),), ("default", str(tmp_path / "packing.yaml")), (3, 5))


@pytest.mark.parametrize(("text", "message"), [
    ("kind: replays\n", "kind: want replay or compare, got 'replays'"),
    ("kind: replay\nnodes: n.csv\nvariants: p.csv\npolicy: FGD\n",
     "unknown key 'policy'; a replay grid takes kind, nodes, variants, policies, seeds, first_seed, arrivals, mode, tie_break"),
    ("kind: replay\nvariants: p.csv\n", "nodes: missing"),
    ("kind: replay\nnodes: n.csv\nvariants: p.csv\nseeds: ten\n", "seeds: want an integer, got 'ten'"),
    ("kind: replay\nnodes: n.csv\nvariants: p.csv\narrivals: [1.3, high]\n", "arrivals: want a number, got 'high'"),
    ("kind: replay\nnodes: n.csv\nvariants: p.csv\npolicies: [Tetris]\n",
     "unknown policy 'Tetris'; want one of Random, DotProduct, GpuClustering, GpuPacking, BestFit, FGD"),
    ("kind: compare\nsnapshots: a.json\nconfigs: [default]\n",
     "a comparison grid needs two or more configurations (--config), got 1"),
    ("kind: compare\nsnapshots: a.json\nconfigs: [default, b.yaml]\nseeds: [1, 2]\nfirst_seed: 4\n",
     "first_seed: give it with a number of seeds, not with a list"),
    ("- kind: replay\n", "want one mapping of grid keys (kind: replay or compare, ...), got list"),
    ("kind: [replay\n", "invalid YAML at line 1, column 7: unclosed bracket"),
])
def test_a_bad_grid_file_is_one_line_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = _grid(tmp_path, text)
    with pytest.raises(GridError) as caught:
        load_grid(str(path))
    assert str(caught.value).startswith(f"{path}: {message}")
    assert "\n" not in str(caught.value)


def test_a_missing_grid_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(GridError, match=r"gone\.yaml: No such file or directory$"):
        load_grid(str(tmp_path / "gone.yaml"))
