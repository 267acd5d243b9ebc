"""`simulate --scale-up`: the report in text, JSON and the HTML page, and bad input as one
line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.cli.dumps import node, pod, write_list

GROUP = "eks.amazonaws.com/nodegroup"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def snap(tmp_path: Path) -> Path:
    """Two node groups whose nodes are full; three web replicas of 3 cpu (each needs its own
    4-cpu node, or the three share one 16-cpu node) and one pod too big for any group."""
    items = [node("small-1", cpu="4", memory="16Gi", pool="small"), node("big-1", cpu="16", memory="16Gi", pool="big")]
    items[1]["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "m5.4xlarge"
    items += [pod("fill-small", cpu="4", node_name="small-1"), pod("fill-big", cpu="16", node_name="big-1")]
    items += [pod(f"web-{i}", cpu="3", memory="1Gi", owner="web", labels={"app": "web"}) for i in range(3)]
    items.append(pod("huge", cpu="64", namespace="ml"))
    return write_list(tmp_path / "s.yaml", items)


def test_the_text_report_names_the_pool_the_count_and_the_pods(snap: Path):
    result = invoke("simulate", str(snap), "--scale-up", "--pool-label", GROUP)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Scale-up: 4 pod(s) left unschedulable; pools by eks.amazonaws.com/nodegroup, expander least-waste" in out
    assert "Chosen: small (chosen by least-waste): add 3 node(s), which place 3 pending pod(s)" in out
    assert "cluster-autoscaler's estimate: 3 node(s) for 3 pod(s); simulated (new nodes -> pods placed): 2 -> 2, 3 -> 3" in out
    assert "ml/huge: 0/2 nodes are available: 2 Insufficient cpu." in out


def test_the_json_document_has_a_scale_up_part(snap: Path):
    result = invoke("simulate", str(snap), "--scale-up", "--pool-label", GROUP, "--expander", "least-nodes", "-o", "json")
    assert result.exit_code == 0, result.output
    scale = json.loads(result.output)["scaleUp"]
    assert scale["answer"]["pool"] == "big"
    assert scale["answer"]["nodes"] == 1
    assert scale["answer"]["pods"] == ["default/web-0", "default/web-1", "default/web-2"]
    assert scale["answer"]["newNodes"] == ["template-node-for-big-0"]
    assert scale["choice"] == {"pool": "big", "decidedBy": "least-nodes",
                               "kept": [{"expander": "least-nodes", "pools": ["big"]}]}
    assert [p["pool"] for p in scale["pools"]] == ["big", "small"]
    assert scale["noPool"] == [{"pod": "ml/huge", "message": "0/2 nodes are available: 2 Insufficient cpu."}]


def test_the_default_pool_label_is_the_instance_type(snap: Path):
    result = invoke("simulate", str(snap), "--scale-up", "-o", "json")
    scale = json.loads(result.output)["scaleUp"]
    assert scale["poolLabel"] == "node.kubernetes.io/instance-type"
    assert [p["pool"] for p in scale["pools"]] == ["m5.4xlarge", "m5.xlarge"]


def test_quiet_prints_no_scale_up_part(snap: Path):
    result = invoke("simulate", str(snap), "--scale-up", "-q")
    assert result.exit_code == 0
    assert "Scale-up" not in result.output


def test_the_html_page_carries_the_scale_up(snap: Path, tmp_path: Path):
    page = tmp_path / "r.html"
    result = invoke("simulate", str(snap), "--scale-up", "--pool-label", GROUP, "--report", str(page), "-q")
    assert result.exit_code == 0, result.output
    text = page.read_text()
    data = json.loads(text.split('<script id="data" type="application/json">')[1].split("</script>")[0])
    assert data["scaleUp"]["answer"]["pool"] == "small"
    assert 'id="scaleup-section"' in text


def test_a_pools_file_caps_a_pool(snap: Path, tmp_path: Path):
    pools = tmp_path / "pools.yaml"
    pools.write_text("small: {maxNodes: 1}\n")
    result = invoke("simulate", str(snap), "--scale-up", "--pool-label", GROUP, "--pools", str(pools), "-o", "json")
    scale = json.loads(result.output)["scaleUp"]
    by_pool = {p["pool"]: p for p in scale["pools"]}
    assert by_pool["small"]["maxNewNodes"] == 1
    assert by_pool["small"]["estimate"] == {"nodes": 1, "pods": ["default/web-0"], "capped": True}


def test_priorities_choose_the_pool(snap: Path, tmp_path: Path):
    priorities = tmp_path / "p.yaml"
    priorities.write_text("kind: ConfigMap\ndata:\n  priorities: |\n    1: [small]\n    9: [big]\n")
    result = invoke("simulate", str(snap), "--scale-up", "--pool-label", GROUP, "--expander", "priority",
                    "--expander-priorities", str(priorities), "-o", "json")
    assert json.loads(result.output)["scaleUp"]["answer"]["pool"] == "big"


@pytest.mark.parametrize(("args", "line"), [
    (["--expander", "cheapest"], "error: --expander cheapest: unknown expander 'cheapest' (known: least-waste, "
                                 "most-pods, least-nodes, priority, price, random)"),
    (["--pool-label", "example.com/pool"], "error: --pool-label example.com/pool: no node has this label "
                                           "(pool labels found: eks.amazonaws.com/nodegroup, node.kubernetes.io/instance-type)"),
    (["--expander", "priority"], "error: --expander priority needs --expander-priorities FILE (its ConfigMap, or the "
                                 "priorities in it)"),
    (["--expander", "price"], "error: --expander price needs prices: --price-label KEY, or price in the --pools file"),
    (["--price-label", "kubernetes.io/hostname", "--expander", "price"],
     "error: --price-label kubernetes.io/hostname: node big-1 has kubernetes.io/hostname=big-1, not a price (a number, "
     "0 or more)"),
])
def test_bad_scale_up_input_is_one_line_and_exit_2(snap: Path, args: list[str], line: str):
    result = invoke("simulate", str(snap), "--scale-up", *args)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [line]


def test_a_bad_priority_file_is_one_line_and_exit_2(snap: Path, tmp_path: Path):
    priorities = tmp_path / "p.yaml"
    priorities.write_text("10:\n  - '(unclosed'\n")
    result = invoke("simulate", str(snap), "--scale-up", "--expander", "priority", "--expander-priorities", str(priorities))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {priorities}: priority 10: regular expression '(unclosed': missing ), unterminated subpattern at position 0"]


def test_a_pools_file_naming_no_pool_is_one_line_and_exit_2(snap: Path, tmp_path: Path):
    pools = tmp_path / "pools.yaml"
    pools.write_text("smal: {maxNodes: 1}\n")
    result = invoke("simulate", str(snap), "--scale-up", "--pool-label", GROUP, "--pools", str(pools))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: {pools}: pool smal: no node has {GROUP}=smal"]


def test_a_scale_up_option_without_scale_up_is_one_line_and_exit_2(snap: Path):
    result = invoke("simulate", str(snap), "--expander", "most-pods")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == ["error: --expander is an option of --scale-up: give --scale-up too"]


def test_check_all_pools_checks_every_pools_estimate(snap: Path):
    result = invoke("simulate", str(snap), "--scale-up", "--pool-label", GROUP, "--check-all-pools", "-o", "json")
    pools = {p["pool"]: p for p in json.loads(result.output)["scaleUp"]["pools"]}
    assert pools["big"]["checked"] == {"nodes": 1, "pods": ["default/web-0", "default/web-1", "default/web-2"]}
    assert pools["small"]["checked"]["nodes"] == 3
