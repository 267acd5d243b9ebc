"""`simulate --explain` and `--explain-pods` on pod-group cycles: the JSON record says the
group's shape, its pods in the order tried, each placement with its nodes, its total and
per-plugin scores or why the group did not fit it, the placement chosen and how a tie was
broken; the terminal says the cycle once, before the pods it tried."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.explain_group_text import group_cycle_lines
from kubesched.cli.main import cli
from tests.cli.dumps import write_list
from tests.cli.gangs import ALL_GATES, gang_cluster, member, pod_group, racks


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture()
def cluster(tmp_path: Path) -> Path:
    return gang_cluster(tmp_path / "gangs.yaml")


def _cycles(cluster: Path, tmp_path: Path, *args: str) -> dict[str, list[dict[str, Any]]]:
    """Each group's cycles, as the explain records of their pods carry them (one per cycle)."""
    explain = tmp_path / "e.jsonl"
    _run(str(cluster), "--feature-gates", ALL_GATES, "--explain", str(explain), *args)
    cycles: dict[str, dict[int, dict[str, Any]]] = {}
    for line in explain.read_text().splitlines():
        group = json.loads(line).get("podGroup")
        if group is not None:
            cycles.setdefault(group["group"], {})[group["cycle"]] = group
    return {name: [by_cycle[c] for c in sorted(by_cycle)] for name, by_cycle in cycles.items()}


def test_the_record_says_the_group_s_shape(cluster: Path, tmp_path: Path) -> None:
    [train] = _cycles(cluster, tmp_path)["ml/train"]
    assert (train["policy"], train["minCount"], train["topologyKeys"]) == ("gang", 4, ["topology.kubernetes.io/rack"])
    [web] = _cycles(cluster, tmp_path)["ml/web"]
    assert web["policy"] == "basic" and "minCount" not in web and "topologyKeys" not in web


def test_scored_placements_carry_each_plugin_s_weighted_score_and_their_total(cluster: Path, tmp_path: Path) -> None:
    [train] = _cycles(cluster, tmp_path)["ml/train"]
    for placement in train["placements"]:
        assert set(placement["scores"]) == {"NodeResourcesFit", "PodGroupPodsCount"}
        assert sum(placement["scores"].values()) == placement["score"]


def test_equal_placements_name_the_tie_and_the_first_is_taken(cluster: Path, tmp_path: Path) -> None:
    [train] = _cycles(cluster, tmp_path)["ml/train"]
    assert train["tiedPlacements"] == ["rack-a", "rack-b"] and train["tieBreak"] == "first"
    assert train["placement"] == "rack-a"


def test_a_random_tie_break_is_said(cluster: Path, tmp_path: Path) -> None:
    [train] = _cycles(cluster, tmp_path, "--tie-break", "random", "--seed", "3")["ml/train"]
    assert train["tieBreak"] == "random" and train["placement"] in train["tiedPlacements"]


def test_an_infeasible_placement_says_how_many_pods_fit_and_the_first_that_did_not(cluster: Path, tmp_path: Path) -> None:
    first = _cycles(cluster, tmp_path)["ml/train-xl"][0]
    reasons = {p["name"]: p["reason"] for p in first["placements"]}
    assert not any(p["feasible"] for p in first["placements"])
    # rack-a holds ml/train (6 of 8 CPUs on each node): none of the 5-CPU pods fits there.
    assert reasons["rack-a"].startswith("0/5 pod(s) fit; the first that did not: ml/train-xl-")
    # rack-b's two nodes hold one each; the third finds no room.
    assert reasons["rack-b"].startswith("2/5 pod(s) fit; the first that did not: ml/train-xl-")
    assert "0/2 nodes are available: 2 Insufficient cpu." in reasons["rack-b"]
    assert first["status"].startswith("0/2 placements are available")


def test_the_terminal_says_a_group_cycle_once_before_its_pods_in_the_order_tried(cluster: Path) -> None:
    lines = _run(str(cluster), "--feature-gates", ALL_GATES, "--explain-pods", "ml/train-?", "-q").splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("pod group ")]
    assert len(heads) == 1
    head = lines[heads[0]]
    assert head.startswith("pod group ml/train (gang, minCount 4, within one topology.kubernetes.io/rack): cycle ")
    order = head.split("tried in order: ")[1].split(", ")
    assert sorted(order) == [f"ml/train-{i}" for i in range(4)]
    pods = [line.split(":")[0] for line in lines[heads[0] + 1:] if line.startswith("ml/")]
    assert pods == order


