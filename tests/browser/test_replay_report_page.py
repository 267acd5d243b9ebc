"""`kubesched replay --output`'s report.html in a real browser, made from the shipped trace
sample: it loads without errors and without the network, both figures are decoded and fit
the page, and the tables are there."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.browser.conftest import Page
from tests.browser.reports import ARRIVAL, NODES, PODS, POLICIES, image_report, overflows_horizontally

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replay")
    policies = [arg for policy in POLICIES for arg in ("--policy", policy)]
    result = CliRunner().invoke(cli, ["replay", str(NODES), str(PODS), *policies, "--arrival", str(ARRIVAL),
                                      "--output", str(out), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out / "report.html"


def test_the_replay_page_loads_without_errors_or_network(page: Page, report: Path):
    page.page.goto(report.as_uri())
    assert page.page.title() == "kubesched replay"
    page.screenshot("replay-report")
    assert page.errors == [] and page.requests == []


def test_both_figures_are_drawn_and_fit_the_page(page: Page, report: Path):
    page.page.goto(report.as_uri())
    images = image_report(page.page)
    assert [i["alt"] for i in images] == ["GPU allocation", "GPU fragmentation"]
    assert all(i["complete"] and float(i["natural"]) > 0 for i in images)
    width = page.page.evaluate("document.body.getBoundingClientRect().right")
    assert all(0 < float(i["shown"]) and float(i["right"]) <= width + 1 for i in images)
    assert not overflows_horizontally(page.page)


def test_the_tables_name_each_policy(page: Page, report: Path):
    page.page.goto(report.as_uri())
    captions = page.page.locator("caption").all_inner_texts()
    assert any(c.startswith("GPU allocation ratio (%) by arrived GPU requests") for c in captions)
    assert any(c.startswith("At the end of each replay") for c in captions)
    final = page.page.locator("table").nth(1).inner_text()
    assert all(policy in final for policy in POLICIES)
