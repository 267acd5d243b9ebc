"""`simulate --scale-up --report`'s section in a real browser: it loads without errors or the
network, and names the pools, the chosen one with its count, and the pods no pool helps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.browser.conftest import Page
from tests.cli.dumps import node, pod, write_list


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two full node groups, three 3-cpu web replicas (three small nodes, or one big one) and
    a pod too big for any group."""
    tmp = tmp_path_factory.mktemp("scale-up")
    items: list[dict[str, Any]] = [node("small-1", cpu="4", memory="16Gi", pool="small"),
                                   node("big-1", cpu="16", memory="16Gi", pool="big")]
    items += [pod("fill-small", cpu="4", node_name="small-1"), pod("fill-big", cpu="16", node_name="big-1")]
    items += [pod(f"web-{i}", cpu="3", memory="1Gi", owner="web", labels={"app": "web"}) for i in range(3)]
    items.append(pod("huge", cpu="64", namespace="ml"))
    out = tmp / "report.html"
    result = CliRunner().invoke(cli, ["simulate", str(write_list(tmp / "s.yaml", items)), "--scale-up", "--pool-label",
                                      "eks.amazonaws.com/nodegroup", "--report", str(out), "-q"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def test_the_scale_up_section_names_the_pools_the_choice_and_the_pods_no_pool_helps(page: Page, report: Path):
    p = page.page
    p.goto(report.as_uri())
    p.wait_for_selector("#scaleup table")
    assert p.locator("#scaleup-section").is_visible()
    text = p.locator("#scaleup").inner_text()
    assert "4 pod(s) left unschedulable; pools by eks.amazonaws.com/nodegroup, expander least-waste" in text
    assert "small (chosen)" in text
    assert "Add 3 node(s) of small (chosen by least-waste): they place 3 pending pod(s)." in text
    assert "3 node(s) place 3" in text
    assert "ml/huge\t0/2 nodes are available: 2 Insufficient cpu." in text
    page.screenshot("simulate-report-scale-up")
    assert page.errors == []
    assert page.requests == []


def test_the_section_stays_hidden_without_scale_up(page: Page, tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1"), pod("web")])
    out = tmp_path / "r.html"
    assert CliRunner().invoke(cli, ["simulate", str(snap), "--report", str(out), "-q"]).exit_code == 0
    p = page.page
    p.goto(out.as_uri())
    p.wait_for_selector("#pods tbody tr")
    assert not p.locator("#scaleup-section").is_visible()
    assert page.errors == []