def test_the_terminal_shows_the_placements_the_tie_and_the_result(cluster: Path) -> None:
    text = _run(str(cluster), "--feature-gates", ALL_GATES, "--explain-pods", "ml/train-0", "-q")
    assert "  placement rack-a (2 nodes): feasible, score 140 = NodeResourcesFit 40 + PodGroupPodsCount 100  <- chosen" in text
    assert "  placement rack-b (2 nodes): feasible, score 140 = NodeResourcesFit 40 + PodGroupPodsCount 100\n" in text
    assert "  rack-a, rack-b tied at score 140: the first in generation order taken" in text
    assert "  result: bound to placement rack-a; PodGroupScheduled True (Scheduled)" in text


def test_the_terminal_says_why_a_gang_failed_in_each_placement(cluster: Path) -> None:
    text = _run(str(cluster), "--feature-gates", ALL_GATES, "--explain-pods", "ml/train-xl-0", "-q")
    assert "  placement rack-a (2 nodes): infeasible: 0/5 pod(s) fit; the first that did not: ml/train-xl-" in text
    assert ("  result: not scheduled: 0/2 placements are available, first placement status: pod group is "
            "unschedulable; PodGroupScheduled False (Unschedulable)") in text
    # the members' own lines say preemption's refusal rather than "not tried"
    assert "preemption would not help: not eligible due to placement-based pod group scheduling limitation" in text


def test_many_infeasible_placements_are_summed_up_by_reason() -> None:
    placements = [{"name": f"rack-{i:02d}", "nodes": 4, "feasible": False, "reason": "0/8 pod(s) fit"} for i in range(40)]
    placements[7] = {"name": "rack-07", "nodes": 4, "feasible": True}
    lines = group_cycle_lines({"group": "ml/g", "cycle": 3, "order": ["ml/a"], "placements": placements,
                               "placement": "rack-07", "condition": {"status": "True", "reason": "Scheduled"}})
    assert lines[1:] == ["  placement rack-07 (4 nodes): feasible  <- chosen",
                         "  39 placement(s) infeasible (rack-00, rack-01, rack-02 and 36 more): 0/8 pod(s) fit",
                         "  rack-07 is the only feasible placement: not scored",
                         "  result: bound to placement rack-07; PodGroupScheduled True (Scheduled)"]


def test_a_group_with_no_topology_constraint_lists_no_placement() -> None:
    lines = group_cycle_lines({"group": "ml/web", "cycle": 2, "order": ["ml/w0", "ml/w1"], "policy": "basic",
                               "placements": [{"name": "", "nodes": 4, "feasible": True}], "placement": "",
                               "condition": {"status": "True", "reason": "Scheduled", "message": ""}})
    assert lines == ["pod group ml/web (basic): cycle 2, 2 pod(s) tried in order: ml/w0, ml/w1",
                     "  result: scheduled; PodGroupScheduled True (Scheduled)"]


def test_a_gang_with_no_placements_says_how_many_pods_fit_and_the_first_that_did_not(tmp_path: Path) -> None:
    snapshot = write_list(tmp_path / "s.yaml", [*racks(), pod_group("big", 5),
                                                 *[member(f"big-{i}", "big", "6") for i in range(5)]])
    explain = tmp_path / "e.jsonl"
    _run(str(snapshot), "--feature-gates", "GenericWorkload=true,GangScheduling=true", "--explain", str(explain))
    [record] = {json.dumps(json.loads(line)["podGroup"]): json.loads(line)["podGroup"]
                for line in explain.read_text().splitlines()}.values()
    assert "placements" not in record and record["status"] == "pod group is unschedulable"
    # four 8-CPU nodes hold one 6-CPU pod each: the fifth fits nowhere
    assert record["reason"].startswith("4/5 pod(s) fit; the first that did not: ml/big-")
    assert "0/4 nodes are available: 4 Insufficient cpu." in record["reason"]
    text = _run(str(snapshot), "--feature-gates", "GenericWorkload=true,GangScheduling=true", "--explain-pods", "ml/big-0")
    assert f"  result: not scheduled: pod group is unschedulable ({record['reason']}); PodGroupScheduled False" in text
