"""`kubesched capacity` on the command line: cluster-capacity's report, JSON, and bad input (exit 2)."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner, Result

from kubesched.cli.main import cli
from tests.helpers import node
from tests.planning.clusters import deployment, small_pod, write, write_one


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["capacity", *args])


def errors(result: Result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error: ")]


def _cluster(tmp_path: Path) -> str:
    return write(tmp_path / "cluster.yaml", node("n1", cpu="4", memory="16Gi"), node("n2", cpu="2", memory="16Gi"))


def test_report_reads_like_cluster_capacitys(tmp_path: Path) -> None:
    spec = write_one(tmp_path / "web.yaml", deployment("web", small_pod("web", labels={"app": "web"})))
    result = run(_cluster(tmp_path), spec, "--seed", "7")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "web pod requirements (Deployment default/web" in out
    assert "    - CPU: 1\n    - Memory: 1.0Gi" in out
    assert "The cluster can schedule 6 instance(s) of the pod web." in out
    assert "Termination reason: Unschedulable: 0/2 nodes are available: 2 Insufficient cpu." in out
    assert "    - Insufficient cpu (2): n1, n2" in out
    assert "Pod distribution among nodes" in out and "seed 7" in out


def test_json_output_has_counts_reasons_and_distribution(tmp_path: Path) -> None:
    spec = write_one(tmp_path / "a.yaml", small_pod("a"))
    result = run(_cluster(tmp_path), spec, "-o", "json", "--tie-break", "name")
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.output)
    assert doc["replicas"] == 6
    counted = doc["specs"][0]
    assert counted["perNode"] == {"n1": 4, "n2": 2}
    assert counted["termination"]["type"] == "Unschedulable"
    assert counted["nodeReasons"] == [{"reason": "Insufficient cpu", "nodes": ["n1", "n2"]}]


def test_max_replicas_is_reported_as_the_limit(tmp_path: Path) -> None:
    result = run(_cluster(tmp_path), write_one(tmp_path / "a.yaml", small_pod("a")), "--max-replicas", "2")
    assert result.exit_code == 0, result.output
    assert "The cluster can schedule 2 instance(s) of the pod a." in result.output
    assert "Termination reason: LimitReached: the limit of 2 replica(s) was reached" in result.output


def _one_error(result: Result) -> str:
    assert result.exit_code == 2, result.output
    found = errors(result)
    assert len(found) == 1, result.output
    assert "Traceback" not in result.output
    return found[0]


def test_a_missing_snapshot_is_one_line(tmp_path: Path) -> None:
    line = _one_error(run(str(tmp_path / "nope.yaml"), write_one(tmp_path / "a.yaml", small_pod("a"))))
    assert "nope.yaml" in line and "no such file" in line


def test_a_missing_pod_file_is_one_line(tmp_path: Path) -> None:
    line = _one_error(run(_cluster(tmp_path), str(tmp_path / "missing.yaml")))
    assert "missing.yaml" in line


def test_a_kind_without_a_pod_template_is_one_line(tmp_path: Path) -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}, "spec": {}}
    line = _one_error(run(_cluster(tmp_path), write_one(tmp_path / "svc.yaml", service)))
    assert "Service svc" in line and "has no pod template" in line


def test_a_daemonset_is_refused_with_a_reason(tmp_path: Path) -> None:
    ds = deployment("agent", small_pod("agent")) | {"kind": "DaemonSet"}
    line = _one_error(run(_cluster(tmp_path), write_one(tmp_path / "ds.yaml", ds)))
    assert "one pod per node" in line


def test_a_bad_quantity_in_a_template_names_the_field_as_written(tmp_path: Path) -> None:
    bad = deployment("web", small_pod("web", cpu="lots"))
    line = _one_error(run(_cluster(tmp_path), write_one(tmp_path / "web.yaml", bad)))
    assert "Deployment web" in line and "spec.template.spec.containers[0].resources.requests.cpu" in line


def test_a_namespace_the_snapshot_lacks_is_one_line(tmp_path: Path) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
    snapshot = write(tmp_path / "cluster.yaml", node("n1"), namespace)
    line = _one_error(run(snapshot, write_one(tmp_path / "a.yaml", small_pod("a", namespace="ml"))))
    assert "namespace 'ml' is not in the snapshot" in line


def test_a_scheduler_name_no_profile_has_is_one_line(tmp_path: Path) -> None:
    line = _one_error(run(_cluster(tmp_path), write_one(tmp_path / "a.yaml", small_pod("a", scheduler_name="other"))))
    assert "spec.schedulerName 'other'" in line


def test_a_missing_config_is_one_line(tmp_path: Path) -> None:
    line = _one_error(run(_cluster(tmp_path), write_one(tmp_path / "a.yaml", small_pod("a")),
                          "--config", str(tmp_path / "none.yaml")))
    assert "none.yaml" in line


def test_a_negative_bound_is_a_usage_error(tmp_path: Path) -> None:
    result = run(_cluster(tmp_path), write_one(tmp_path / "a.yaml", small_pod("a")), "--max-replicas", "-1")
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_no_pod_file_is_a_usage_error(tmp_path: Path) -> None:
    assert run(_cluster(tmp_path)).exit_code == 2
