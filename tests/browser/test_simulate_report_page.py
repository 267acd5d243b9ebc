"""`simulate --report`'s page in a real browser: it loads without errors and without the
network, the search finds a pod, its details open, and the list is paginated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.browser.conftest import Page
from tests.cli.dumps import node, other, pod, write_list

REPLICAS = 150  # more than a page of the list (100)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Replicas that fit, some too big for any node, one that preempts a low-priority pod,
    and a drained node whose budget is violated."""
    tmp = tmp_path_factory.mktemp("report")
    victim = pod("batch-low", cpu="3", node_name="n2", owner="batch")
    victim["spec"]["priority"] = 0
    urgent = pod("urgent", cpu="3", namespace="prod")
    urgent["spec"]["priority"] = 1000
    urgent["spec"]["nodeSelector"] = {"topology.kubernetes.io/zone": "b"}  # n2 only, where batch-low runs
    items: list[dict[str, Any]] = [node("n1", cpu="64", memory="64Gi", zone="a", pool="general"), node("n2", cpu="4", zone="b", pool="general"),
                                   node("old-1", cpu="8", zone="a", pool="old")]
    items += [pod(f"web-{i:03d}", cpu="100m", namespace="shop", owner="web", labels={"app": "web"}) for i in range(REPLICAS)]
    items += [pod(f"huge-{i}", cpu="100", namespace="ml") for i in range(3)]
    items += [victim, urgent]
    items += [pod(f"api-{i}", cpu="1", node_name="old-1", owner="api", labels={"app": "api"}) for i in range(2)]
    items.append(other("PodDisruptionBudget", "api", api_version="policy/v1",
                       spec={"minAvailable": 2, "selector": {"matchLabels": {"app": "api"}}}))
    for key in ("capacity", "allocatable"):
        items[0]["status"][key]["pods"] = "500"  # room for every replica on n1
    snap = write_list(tmp / "s.yaml", items)
    out = tmp / "report.html"
    result = CliRunner().invoke(cli, ["simulate", str(snap), "--report", str(out), "--drain", "old-1",
                                      "--tie-break", "name", "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def open_report(page: Page, report: Path, fragment: str = "") -> Any:
    page.page.goto(report.as_uri() + fragment)
    page.page.wait_for_selector("#pods tbody tr")
    return page.page


def rows(p: Any) -> list[str]:
    return [text.split("\t")[1] for text in p.locator("#pods tbody tr[data-i]").all_inner_texts()]


def test_the_page_loads_without_errors_or_network(page: Page, report: Path):
    p = open_report(page, report)
    assert p.locator("#cards").inner_text().startswith(f"{REPLICAS + 3 + 1 + 2}\npending pods")
    page.screenshot("simulate-report")
    assert page.errors == []
    assert page.requests == []


def test_the_pod_list_is_paginated(page: Page, report: Path):
    p = open_report(page, report)
    assert len(rows(p)) == 100
    p.click("#next")
    assert len(rows(p)) == REPLICAS + 6 - 100
    assert "page 2 of 2" in p.inner_text("#page")


def test_search_finds_a_pod_by_name(page: Page, report: Path):
    p = open_report(page, report)
    p.fill("#search", "web-142")
    p.wait_for_function("document.querySelectorAll('#pods tbody tr[data-i]').length === 1")
    assert rows(p) == ["web-142"]


def test_search_finds_pods_by_namespace_and_by_reason(page: Page, report: Path):
    p = open_report(page, report)
    p.fill("#search", "ml/")
    p.wait_for_function("document.querySelectorAll('#pods tbody tr[data-i]').length === 3")
    p.fill("#search", "insufficient cpu")
    p.wait_for_function("document.querySelectorAll('#pods tbody tr[data-i]').length === 3")
    assert sorted(rows(p)) == ["huge-0", "huge-1", "huge-2"]


def test_a_failed_pod_s_details_group_the_filter_verdicts_by_reason(page: Page, report: Path):
    p = open_report(page, report)
    p.fill("#search", "huge-1")
    p.wait_for_function("document.querySelectorAll('#pods tbody tr[data-i]').length === 1")
    p.click("#pods tbody tr[data-i]")
    detail = p.locator("#detail")
    detail.wait_for()
    text = detail.inner_text()
    assert "Filter verdicts, grouped by reason" in text
    assert "NodeResourcesFit\tInsufficient cpu" in text
    assert "NodeUnschedulable\tnode(s) were unschedulable" in text
    page.screenshot("simulate-report-failed-pod")
    assert page.errors == []


def test_a_scheduled_pod_s_details_compare_the_best_nodes_with_the_chosen_one(page: Page, report: Path):
    p = open_report(page, report, "#pod=shop%2Fweb-007")
    text = p.locator("#detail").inner_text()
    assert "Weighted scores: best nodes and the chosen one" in text
    assert "(chosen)" in text and "NodeResourcesBalancedAllocation" in text


def test_a_preemptor_s_details_name_its_victims(page: Page, report: Path):
    p = open_report(page, report, "#pod=prod%2Furgent")
    text = p.locator("#detail").inner_text()
    assert "would help: nominated to n2" in text
    assert "default/batch-low" in text


def test_the_what_if_section_names_the_drain_and_the_violated_budget(page: Page, report: Path):
    p = open_report(page, report)
    text = p.locator("#whatif").inner_text()
    assert "drain node old-1" in text
    assert "default/api\t0\t2\tviolated" in text


def test_a_reason_filters_the_list_to_its_pods(page: Page, report: Path):
    p = open_report(page, report)
    p.click("#reasons a")
    p.wait_for_function("document.querySelectorAll('#pods tbody tr[data-i]').length < 100")
    assert sorted(rows(p)) == ["huge-0", "huge-1", "huge-2"]
    p.click("#reason-clear")
    assert len(rows(p)) == 100


def test_the_what_if_section_says_where_the_evicted_pods_went(page: Page, report: Path):
    p = open_report(page, report)
    assert "2 fit elsewhere, 0 fit nowhere." in p.locator("#whatif").inner_text()
    p.click("#whatif summary")
    assert "default/api-0\tn1" in p.locator("#whatif details").inner_text()
    assert page.errors == []
