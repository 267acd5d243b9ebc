"""`compare --report`'s page in a real browser: loads without errors, stays short however many
pods moved (they scroll in a box), and the box's filter finds a pod."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import Page

pytest.importorskip("matplotlib")

from tests.planning.test_report_figures import compare_page  # noqa: E402,F401 - the fixture

MAX_HEIGHT = 6000  # px at 1280 px wide: the page listing every moved pod ran to 32,800


def test_the_compare_page_loads_without_errors_and_stays_short(page: Page, compare_page: Path):  # noqa: F811
    page.page.goto(compare_page.as_uri())
    assert page.page.evaluate("document.body.scrollHeight") < MAX_HEIGHT
    page.screenshot("compare-report")
    assert page.errors == [] and page.requests == []


def test_the_moved_pods_filter_finds_a_pod(page: Page, compare_page: Path):  # noqa: F811
    page.page.goto(compare_page.as_uri())
    page.page.fill("#pods-filter", "app-123")
    visible = page.page.locator("#pods-table tr[data-pod]:visible")
    assert visible.count() == 1
    assert visible.first.inner_text().startswith("default/app-123")
    assert page.page.inner_text("#pods-shown") == "1"
