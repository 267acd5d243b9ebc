"""`kubesched sweep` end to end: on an existing cluster by address, on a local cluster of its own,
the table, the files it writes, failed tasks, Ctrl-C, and bad grids (one line, exit 2)."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest
from click.testing import CliRunner
from dask.distributed import LocalCluster
from distributed.core import Status

from kubesched.cli import sweep_cmd
from kubesched.cli.main import cli
from kubesched.replay import ReplayResult
from kubesched.sweep import runner

from .conftest import BAD_PODS, NODES, PACKING, PODS, SNAPSHOT

REPLAYS = ["--nodes", NODES, "--variant", PODS, "--policy", "FGD", "--policy", "Random", "--seeds", "2",
           "--arrival", "1.0", "--arrival", "1.3"]


def _sweep(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["sweep", *args])
    return result.exit_code, result.stdout, result.stderr


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))


def test_a_replay_sweep_on_the_cluster_at_scheduler_address_prints_the_table_and_writes_the_report(
        cluster: LocalCluster, tmp_path: Path) -> None:
    code, out, err = _sweep(*REPLAYS, "--scheduler-address", cluster.scheduler_address, "--output", str(tmp_path), "-q")
    assert code == 0, err
    assert "At the end of each replay: mean ± std over seeds" in out
    assert "8 of 8 task(s) finished on 2 worker(s)" in out
    document = json.loads((tmp_path / "sweep.json").read_text())
    assert (document["kind"], document["tasks"], document["finished"], document["failed"]) == ("replay", 8, 8, [])
    replays = document["results"]["replays"]
    assert sorted((r["policy"], r["spec"]["arrival"], r["spec"]["seed"]) for r in replays) == sorted(
        (p, a, s) for p in ("FGD", "Random") for a in (1.0, 1.3) for s in (42, 43))
    fgd = next(row for row in document["summary"] if row["policy"] == "FGD" and row["arrival"] == 1.3)
    ends = [r["points"][-1]["allocation_ratio"] for r in replays if r["policy"] == "FGD" and r["spec"]["arrival"] == 1.3]
    assert fgd["allocation"]["mean"] == pytest.approx(fmean(ends))
    assert f"{fgd['allocation']['mean'] * 100:.1f} ± {fgd['allocation']['std'] * 100:.1f}" in out
    assert [row["status"] for row in _rows(tmp_path / "results.csv")] == ["ok"] * 8
    assert [(r["policy"], r["arrival"]) for r in _rows(tmp_path / "summary.csv")] == [
        ("Random", "1.0"), ("FGD", "1.0"), ("Random", "1.3"), ("FGD", "1.3")]
    assert len(_rows(tmp_path / "points.csv")) == sum(len(r["points"]) for r in replays)
    html = (tmp_path / "report.html").read_text()
    assert html.count("src='data:image/png;base64,") == 1 + 2 * 2  # the bars, then two plots per arrival level
    assert "<caption>At the end of each replay: mean ± std over seeds</caption>" in html


def test_a_comparison_sweep_reads_a_grid_file(cluster: LocalCluster, tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"kind: compare\nsnapshots: [{SNAPSHOT}]\nconfigs: [default, {PACKING}]\nseeds: 3\n")
    code, out, err = _sweep("--grid", str(grid), "--scheduler-address", cluster.scheduler_address,
                            "--output", str(tmp_path / "out"), "-q")
    assert code == 0, err
    assert "default (baseline)" in out and "most-allocated.yaml" in out and "3 of 3 task(s) finished" in out
    rows = _rows(tmp_path / "out" / "results.csv")
    assert [(r["seed"], r["config"]) for r in rows] == [
        (s, c) for s in ("42", "43", "44") for c in ("default", "most-allocated.yaml")]
    summary = _rows(tmp_path / "out" / "summary.csv")
    packing = [r for r in rows if r["config"] == "most-allocated.yaml"]
    assert float(summary[1]["scheduled_mean"]) == fmean(int(r["scheduled"]) for r in packing)
    assert "Configurations side by side" in (tmp_path / "out" / "report.html").read_text()


def test_a_failed_task_is_reported_and_the_others_results_kept(cluster: LocalCluster, tmp_path: Path) -> None:
    code, out, err = _sweep("--nodes", NODES, "--variant", PODS, "--variant", BAD_PODS, "--policy", "FGD",
                            "--scheduler-address", cluster.scheduler_address, "--output", str(tmp_path), "-q")
    assert code == sweep_cmd.EXIT_FAILED
    assert (f"failed: FGD seed 42, arrival 130%, bad-pods.csv: TraceError: {BAD_PODS}:3: gpu_milli: "
            "must be an integer, got 'lots'") in err
    assert "1 of 2 task(s) failed" in err
    assert "pods.csv" in out and "1 of 2 task(s) finished" in out
    assert [(r["pods"], r["status"]) for r in _rows(tmp_path / "results.csv")] == [(PODS, "ok"), (BAD_PODS, "failed")]


def test_ctrl_c_on_a_local_cluster_cancels_the_rest_reports_what_finished_and_closes_the_cluster(
        monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[LocalCluster, int]] = []

    class Recorded(LocalCluster):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            started.append((self, len(self.workers)))

    def interrupt(result: ReplayResult) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "LocalCluster", Recorded)
    monkeypatch.setattr(sweep_cmd, "_replay_line", interrupt)  # called as the first task finishes
    code, out, err = _sweep("--nodes", NODES, "--variant", PODS, "--seeds", "4", "--workers", "1")
    assert code == sweep_cmd.EXIT_INTERRUPTED
    assert "sweep: 24 replay task(s) on a local cluster of 1 worker process(es)" in err
    assert "interrupted: 23 task(s) cancelled" in err
    assert "1 of 24 task(s) finished on 1 worker(s)" in out
    [(local, workers)] = started
    assert workers == 1 and local.status == Status.closed


def test_an_unreachable_scheduler_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", 0.5)
    code, out, err = _sweep(*REPLAYS, "--scheduler-address", "tcp://127.0.0.1:1", "-q")
    assert code == 2 and out == ""
    assert err.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:1: ") and err.count("\n") == 1


def test_without_dask_the_command_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    code, _, err = _sweep(*REPLAYS)
    assert code == 2 and err == f"error: {sweep_cmd.EXTRA_MISSING}\n"
    assert "pip install 'kubesched[research]'" in err


@pytest.mark.parametrize(("args", "message"), [
    ([], "nothing to sweep: give --grid FILE, or replays (--nodes, --variant) or comparisons (--snapshot, --config)"),
    (["--nodes", NODES, "--variant", PODS, "--policy", "Tetris"],
     "unknown policy 'Tetris'; want one of Random, DotProduct, GpuClustering, GpuPacking, BestFit, FGD"),
    (["--variant", PODS], "replays need the node list: --nodes FILE"),
    (["--nodes", NODES, "--variant", "/nowhere/*.csv"], "--variant '/nowhere/*.csv': no file matches"),
    (["--nodes", NODES, "--variant", "/nowhere/pods.csv"], "/nowhere/pods.csv: No such file or directory"),
    (["--nodes", NODES, "--variant", PODS, "--seeds", "0"], "seeds must be at least 1, got 0"),
    (["--nodes", NODES, "--variant", PODS, "--config", PACKING],
     "a sweep runs replays (--nodes, --variant, --policy, --arrival) or comparisons (--snapshot, --config), not both"),
    (["--snapshot", SNAPSHOT, "--config", "default"], "a comparison grid needs two or more configurations (--config), got 1"),
    (["--grid", "grid.yaml", "--policy", "FGD"], "give the grid as --grid FILE or as flags, not both"),
    (["--grid", "/nowhere/grid.yaml"], "/nowhere/grid.yaml: No such file or directory"),
    (["--nodes", NODES, "--variant", PODS, "--workers", "2", "--scheduler-address", "tcp://127.0.0.1:1"],
     "give --workers (a local cluster) or --scheduler-address (an existing one), not both"),
])
def test_a_bad_grid_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    code, out, err = _sweep(*args)
    assert (code, out, err) == (2, "", f"error: {message}\n")
