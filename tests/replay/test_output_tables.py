"""`kubesched replay --output` writes every pod's events and the cluster against virtual time
as CSV and Parquet; the timeline mode's plots are drawn against virtual time."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.cli.replay_cmd import EXTRA_MISSING
from kubesched.replay import ReplaySpec, run_replay
from kubesched.replay.report import allocation_figure, fragmentation_figure, summarize
from kubesched.replay.report.time_axis import time_axis
from kubesched.research import pod_events, series

DATA = Path(__file__).parent / "data"
TRACE = [str(DATA / "nodes.csv"), str(DATA / "pods.csv")]


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("mode", ["fgd", "timeline"])
def test_output_writes_events_and_series_as_csv_and_parquet(tmp_path: Path, mode: str) -> None:
    result = CliRunner().invoke(cli, ["replay", *TRACE, "--policy", "FGD", "--policy", "BestFit", "--mode", mode,
                                      "--output", str(tmp_path), "-q"])
    assert result.exit_code == 0, result.output
    expected = {name: run_replay(ReplaySpec(*TRACE, name, mode=mode), record=True) for name in ("BestFit", "FGD")}
    events = _csv(tmp_path / "events.csv")
    assert len(events) == sum(r.pods_arrived for r in expected.values())
    assert {e["policy"] for e in events} == {"FGD", "BestFit"}
    assert list(events[0]) == ["policy", "seed", "trace", "mode", "pod", "arrival_index", "arrival", "cpu_milli",
                               "gpu_milli", "attempts", "bound", "node", "gpu_devices", "departure", "failure"]
    parquet = pq.read_table(tmp_path / "events.parquet")
    assert parquet.num_rows == len(events) and parquet.schema.field("bound").type.id == 12  # double
    assert parquet.to_pylist() == pod_events([expected["FGD"], expected["BestFit"]]).to_arrow().to_pylist()
    steps = pq.read_table(tmp_path / "series.parquet").to_pandas()
    assert len(steps) == len(_csv(tmp_path / "series.csv")) == sum(len(r.series) for r in expected.values())
    ends = steps[steps["event"] == "end"].set_index("policy")
    for name, replay in expected.items():
        assert ends.loc[name, "gpu_allocation_ratio"] == pytest.approx(replay.final.allocation_ratio)
        assert ends.loc[name, "pods_failed"] == replay.pods_failed


def test_without_pyarrow_output_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else find_spec(name, *a))
    result = CliRunner().invoke(cli, ["replay", *TRACE, "--output", str(tmp_path / "out")])
    assert result.exit_code == 2 and result.stderr.strip() == f"error: {EXTRA_MISSING}"
    assert not (tmp_path / "out").exists()


def test_the_timeline_modes_plots_use_virtual_time_as_their_x_axis() -> None:
    curves = summarize([run_replay(ReplaySpec(*TRACE, "FGD", mode="timeline"))])
    for figure in (allocation_figure(curves), fragmentation_figure(curves)):
        ax = figure.axes[0]
        assert ax.get_xlabel().startswith("Virtual time since the trace's first arrival (")
        xs = ax.get_lines()[-1].get_xdata()
        assert list(xs) == sorted(xs) and xs[-1] > 0


def test_the_timeline_curve_ends_with_the_state_after_the_final_departures() -> None:
    replay = run_replay(ReplaySpec(*TRACE, "FGD", mode="timeline"))
    [curve] = summarize([replay])
    assert replay.end is not None and curve.end is not None
    axis = time_axis([curve])
    assert axis is not None
    line = allocation_figure([curve]).axes[0].get_lines()[-1]
    assert line.get_ydata()[-1] == pytest.approx(replay.end.allocation_ratio * 100)
    assert line.get_xdata()[-1] * axis.scale == pytest.approx(replay.end.time) and replay.end.time >= max(curve.times)


def test_the_fgd_modes_plots_keep_the_arrived_workload_axis() -> None:
    curves = summarize([run_replay(ReplaySpec(*TRACE, "FGD"))])
    assert allocation_figure(curves).axes[0].get_xlabel().startswith("Arrived GPU requests")


def test_series_table_rows_carry_their_replay() -> None:
    replay = run_replay(ReplaySpec(*TRACE, "FGD", seed=9, mode="timeline"), record=True)
    rows = list(series([replay]).rows())
    assert {(r["policy"], r["seed"], r["mode"]) for r in rows} == {("FGD", 9, "timeline")}


def test_a_recorded_timeline_plots_its_allocation_after_every_event() -> None:
    seeds = [run_replay(ReplaySpec(*TRACE, "Random", seed=s, mode="timeline"), record=True) for s in (1, 2)]
    [curve] = summarize(seeds)
    assert curve.series_times == sorted({p.time for r in seeds for p in r.series})
    last = [r.series[-1].gpu_allocation_ratio for r in seeds]
    assert curve.series_allocation[-1] == pytest.approx(sum(last) / 2)
    axis = time_axis([curve])
    assert axis is not None
    line = allocation_figure([curve]).axes[0].get_lines()[-1]
    assert list(line.get_xdata()) == pytest.approx([t / axis.scale for t in curve.series_times])
    assert line.get_drawstyle() == "steps-post"
