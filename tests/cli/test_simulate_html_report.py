"""`simulate --report FILE.html`: one self-contained page whose data lists every pending pod,
with identical decisions stored once (the browser tests in tests/browser open it)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from click.testing import CliRunner

from dumps import node, pod, write_list
from kubesched.cli.decisions import DecisionLog
from kubesched.cli.html_report import report_data
from kubesched.cli.main import cli
from kubesched.cli.summary import summarize
from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import load_snapshot
from kubesched.framework.config import default_config
from kubesched.plugins.registry import in_tree_registry


def report(tmp_path: Path, items: list[dict], *args: str) -> tuple[str, dict]:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["simulate", str(write_list(tmp_path / "s.yaml", items)), "--report", str(out),
                                      "--tie-break", "name", "-q", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    found = re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None
    return page, json.loads(found.group(1))


def test_the_page_needs_no_network(tmp_path: Path):
    page, _ = report(tmp_path, [node("n1"), pod("a")])
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page


def test_every_pending_pod_is_listed_with_its_status_and_node(tmp_path: Path):
    _, data = report(tmp_path, [node("n1", cpu="2"), pod("fits", cpu="1"), pod("big", cpu="8", namespace="ml")])
    rows = {(p[0], p[1]): (data["statuses"][p[2]], data["nodes"][p[3]] if p[3] >= 0 else None) for p in data["pods"]}
    assert rows == {("default", "fits"): ("scheduled", "n1"), ("ml", "big"): ("unschedulable", None)}


def test_identical_decisions_are_stored_once(tmp_path: Path):
    _, data = report(tmp_path, [node("n1", cpu="2"), *[pod(f"big-{i}", cpu="8", owner="rs") for i in range(50)]])
    assert len(data["pods"]) == 50
    assert len(data["details"]) == 1 and len(data["messages"]) == 2  # "" and the one failure


def test_a_failed_pod_s_verdicts_are_grouped_with_counts_and_examples(tmp_path: Path):
    nodes = [node(f"n{i}", cpu="2") for i in range(8)]
    _, data = report(tmp_path, [*nodes, pod("big", cpu="8")])
    [row] = data["pods"]
    assert data["details"][row[6]]["f"] == [
        ["NodeResourcesFit", "UnschedulableAndUnresolvable", ["Insufficient cpu"], 8, ["n0", "n1", "n2", "n3", "n4"]]]


def test_a_scheduled_pod_s_scores_show_the_best_nodes_and_the_chosen_one(tmp_path: Path):
    nodes = [node(f"n{i}", cpu=str(2 + i)) for i in range(8)]
    _, data = report(tmp_path, [*nodes, pod("a", cpu="1")])
    [row] = data["pods"]
    detail = data["details"][row[6]]
    shown = [data["nodes"][n] for n, _, _ in detail["s"]]
    assert len(shown) == 5 and data["nodes"][detail["c"]] in shown
    totals = [total for _, total, _ in detail["s"]]
    assert totals == sorted(totals, reverse=True)
    plugins = data["scorePlugins"][detail["sp"]]
    assert all(len(by) == len(plugins) and sum(by) == total for _, total, by in detail["s"])


def test_a_report_that_cannot_be_written_fails_before_the_run(tmp_path: Path):
    result = CliRunner().invoke(cli, ["simulate", str(write_list(tmp_path / "s.yaml", [node("n1")])),
                                      "--report", str(tmp_path / "missing" / "r.html")])
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and "no such directory" in result.output


def test_allocated_devices_show_when_the_attempt_records_them(tmp_path: Path):
    """DRA records a pod's devices in its binding record (or an Attempt attribute): the page shows them."""
    devices = [{"claim": "default/a-gpu", "request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]
    log = DecisionLog()

    def observe(attempt) -> None:
        if attempt.binding is not None:
            attempt.binding["devices"] = devices
        log(attempt)

    registry = in_tree_registry()
    snap = load_snapshot(write_list(tmp_path / "s.yaml", [node("n1"), pod("a")]))
    sim = Simulation(snap, default_config(registry), registry, tie_break="name", on_attempt=observe)
    result = sim.run()
    data = report_data(summarize(sim, result, "s", "name", None), log.decisions)
    [row] = data["pods"]
    assert data["details"][row[6]]["x"]["devices"] == devices


def test_a_dra_pod_s_details_list_the_devices_it_was_allocated(tmp_path: Path):
    """End to end with DynamicResources: a conformance scenario's cluster, claims and queue."""
    case = Path(__file__).resolve().parents[1] / "conformance" / "cases-dra" / "scn-0001.json.gz"
    scenario = json.loads(gzip.decompress(case.read_bytes()))["scenario"]
    kinds = ("namespaces", "nodes", "deviceClasses", "resourceSlices", "resourceClaimTemplates", "resourceClaims",
             "pods", "queue")
    snap = tmp_path / "dra.json"
    snap.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [o for k in kinds for o in scenario[k]]}))
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["simulate", str(snap), "--report", str(out), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    found = re.search(r'<script id="data" type="application/json">(.*?)</script>', out.read_text(), re.S)
    assert found is not None
    data = json.loads(found.group(1))
    scheduled = [data["details"][p[6]] for p in data["pods"] if data["statuses"][p[2]] == "scheduled"]
    devices = [line for detail in scheduled for line in detail.get("x", {}).get("devices", [])]
    assert devices and all(": " in line and "/" in line for line in devices)
