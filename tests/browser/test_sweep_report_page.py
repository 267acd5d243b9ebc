"""The sweep's report.html in a real browser, for a grid of replays of the shipped trace
sample and for a grid of comparisons: it loads without errors and without the network,
every figure is decoded and fits the page, and the workers line is shown.

The tasks run in this process (``run_replay``/``run_compare`` on the grid's specs, as a
worker would) and the page is written by the sweep's own ``write_html``: a Dask cluster
would only add seconds of start-up to what the page shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import Page
from tests.browser.reports import ARRIVAL, NODES, PODS, POLICIES, SHARED_PODS, image_report, overflows_horizontally

pytest.importorskip("matplotlib")

from kubesched.planning import run_compare  # noqa: E402
from kubesched.replay import run_replay  # noqa: E402
from kubesched.sweep import CompareGrid, ReplayGrid, SweepOutcome  # noqa: E402
from kubesched.sweep.html import write_html  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "sweep" / "data"
WORKERS_LINE = "Workers: 2 at the start, 2 used, 1 lost; 1 task(s) recomputed after their worker was lost."


@pytest.fixture(scope="module")
def replay_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two pod lists × two policies × two seeds at one arrival level: 8 replays."""
    grid = ReplayGrid(str(NODES), (str(PODS), str(SHARED_PODS)), policies=POLICIES, seeds=(42, 43),
                      arrivals=(ARRIVAL,))
    specs = grid.specs()
    outcome = SweepOutcome(specs, [run_replay(spec) for spec in specs], seconds=1.0, workers=2, workers_used=2,
                           workers_lost=1, recomputed=1)
    return write_html(grid, outcome, tmp_path_factory.mktemp("sweep") / "report.html")


@pytest.fixture(scope="module")
def compare_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default configuration against MostAllocated packing, two seeds."""
    grid = CompareGrid((str(DATA / "cluster.yaml"),), ("default", str(DATA / "most-allocated.yaml")), seeds=(1, 2))
    specs = grid.specs()
    outcome = SweepOutcome(specs, [run_compare(spec) for spec in specs], seconds=1.0, workers=2, workers_used=2,
                           workers_lost=1, recomputed=1)
    return write_html(grid, outcome, tmp_path_factory.mktemp("sweep") / "report.html")


def check_page(page: Page, report: Path, images: int, screenshot: str) -> None:
    page.page.goto(report.as_uri())
    assert page.page.title() == "kubesched sweep"
    page.screenshot(screenshot)
    assert page.errors == [] and page.requests == []
    shown = image_report(page.page)
    assert len(shown) == images
    assert all(i["complete"] and float(i["natural"]) > 0 for i in shown)
    width = page.page.evaluate("document.body.getBoundingClientRect().right")
    assert all(0 < float(i["shown"]) and float(i["right"]) <= width + 1 for i in shown)
    assert not overflows_horizontally(page.page)


def test_the_replay_sweep_page_loads_without_errors_and_its_figures_fit(page: Page, replay_sweep: Path):
    check_page(page, replay_sweep, 1 + 2 * 2, "sweep-replay-report")  # the bars, then two plots per pod list


def test_the_compare_sweep_page_loads_without_errors_and_its_figure_fits(page: Page, compare_sweep: Path):
    check_page(page, compare_sweep, 1, "sweep-compare-report")


def test_the_sweep_page_shows_workers_used_and_lost(page: Page, replay_sweep: Path):
    page.page.goto(replay_sweep.as_uri())
    assert page.page.locator("p.workers").inner_text() == WORKERS_LINE


def test_the_replay_sweep_table_has_a_row_per_pod_list_and_policy(page: Page, replay_sweep: Path):
    page.page.goto(replay_sweep.as_uri())
    table = page.page.locator("table", has=page.page.locator("caption", has_text="At the end of each replay"))
    assert table.locator("tr").count() == 1 + 2 * len(POLICIES)  # the header, then pod lists × policies
