"""`kubesched replay` end to end on the sample trace: the table, and the JSON, PNG and HTML it writes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.cli.replay_cmd import EXTRA_MISSING

DATA = Path(__file__).parent / "data"
TRACE = [str(DATA / "nodes.csv"), str(DATA / "pods.csv")]


def _replay(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["replay", *args])
    return result.exit_code, result.stdout, result.stderr


def test_replay_prints_the_table_and_writes_json_png_and_html(tmp_path: Path) -> None:
    code, out, _ = _replay(*TRACE, "--policy", "FGD", "--policy", "random", "--seeds", "2", "--output", str(tmp_path), "-q")
    assert code == 0, out
    assert "GPU allocation ratio (%) by arrived GPU requests" in out and "mean over 2 seed(s)" in out
    assert "Random" in out and "FGD" in out and "4 replay(s) of pods.csv on 8 nodes (31 GPUs)" in out
    document = json.loads((tmp_path / "replay.json").read_text())
    assert sorted((r["policy"], r["spec"]["seed"]) for r in document["replays"]) == [
        ("FGD", 42), ("FGD", 43), ("Random", 42), ("Random", 43)]
    assert [c["policy"] for c in document["curves"]] == ["Random", "FGD"]  # the paper's order
    for png in ("allocation.png", "fragmentation.png"):
        assert (tmp_path / png).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    html = (tmp_path / "report.html").read_text()
    assert html.count("src='data:image/png;base64,") == 2 and "<caption>At the end of each replay" in html


def test_the_table_shows_the_levels_asked_for() -> None:
    code, out, _ = _replay(*TRACE, "--policy", "BestFit", "--level", "0.25", "--level", "0.75", "-q")
    assert code == 0
    rows = [line for line in out.splitlines() if "%" in line and "│" in line and "arrived" not in line]
    assert [row.split("│")[1].strip() for row in rows[:2]] == ["25%", "75%"]


def test_the_timeline_mode_runs_from_the_command_line() -> None:
    code, out, _ = _replay(*TRACE, "--mode", "timeline", "--policy", "GpuPacking", "-q")
    assert code == 0 and "GpuPacking" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--policy", "Tetris"], "error: unknown policy 'Tetris'; want one of Random, DotProduct, GpuClustering, GpuPacking, BestFit, FGD"),
    (["--seed", "1", "--seeds", "3"], "error: give --seeds N or --seed S, not both"),
    (["--arrival", "0"], "error: --arrival must be above 0, got 0.0"),
])
def test_bad_options_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    code, out, err = _replay(*TRACE, *args)
    assert code == 2 and err.strip() == message and out == ""


def test_a_bad_trace_is_one_line_per_problem_and_exit_2(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,512,1,abc\np1,1000,x,1,10\n")
    code, _, err = _replay(TRACE[0], str(pods), "--policy", "FGD", "-q")
    assert code == 2
    assert err.splitlines() == [f"error: {pods}:2: gpu_milli: must be an integer, got 'abc'",
                                f"error: {pods}:3: memory_mib: must be an integer, got 'x'"]


def test_output_without_the_research_extra_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else find_spec(name, *a))
    code, _, err = _replay(*TRACE, "--output", str(tmp_path / "out"))
    assert code == 2 and err.strip() == f"error: {EXTRA_MISSING}"
    assert "pip install 'kubesched[research]'" in EXTRA_MISSING
