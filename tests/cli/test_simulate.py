"""`kubesched simulate` end to end, through the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo-cluster.yaml"
DEMO_CONFIG = ROOT / "examples" / "scheduler-config.yaml"


def node(name: str, cpu: str = "4", memory: str = "8Gi", zone: str = "z1", labels: dict | None = None,
         taints: list | None = None, unschedulable: bool = False) -> dict:
    meta_labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    meta_labels.update(labels or {})
    spec: dict = {"taints": taints} if taints else {}
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": meta_labels}, "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def pod(name: str, cpu: str = "1", memory: str = "1Gi", node_name: str = "", namespace: str = "default",
        created: str | None = None, scheduler: str | None = None, **spec_extra) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if scheduler:
        spec["schedulerName"] = scheduler
    spec.update(spec_extra)
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def write_list(path: Path, items: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def read_explain(path: Path) -> list[dict]:
    """The --explain file: one JSON object a line."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def run(*args: str):
    return CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)


# -- the shipped demo -------------------------------------------------------------


def test_demo_snapshot_schedules_and_explains_the_rest():
    result = run(str(DEMO), "--tie-break", "name")
    assert result.exit_code == 0, result.output
    assert "62 pending pod(s) on 54 node(s): 56 scheduled, 5 unschedulable, 1 gated" in result.output
    assert (
        "shop/zk-3: 0/54 nodes are available: 1 node(s) were unschedulable, 11 node(s) had untolerated taint(s), "
        "3 Insufficient cpu, 39 node(s) didn't match pod anti-affinity rules." in result.output
    )
    assert (
        "shop/nvme-db-0: 0/54 nodes are available: 1 node(s) were unschedulable, 11 node(s) had untolerated taint(s), "
        "42 node(s) didn't match Pod's node affinity/selector." in result.output
    )
    assert "batch/gated-0: waiting for scheduling gates: [example.com/quota-check]" in result.output
    assert "Pending pods left to other schedulers (1), by scheduler:\n  batch/packed-0: bin-packing-scheduler" in result.output


def test_demo_with_the_example_config_schedules_the_second_profiles_pod(tmp_path: Path):
    out = tmp_path / "placements.txt"
    result = run(str(DEMO), "--config", str(DEMO_CONFIG), "--output", str(out), "-q")
    assert result.exit_code == 0, result.output
    assert any(line.startswith("batch/packed-0 -> ") for line in out.read_text().splitlines())


def test_the_installed_command_runs_the_demo():
    proc = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "simulate", str(DEMO), "-q"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "56 scheduled" in proc.stdout


# -- outputs ----------------------------------------------------------------------


def test_output_lists_placements_in_binding_order(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1"), pod("a", created="2026-01-01T00:00:02Z"),
                                            pod("b", created="2026-01-01T00:00:01Z")])
    out = tmp_path / "out.txt"
    assert run(str(snap), "--output", str(out)).exit_code == 0
    assert out.read_text() == "default/b -> n1\ndefault/a -> n1\n"


def test_explain_records_every_attempt_in_the_conformance_shape(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1", cpu="2"), node("n2", cpu="4"), pod("big", cpu="3"), pod("huge", cpu="8")])
    explain = tmp_path / "explain.jsonl"
    result = run(str(snap), "--explain", str(explain), "--tie-break", "name")
    assert result.exit_code == 0, result.output
    attempts = read_explain(explain)
    assert [(a["pod"], a["attempt"]) for a in attempts] == [("default/big", 1), ("default/huge", 1)]
    big, huge = attempts
    assert big["feasible"] == ["n2"] and big["chosen"] == "n2" and big["best"] == ["n2"]
    assert big["filtered"] == {"n1": {"plugin": "NodeResourcesFit", "code": "UnschedulableAndUnresolvable",
                                      "reasons": ["Insufficient cpu"]}}
    assert big["scores"] == {} and big["message"] is None
    assert huge["chosen"] is None
    assert huge["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_scores_are_weighted_per_plugin_with_totals(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1"), node("n2", cpu="8", memory="16Gi"), pod("p")])
    explain = tmp_path / "explain.jsonl"
    assert run(str(snap), "--explain", str(explain), "--tie-break", "name").exit_code == 0
    record = read_explain(explain)[0]
    assert set(record["scores"]) == {"n1", "n2"}
    for scores in record["scores"].values():
        assert scores["TaintToleration"] == 300
        assert scores["total"] == sum(v for k, v in scores.items() if k != "total")
    assert record["chosen"] == "n2"


def test_name_tie_break_picks_the_smallest_name(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("node-b"), node("node-a"), node("node-c"), pod("p")])
    out = tmp_path / "out.txt"
    assert run(str(snap), "--tie-break", "name", "--output", str(out)).exit_code == 0
    assert out.read_text() == "default/p -> node-a\n"


