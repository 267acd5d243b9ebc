"""The Python API of ``simulate``: load a snapshot, edit it, run it, read its answers as tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.research import PlanningError, Snapshot, WhatIfError, simulate

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo-cluster.yaml"


@pytest.fixture(scope="module")
def snapshot() -> Snapshot:
    return Snapshot.load(DEMO)


def test_a_run_places_pods_as_the_command_does_for_the_same_seed(tmp_path: Path) -> None:
    run = simulate(DEMO, seed=7)
    out = tmp_path / "placements.txt"
    result = CliRunner().invoke(cli, ["simulate", str(DEMO), "--seed", "7", "--output", str(out), "-q"])
    assert result.exit_code == 0, result.output
    command = [tuple(line.split(" -> ")) for line in out.read_text().splitlines()]
    assert [(row["pod"], row["node"]) for row in run.placements.rows()] == command


def test_an_edited_snapshot_and_its_file_give_the_same_run(snapshot: Snapshot) -> None:
    assert simulate(snapshot, seed=3).result.placements == simulate(DEMO, seed=3).result.placements


def test_the_pods_table_has_every_pending_pod_with_its_node_or_reason(snapshot: Snapshot) -> None:
    run = simulate(snapshot, tie_break="name")
    frame = run.pods.to_pandas()
    assert len(frame) == run.summary["pending"]
    counts = frame["status"].value_counts().to_dict()
    assert counts["scheduled"] == run.summary["scheduled"] and counts["unschedulable"] == run.summary["unschedulable"]
    failed = frame[frame["status"] == "unschedulable"]
    assert failed["node"].isna().all() and failed["reason"].str.contains("nodes are available").all()


def test_the_attempts_table_has_one_row_per_attempt(snapshot: Snapshot) -> None:
    run = simulate(snapshot, tie_break="name")
    attempts = run.attempts.to_arrow()
    assert attempts.num_rows == run.summary["attempts"]
    nodes = attempts.column("node").to_pylist()
    reasons = attempts.column("reason").to_pylist()
    assert all((node is None) != (reason == "") for node, reason in zip(nodes, reasons))


def test_the_nodes_table_sums_to_the_placements(snapshot: Snapshot) -> None:
    run = simulate(snapshot, tie_break="name")
    nodes = run.nodes.to_pandas()
    assert len(nodes) == len(snapshot.nodes) and int(nodes["new_pods"].sum()) == len(run.result.placements)
    assert ((nodes["cpu_share"] >= 0) & (nodes["cpu_share"] <= 1)).all()


def test_cordoning_a_node_keeps_new_pods_off_it(snapshot: Snapshot) -> None:
    baseline = simulate(snapshot, tie_break="name")
    busiest = baseline.nodes.to_pandas().sort_values("new_pods").iloc[-1]["node"]
    edited = snapshot.copy()
    edited.cordon(busiest)
    nodes = simulate(edited, tie_break="name").nodes.to_pandas().set_index("node")
    assert nodes.loc[busiest, "new_pods"] == 0
    assert snapshot.find("Node", busiest).get("spec", {}).get("unschedulable") is not True  # the copy was edited


def test_draining_a_node_makes_its_pods_pending_again(snapshot: Snapshot) -> None:
    edited = snapshot.copy()
    node = edited.nodes[0]["metadata"]["name"]
    for obj in edited.objects:  # the demo's pods declare no controller: give the ones on that node one
        if obj.get("kind") == "Pod" and obj.get("spec", {}).get("nodeName") == node:
            obj["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True,
                                                   "name": obj["metadata"]["name"], "uid": "u"}]
    record = edited.drain(node)
    assert record.drained_nodes == [node] and record.evicted
    pods = simulate(edited, tie_break="name").pods.to_pandas().set_index("pod")
    assert {e.pod for e in record.evicted} <= set(pods.index)
    placed = {pods.loc[e.pod, "node"] for e in record.evicted if pods.loc[e.pod, "status"] == "scheduled"}
    assert placed and node not in placed  # cordoned, and the agents that tolerate anything kept off by node affinity


def test_draining_a_node_refuses_pods_without_a_controller_unless_forced(snapshot: Snapshot) -> None:
    node = snapshot.nodes[0]["metadata"]["name"]
    refused = snapshot.copy().drain(node)
    assert not refused.evicted
    assert list(refused.refused) == ["Pods that declare no controller (use --force to override)"]
    forced = snapshot.copy().drain(node, force=True)
    assert not forced.evicted and not forced.refused
    assert sorted(sum(forced.deleted.values(), [])) == sorted(sum(refused.refused.values(), []) + sum(
        refused.deleted.values(), []))


def test_adding_and_removing_objects(snapshot: Snapshot) -> None:
    edited = snapshot.copy()
    node = edited.nodes[0]
    name = node["metadata"]["name"]
    assert edited.remove("Node", name) == 1 and edited.find("Node", name) is None
    clone = {**node, "metadata": {**node["metadata"], "name": "extra-node"}}
    assert edited.add(clone) == 1
    assert "extra-node" in set(simulate(edited, tie_break="name").nodes.to_pandas()["node"])


def test_bad_input_names_every_problem() -> None:
    with pytest.raises(PlanningError) as caught:
        simulate(DEMO, config=str(ROOT / "no-such-config.yaml"))
    assert "no-such-config.yaml" in caught.value.lines[0]
    broken = Snapshot([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                        "status": {"allocatable": {"cpu": "lots"}}}], ["broken.yaml"])
    with pytest.raises(PlanningError) as caught:
        simulate(broken)
    assert "broken.yaml" in caught.value.lines[0] and "cpu" in caught.value.lines[0]
    with pytest.raises(WhatIfError):
        Snapshot.load(DEMO).drain("no-such-node")
