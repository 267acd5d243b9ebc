"""`simulate --report`'s pod-group section in a real browser (GenericWorkload): a row per
group with its policy, placement and condition, the gang left wholly unbound called out,
the backoffQ retries said, a group's name listing its pods, and a member's details
showing its group cycle (placements, scores, the tie)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.browser.conftest import Page
from tests.cli.gangs import ALL_GATES, gang_cluster


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("gangs")
    out = tmp / "report.html"
    result = CliRunner().invoke(cli, ["simulate", str(gang_cluster(tmp / "gangs.yaml")), "--feature-gates", ALL_GATES,
                                      "--report", str(out), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def open_report(page: Page, report: Path) -> Any:
    page.page.goto(report.as_uri())
    page.page.wait_for_selector("#podgroups-table tbody tr")
    return page.page


def group_rows(p: Any) -> dict[str, list[str]]:
    rows = [text.split("\t") for text in p.locator("#podgroups-table tbody tr").all_inner_texts()]
    return {cells[0]: cells[1:] for cells in rows}


def test_the_section_renders_a_row_per_group_without_errors_or_network(page: Page, report: Path) -> None:
    p = open_report(page, report)
    page.screenshot("simulate-report-pod-groups")
    rows = group_rows(p)
    assert list(rows) == ["ml/train-xl", "ml/train", "ml/web"]  # the gang with nothing bound first
    assert rows["ml/train"][:7] == ["gang, minCount 4", "topology.kubernetes.io/rack", "4/4", "0", "2", "rack-a",
                                    "True (Scheduled)"]
    assert rows["ml/train-xl"][6] == "False (Unschedulable)"
    assert "0/2 placements are available" in rows["ml/train-xl"][8]
    assert page.errors == [] and page.requests == []


def test_the_gang_left_wholly_unbound_is_called_out(page: Page, report: Path) -> None:
    p = open_report(page, report)
    assert p.inner_text("#unbound-gangs") == ("1 gang(s) left wholly unbound (all or nothing: not one of their pods "
                                              "is bound): ml/train-xl")
    assert "unbound" in (p.get_attribute("#podgroups-table tbody tr:first-child", "class") or "")


def test_the_backoff_retries_are_said(page: Page, report: Path) -> None:
    p = open_report(page, report)
    assert "1 failed pod group(s) were retried from backoffQ while activeQ was empty" in p.inner_text("#podgroups")
    assert group_rows(p)["ml/train-xl"][7] == "2 (1 from backoffQ)"


def test_a_group_s_name_lists_its_pods(page: Page, report: Path) -> None:
    p = open_report(page, report)
    p.click("#podgroups a:text('ml/web')")
    p.wait_for_function("document.querySelectorAll('#pods tbody tr[data-i]').length === 3")
    names = [text.split("\t")[1] for text in p.locator("#pods tbody tr[data-i]").all_inner_texts()]
    assert names == ["web-0", "web-1", "web-2"]
    assert p.inner_text("#group-text") == "ml/web"
    p.click("#group-clear")
    p.wait_for_function("document.querySelectorAll('#pods tbody tr[data-i]').length === 12")


def test_a_member_s_details_show_its_group_cycle(page: Page, report: Path) -> None:
    p = open_report(page, report)
    p.locator("#pods tbody tr[data-i]", has_text="train-0").first.click()
    detail = p.inner_text("#detail")
    assert "Pod group ml/train: cycle" in detail
    assert "gang, minCount 4, within one topology.kubernetes.io/rack; 4 pod(s) tried in order:" in detail
    placements = [row.split("\t") for row in p.locator("#detail table.placements tbody tr").all_inner_texts()]
    assert [row[:4] for row in placements] == [["rack-a (chosen)", "2", "yes", "140"], ["rack-b", "2", "yes", "140"]]
    assert "rack-a, rack-b tied for the best score: the first in generation order taken" in detail
    assert "bound to placement rack-a; PodGroupScheduled True (Scheduled)" in detail
    assert page.errors == []