def test_random_tie_break_is_reproducible_with_a_seed(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node(f"n{i}") for i in range(8)] + [pod(f"p{i}", cpu="100m") for i in range(20)])
    outs = []
    for _ in range(2):
        out = tmp_path / "out.txt"
        assert run(str(snap), "--tie-break", "random", "--seed", "7", "--output", str(out)).exit_code == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]


def test_the_default_tie_break_is_upstreams_heap_and_needs_no_seed(tmp_path: Path):
    # eight equal empty nodes: upstream's heap pops the 1st walked node first, then the 8th,
    # 7th, ... as the start index rotates; the run repeats without a seed
    snap = write_list(tmp_path / "s.yaml", [node(f"n{i}") for i in range(8)] + [pod(f"p{i}", cpu="100m") for i in range(3)])
    outs = []
    for _ in range(2):
        out = tmp_path / "out.txt"
        result = run(str(snap), "-q", "--output", str(out))
        assert result.exit_code == 0 and "seed" not in result.output
        outs.append(out.read_text())
    assert outs[0] == outs[1]


# -- inputs -----------------------------------------------------------------------


def test_a_directory_of_multi_document_yaml_and_json_files(tmp_path: Path):
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump_all([node("n1"), node("n2")]))
    (tmp_path / "pods.json").write_text(json.dumps({"apiVersion": "v1", "kind": "PodList", "items": [pod("p")]}))
    out = tmp_path / "out.txt"
    result = run(str(tmp_path), "--output", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("default/p -> n")


def test_bound_pods_occupy_their_nodes(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1", cpu="2"), node("n2", cpu="2"), pod("old", cpu="2", node_name="n1"), pod("new", cpu="2")])
    out = tmp_path / "out.txt"
    assert run(str(snap), "--output", str(out)).exit_code == 0
    assert out.read_text() == "default/new -> n2\n"


def test_finished_pods_do_not_occupy_nodes(tmp_path: Path):
    done = pod("done", cpu="2", node_name="n1")
    done["status"] = {"phase": "Succeeded"}
    snap = write_list(tmp_path / "s.yaml", [node("n1", cpu="2"), done, pod("new", cpu="2")])
    out = tmp_path / "out.txt"
    assert run(str(snap), "--output", str(out)).exit_code == 0
    assert out.read_text() == "default/new -> n1\n"


def test_pending_pods_are_queued_by_creation_then_priority(tmp_path: Path):
    items = [node("n1", cpu="1"), pod("early", cpu="1", created="2026-01-01T00:00:00Z"),
             pod("urgent", cpu="1", created="2026-01-01T00:00:05Z", priority=1000)]
    snap = write_list(tmp_path / "s.yaml", items)
    out = tmp_path / "out.txt"
    assert run(str(snap), "--output", str(out)).exit_code == 0
    assert out.read_text() == "default/urgent -> n1\n"


def test_priority_class_names_resolve_to_priorities(tmp_path: Path):
    items = [node("n1", cpu="1"), {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10},
             pod("first", cpu="1", created="2026-01-01T00:00:00Z"),
             pod("important", cpu="1", created="2026-01-01T00:00:09Z", priorityClassName="high")]
    out = tmp_path / "out.txt"
    assert run(str(write_list(tmp_path / "s.yaml", items)), "--output", str(out)).exit_code == 0
    assert out.read_text() == "default/important -> n1\n"


def test_a_pod_waiting_for_its_affinity_target_is_retried_once_the_target_binds(tmp_path: Path):
    follower = pod("follower", created="2026-01-01T00:00:00Z", affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "leader"}}}]}})
    leader = pod("leader", created="2026-01-01T00:00:05Z")
    leader["metadata"]["labels"] = {"app": "leader"}
    snap = write_list(tmp_path / "s.yaml", [node("n1"), node("n2"), follower, leader])
    explain, out = tmp_path / "explain.jsonl", tmp_path / "out.txt"
    result = run(str(snap), "--explain", str(explain), "--output", str(out), "--tie-break", "name")
    assert result.exit_code == 0, result.output
    attempts = [(a["pod"], a["attempt"], a["chosen"]) for a in read_explain(explain)]
    assert attempts == [("default/follower", 1, None), ("default/leader", 1, "n1"), ("default/follower", 2, "n1")]
    assert out.read_text() == "default/leader -> n1\ndefault/follower -> n1\n"
    assert result.output.startswith(f"{snap}: 2 pending pod(s) on 2 node(s): 2 scheduled")


