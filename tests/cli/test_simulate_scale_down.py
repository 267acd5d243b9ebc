"""`simulate --scale-down`: after the run, which nodes cluster-autoscaler's scale-down would
remove and where their pods would go, as text, JSON (`scaleDown`) and a section of the
HTML report; its options need `--scale-down`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dumps import node, pod, write_list
from kubesched.cli.main import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["simulate", *args, "--tie-break", "name"], catch_exceptions=False)


@pytest.fixture()
def cluster(tmp_path: Path) -> Path:
    """n1 is nearly empty, n2 busy with room, n3 nearly empty but holding a pod without a
    controller; a pending pod lands on n2 in the run, before scale-down looks."""
    return write_list(tmp_path / "s.yaml", [
        node("n1", cpu="4"), node("n2", cpu="8"), node("n3", cpu="4"),
        pod("web-0", cpu="500m", node_name="n1", owner="web"),
        pod("batch-0", cpu="4", node_name="n2", owner="batch"),
        pod("bare", cpu="100m", node_name="n3"),
        pod("new", cpu="1", nodeSelector={"kubernetes.io/hostname": "n2"}),
    ])


def test_json_says_which_nodes_go_where_their_pods_go_and_why_the_others_stay(cluster: Path):
    result = run(str(cluster), "--scale-down", "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)["scaleDown"]
    assert [(r["node"], r["moves"]) for r in doc["removable"]] == [("n1", [{"pod": "default/web-0", "node": "n3"}])]
    kept = {k["node"]: (k["reason"], k["message"]) for k in doc["kept"]}
    assert kept == {"n2": ("NotUnderutilized", "not underutilized: 0.62 (cpu, threshold 0.5)"),
                    "n3": ("BlockedByPod", "pod default/bare has no controller")}
    assert doc["utilizationThreshold"] == 0.5 and doc["destinations"] == {"default/web-0": "n3"}


def test_the_run_s_placements_count_before_scale_down_looks(cluster: Path):
    """The pending pod went to n2 (5 of 8 cpu): without it n2 would be under 0.5 and a candidate."""
    doc = json.loads(run(str(cluster), "--scale-down", "-o", "json", "--utilization-threshold", "0.6").output)
    assert {k["node"]: k["reason"] for k in doc["scaleDown"]["kept"]}["n2"] == "NotUnderutilized"


def test_the_text_report_lists_removable_nodes_with_their_pods_and_the_kept_ones(cluster: Path):
    result = run(str(cluster), "--scale-down")
    assert result.exit_code == 0, result.output
    text = result.output[result.output.index("Scale-down"):]
    assert text.splitlines()[:6] == [
        "Scale-down (cluster-autoscaler's rules, utilization threshold 0.5): 1 of 3 node(s) removable",
        "  remove n1 (cpu 0.12): 1 pod(s) move",
        "    default/web-0 -> n3",
        "  2 node(s) kept (1 not underutilized, 1 blocked by a pod):",
        "    n2: not underutilized: 0.62 (cpu, threshold 0.5)",
        "    n3: pod default/bare has no controller",
    ]


def test_the_html_report_carries_the_scale_down_section(cluster: Path, tmp_path: Path):
    page = tmp_path / "r.html"
    assert run(str(cluster), "--scale-down", "--report", str(page), "-q").exit_code == 0
    html = page.read_text()
    assert 'id="scaledown-section"' in html
    data = json.loads(html.split('<script id="data" type="application/json">')[1].split("</script>")[0])
    assert [r["node"] for r in data["scaleDown"]["removable"]] == ["n1"]


def test_the_threshold_and_utilization_options_tune_scale_down(cluster: Path):
    doc = json.loads(run(str(cluster), "--scale-down", "-o", "json", "--utilization-threshold", "0.1",
                         "--ignore-daemonsets-utilization").output)["scaleDown"]
    assert doc["removable"] == [] and doc["ignoreDaemonSetsUtilization"] is True


@pytest.mark.parametrize("args, message", [
    (["--utilization-threshold", "0.3"], "--utilization-threshold tunes --scale-down: give --scale-down too"),
    (["--ignore-mirror-pods-utilization"], "--ignore-mirror-pods-utilization tunes --scale-down: give --scale-down too"),
])
def test_a_scale_down_option_without_scale_down_is_one_line_and_exit_2(cluster: Path, args: list[str], message: str):
    result = run(str(cluster), *args)
    assert result.exit_code == 2
    assert [line for line in result.output.splitlines() if line.startswith("error:")] == [f"error: {message}"]


def test_a_threshold_outside_zero_to_one_is_refused(cluster: Path):
    assert run(str(cluster), "--scale-down", "--utilization-threshold", "1.5").exit_code == 2


def test_without_scale_down_the_report_has_no_scale_down_part(cluster: Path):
    assert "scaleDown" not in json.loads(run(str(cluster), "-o", "json").output)
