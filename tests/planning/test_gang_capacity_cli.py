"""`kubesched capacity` on a pod-group shape on the command line: the report reads like
cluster-capacity's with whole groups for replicas, JSON counts groups, and a shape that
needs the workload gates without them is one line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner, Result

from kubesched.cli.main import cli
from tests.planning.clusters import write
from tests.planning.test_gang_capacity import GATES, job, pod_group, racks


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["capacity", *args])


def _files(tmp_path: Path, min_count: int = 4) -> tuple[str, str]:
    return (write(tmp_path / "cluster.yaml", *racks(2)),
            write(tmp_path / "gang.yaml", pod_group("train", min_count, rack=True), job("train", 4, "3")))


def test_the_report_says_how_many_groups_fit_and_why_not_one_more(tmp_path: Path) -> None:
    result = run(*_files(tmp_path), "--feature-gates", GATES[0], "--tie-break", "name")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "train pod group (PodGroup default/train, " in out
    assert "    - policy: gang, minCount 4\n    - topology: each group within one topology.kubernetes.io/rack\n" in out
    assert "    - pods per group: 4\n        - 4 x Job default/train: CPU 3, Memory 1.0Gi\n" in out
    assert "The cluster can schedule 2 more group(s) of the pod group train (4 pod(s) each, all or nothing)." in out
    assert ("Termination reason: Unschedulable: 0/2 placements are available, first placement status: "
            "pod group is unschedulable") in out
    assert "Placements the next group was tried in (2 of 2 infeasible):" in out
    assert "    - rack-0 (2 node(s)): infeasible: 0/4 pod(s) fit; the first that did not: default/train-2-" in out
    assert "Groups per topology.kubernetes.io/rack: rack-0 1, rack-1 1" in out
    assert "Pod distribution among nodes" in out


def test_json_counts_groups_with_their_placements(tmp_path: Path) -> None:
    result = run(*_files(tmp_path), "--feature-gates", GATES[0], "-o", "json", "--tie-break", "name")
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.output)
    assert doc["groups"] == 2 and doc["replicas"] == 0
    [gang] = doc["gangs"]
    assert (gang["policy"], gang["minCount"], gang["podsPerGroup"]) == ("gang", 4, 4)
    assert gang["perDomain"] == {"rack-0": 1, "rack-1": 1}
    assert gang["perNode"] == {"r0-n0": 2, "r0-n1": 2, "r1-n0": 2, "r1-n1": 2}
    assert [p["name"] for p in gang["placements"]] == ["rack-0", "rack-1"]


def test_a_gate_left_off_is_noted(tmp_path: Path) -> None:
    result = run(*_files(tmp_path), "--feature-gates", "GenericWorkload=true,GangScheduling=true", "--tie-break", "name")
    assert result.exit_code == 0, result.output
    assert ("note: TopologyAwareWorkloadScheduling is off: the topology constraint is not applied, as upstream"
            in result.output)


def test_a_pod_group_without_the_workload_gates_is_one_line(tmp_path: Path) -> None:
    result = run(*_files(tmp_path))
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert line.endswith("gang.yaml: PodGroup default/train: counting pod groups needs the workload gates, off by "
                         "default as upstream: --feature-gates GenericWorkload=true,GangScheduling=true "
                         "(and TopologyAwareWorkloadScheduling=true for a topology constraint)")


def test_a_gate_kube_scheduler_refuses_is_one_line(tmp_path: Path) -> None:
    result = run(*_files(tmp_path), "--feature-gates", "GangScheduling=true")
    assert result.exit_code == 2
    assert len([line for line in result.output.splitlines() if line.startswith("error: ")]) == 1
    assert "GenericWorkload" in result.output