def test_zone_spreading_and_anti_affinity_shape_the_placements(tmp_path: Path):
    spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                             "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchLabels": {"app": "web"}}}]}
    webs = []
    for i in range(6):
        p = pod(f"web-{i}", cpu="100m", created=f"2026-01-01T00:00:0{i}Z", **spread)
        p["metadata"]["labels"] = {"app": "web"}
        webs.append(p)
    nodes = [node(f"n{i}", zone=f"z{i % 3}") for i in range(6)]
    out = tmp_path / "out.txt"
    assert run(str(write_list(tmp_path / "s.yaml", nodes + webs)), "--output", str(out), "--seed", "3").exit_code == 0
    zones = [int(line.split("-> n")[1]) % 3 for line in out.read_text().splitlines()]
    assert sorted(zones) == [0, 0, 1, 1, 2, 2]


def test_pods_for_another_scheduler_are_left_alone(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1"), pod("mine"), pod("theirs", scheduler="other-scheduler")])
    result = run(str(snap))
    assert "1 pending pod(s) on 1 node(s): 1 scheduled" in result.output
    assert "Pending pods left to other schedulers (1), by scheduler:\n  default/theirs: other-scheduler" in result.output


# -- bad input ----------------------------------------------------------------------


def _errors(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error: ")]


def test_every_bad_object_is_reported_with_file_object_and_field(tmp_path: Path):
    bad_node = node("n1")
    bad_node["status"]["allocatable"]["cpu"] = "4x"
    bad_pod = pod("p1")
    bad_pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Bogus", "values": ["x"]}]}]}}}
    snap = write_list(tmp_path / "s.yaml", [bad_node, bad_pod, pod("fine")])
    result = run(str(snap))
    assert result.exit_code == 2
    errors = _errors(result)
    assert len(errors) == 2
    assert any("Node n1 status.allocatable.cpu" in e and "'4x'" in e for e in errors)
    assert any("Pod default/p1 spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
               ".nodeSelectorTerms[0].matchExpressions[0].operator" in e and "Bogus" in e for e in errors)
    assert all(str(snap) in e for e in errors)
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "content, message",
    [
        ("a: [1, 2\n", "invalid YAML at line 1, column 4: unclosed bracket"),
        ("- just\n- a list\n", "must be a Kubernetes object or List"),
        ("{\"kind\": \"Pod\", ", "invalid JSON"),
    ],
    ids=["broken-yaml", "not-an-object", "broken-json"],
)
def test_malformed_files_get_one_line_and_exit_2(tmp_path: Path, content: str, message: str):
    suffix = ".json" if "JSON" in message else ".yaml"
    path = tmp_path / f"snap{suffix}"
    path.write_text(content)
    result = run(str(path))
    assert result.exit_code == 2
    errors = _errors(result)
    assert len(errors) == 1 and message in errors[0] and str(path) in errors[0]


def test_a_missing_snapshot_is_bad_input(tmp_path: Path):
    result = run(str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2
    assert _errors(result) == [f"error: {tmp_path / 'nope.yaml'}: no such file or directory"]


def test_config_problems_are_all_reported(tmp_path: Path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 140, "bogusField": 1,
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}},
                      "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Weird"}}}]}],
    }))
    result = run(str(DEMO), "--config", str(cfg))
    assert result.exit_code == 2
    errors = _errors(result)
    assert len(errors) == 4
    assert any('bogusField: unknown field "bogusField"' in e for e in errors)
    assert any("percentageOfNodesToScore: Invalid value: 140: not in valid range [0-100]" in e for e in errors)
    assert any('profiles[0].plugins.score.enabled[0]: plugin "NoSuchPlugin" does not exist' in e for e in errors)
    assert any("profiles[0].pluginConfig[0].args.scoringStrategy.type" in e for e in errors)


def test_config_check_accepts_the_example():
    result = CliRunner().invoke(cli, ["config", "check", str(DEMO_CONFIG)])
    assert result.exit_code == 0
    assert "ok (2 profile(s))" in result.output


def test_config_show_prints_the_defaulted_configuration():
    result = CliRunner().invoke(cli, ["config", "show"])
    assert result.exit_code == 0
    shown = yaml.safe_load(result.output)
    assert shown["leaderElection"]["leaseDuration"] == "15s" and shown["clientConnection"]["qps"] == 50
    assert shown["profiles"][0]["schedulerName"] == "default-scheduler"


def test_config_show_prints_the_default_profile():
    result = CliRunner().invoke(cli, ["config", "show", "--extension-points"])
    assert result.exit_code == 0
    shown = yaml.safe_load(result.output)
    score = {p["name"]: p["weight"] for p in shown["profiles"][0]["plugins"]["score"]}
    assert score["TaintToleration"] == 3 and score["NodeAffinity"] == 2 and score["NodeResourcesFit"] == 1
