"""The compare, replay and sweep reports' figures and pages as a reader sees them: legends
outside the plots (never over a curve or a bar), shares on a 0-100 % axis, the definitions
as prose, the moved pods in a bounded, filterable box."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from kubesched.cli.main import cli  # noqa: E402
from kubesched.planning import CompareSpec, run_compare  # noqa: E402
from kubesched.planning.html_report import _distribution, _outcomes, _sorted_utilisation  # noqa: E402
from kubesched.replay.report.plots import allocation_figure, fragmentation_figure  # noqa: E402
from kubesched.replay.report.summary import PolicyCurve  # noqa: E402
from kubesched.sweep.html import _compare_bars, _replay_bars  # noqa: E402
from kubesched.sweep.summary import CompareRow, ReplayRow, Stat  # noqa: E402
from tests.cli.dumps import node, pod, write_list  # noqa: E402

MOST_ALLOCATED = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""


def legends_clear_of_the_plots(figure: Figure) -> bool:
    """Whether, once drawn, no legend's box meets any axes' plotting area (in pixels)."""
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    boxes = [legend.get_window_extent(renderer) for legend in figure.legends]
    boxes += [ax.get_legend().get_window_extent(renderer) for ax in figure.axes if ax.get_legend() is not None]
    return bool(boxes) and not any(box.overlaps(ax.bbox) for box in boxes for ax in figure.axes)


def curve(label: str) -> PolicyCurve:
    levels = [0.1 * i for i in range(1, 11)]
    return PolicyCurve(label, label, "trace", "fgd", 1.0, "name", [42], levels, levels, [0.0] * 10, [1.0] * 10,
                       [5.0] * 10, [0.5] * 10, [0.0] * 10, 0.1)


def row(policy: str, trace: str) -> ReplayRow:
    s = Stat(0.9, 0.01)
    return ReplayRow(trace, trace, "fgd", 1.0, policy, [42], s, s, s, s, s, s, s)


@pytest.mark.parametrize("draw", [allocation_figure, fragmentation_figure])
def test_replay_legends_sit_outside_the_plots(draw):
    figure = draw([curve("FGD"), curve("BestFit"), curve("Random")])
    assert all(ax.get_legend() is None for ax in figure.axes)
    assert [t.get_text() for t in figure.legends[0].get_texts()][-3:] == ["FGD", "BestFit", "Random"]
    assert legends_clear_of_the_plots(figure)


def test_sweep_bars_have_one_legend_outside_the_plot():
    figure = _replay_bars([row(p, t) for t in ("a.csv", "b.csv") for p in ("FGD", "BestFit", "Random")])
    assert all(ax.get_legend() is None for ax in figure.axes)
    assert len(figure.legends) == 1
    assert legends_clear_of_the_plots(figure)


def test_sweep_compare_bars_keep_their_legend_clear_of_the_three_panels():
    s = Stat(10.0, 1.0)
    rows = [CompareRow(snap, snap, config, config == "default", [1, 2], 20, s, s, s, None, None, None, Stat(0.5, 0.01),
                       s, s, s, s) for snap in ("a.yaml", "b.yaml") for config in ("default", "packing", "spread")]
    figure = _compare_bars(rows)
    assert len(figure.axes) == 3 and len(figure.legends) == 1
    assert legends_clear_of_the_plots(figure)


@pytest.fixture(scope="module")
def compare_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two configurations that place 300 pods differently; every node has GPUs no pod asks for."""
    tmp = tmp_path_factory.mktemp("compare")
    nodes = [node(f"n{i:02d}", cpu="16", memory="64Gi") for i in range(20)]
    for n in nodes:
        for key in ("capacity", "allocatable"):
            n["status"][key]["nvidia.com/gpu"] = "8"
    snap = write_list(tmp / "s.yaml", nodes + [pod(f"app-{i:03d}", cpu="250m", owner="rs") for i in range(300)])
    most = tmp / "most.yaml"
    most.write_text(MOST_ALLOCATED)
    out = tmp / "compare.html"
    result = CliRunner().invoke(cli, ["compare", str(snap), "--config", "default", "--config", str(most), "--report", str(out),
                                      "--seed", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def test_the_definitions_are_prose_not_a_docstring(compare_page: Path):
    text = compare_page.read_text()
    assert "<pre>" not in text
    assert "<em>fits the shape</em>" in text and "*fits the shape*" not in text


def test_the_moved_pods_are_listed_in_a_bounded_filterable_box(compare_page: Path):
    text = compare_page.read_text()
    assert '<div class="scroll"><table id="pods-table">' in text
    assert 'id="pods-filter"' in text


def test_utilisation_box_plots_use_the_full_share_scale_even_when_every_node_is_equal(tmp_path: Path):
    nodes = [node(f"n{i}", cpu="4") for i in range(3)]
    for n in nodes:
        for key in ("capacity", "allocatable"):
            n["status"][key]["nvidia.com/gpu"] = "8"  # no pod asks for one: 0 % on every node
    snap = write_list(tmp_path / "s.yaml", [*nodes, pod("a", cpu="1")])
    result = run_compare(CompareSpec(str(snap), ("default", "default"), seed=1))
    figure = _distribution(result)
    assert {ax.get_ylim() for ax in figure.axes} == {(0.0, 105.0)}


def test_compare_figures_keep_their_legends_outside_the_plots(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1"), node("n2"), pod("a", cpu="1")])
    result = run_compare(CompareSpec(str(snap), ("default", "default"), seed=1))
    for figure in (_sorted_utilisation(result), _outcomes(result)):
        assert all(ax.get_legend() is None for ax in figure.axes)
        assert len(figure.legends) == 1
        assert legends_clear_of_the_plots(figure)
