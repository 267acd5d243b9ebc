"""`simulate` loads what kubectl writes: every kind, typed lists, stdin; nothing dropped silently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from dumps import node, other, pod, typed_list, write_json, write_list
from kubesched.cli.main import cli


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(cli, ["simulate", *args], input=stdin, catch_exceptions=False)


def summary(*args: str) -> dict:
    result = run(*args, "-o", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def get_all_mix() -> list[dict]:
    """What `kubectl get all,hpa,pdb,secrets,... -A -o yaml` puts beside nodes and pods."""
    return [
        other("Deployment", "web", "apps/v1", spec={"replicas": 2, "selector": {"matchLabels": {"app": "web"}}}),
        other("ReplicaSet", "web-5d4", "apps/v1", spec={"replicas": 2, "selector": {"matchLabels": {"app": "web"}}}),
        other("Service", "web", spec={"selector": {"app": "web"}, "ports": [{"port": 80}]}),
        other("HorizontalPodAutoscaler", "web", "autoscaling/v2", spec={"minReplicas": 2, "maxReplicas": 5}),
        other("Secret", "token", data={"k": "dg=="}), other("Secret", "tls", data={}),
        other("ServiceAccount", "default"), other("ConfigMap", "kube-root-ca.crt", data={"ca.crt": "x"}),
        other("LimitRange", "limits"), other("ResourceQuota", "quota"),
        other("ControllerRevision", "db-7c9", "apps/v1"), other("Lease", "kube-scheduler", "coordination.k8s.io/v1"),
        other("Endpoints", "web"), other("EndpointSlice", "web-abc", "discovery.k8s.io/v1"),
        other("Event", "web.17a"), other("Job", "etl", "batch/v1"), other("CronJob", "nightly", "batch/v1"),
        other("DaemonSet", "agent", "apps/v1"),
        other("Widget", "w1", "example.com/v1alpha1"),
    ]


def test_a_kubectl_get_all_mix_loads_and_counts_the_skipped_kinds(tmp_path: Path):
    items = [node("n1"), pod("web-1", owner="web-5d4", labels={"app": "web"}), *get_all_mix()]
    result = run(str(write_list(tmp_path / "all.yaml", items)))
    assert result.exit_code == 0, result.output
    assert ("skipped 17 object(s) of kinds the scheduler does not read: ConfigMap 1, ControllerRevision 1, CronJob 1, "
            "DaemonSet 1, Deployment 1, EndpointSlice 1, Endpoints 1, Event 1, HorizontalPodAutoscaler 1, Job 1, "
            "Lease 1, LimitRange 1, ResourceQuota 1, Secret 2, ServiceAccount 1, Widget 1") in result.output
    assert "1 pending pod(s) on 1 node(s): 1 scheduled" in result.output


def test_typed_list_items_without_a_kind_take_the_lists(tmp_path: Path):
    (tmp_path / "nodes.json").write_text(json.dumps(typed_list("Node", [node("n1"), node("n2")])))
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump(typed_list("Pod", [pod("a", node_name="n1"), pod("b")])))
    out = summary(str(tmp_path))
    assert out["nodes"]["count"] == 2 and out["pods"]["pending"] == 1 and out["pods"]["scheduled"] == 1
    assert out["snapshot"]["skippedKinds"] == {}


def test_a_typed_list_of_apps_objects_gives_its_items_its_apiversion(tmp_path: Path):
    sets = typed_list("ReplicaSet", [other("ReplicaSet", "web-5d4", "apps/v1", spec={"selector": {"matchLabels": {}}})])
    sets["apiVersion"] = "apps/v1"
    write_json(tmp_path / "rs.json", sets)
    write_list(tmp_path / "rest.yaml", [node("n1"), pod("a")])
    assert summary(str(tmp_path))["pods"]["scheduled"] == 1


def test_finished_pods_are_ignored_and_said_so(tmp_path: Path):
    items = [node("n1", cpu="1"), pod("done", cpu="1", node_name="n1", phase="Succeeded"),
             pod("crashed", cpu="1", node_name="n1", phase="Failed"), pod("new", cpu="1")]
    result = run(str(write_list(tmp_path / "s.yaml", items)))
    assert "1 scheduled" in result.output
    assert "ignored 2 finished pod(s) (phase Succeeded or Failed), as the scheduler does" in result.output


def test_pods_bound_to_absent_nodes_are_kept_and_counted_per_node(tmp_path: Path):
    items = [node("n1"), pod("a", node_name="gone-1"), pod("b", node_name="gone-1"), pod("c", node_name="gone-2"),
             pod("d", node_name="n1")]
    path = write_list(tmp_path / "s.yaml", items)
    result = run(str(path))
    assert ("3 bound pod(s) are on 2 node(s) absent from the snapshot (kept, taking room on no node here): "
            "gone-1 (2), gone-2 (1)") in result.output
    assert summary(str(path))["snapshot"]["podsOnMissingNodes"] == {"gone-1": 2, "gone-2": 1}


def test_pods_bound_to_absent_nodes_take_no_room_on_present_nodes(tmp_path: Path):
    items = [node("n1", cpu="1"), pod("elsewhere", cpu="1", node_name="gone"), pod("new", cpu="1")]
    assert summary(str(write_list(tmp_path / "s.yaml", items)))["pods"]["scheduled"] == 1


def test_a_node_without_allocatable_or_capacity_is_warned_about(tmp_path: Path):
    bare = node("bare")
    del bare["status"]["capacity"], bare["status"]["allocatable"]
    path = write_list(tmp_path / "s.yaml", [node("n1"), bare, pod("p")])
    result = run(str(path))
    assert result.exit_code == 0
    assert f"warning: {path}: Node bare status: has neither allocatable nor capacity: no pod fits it" in result.output


def test_a_pod_whose_claim_template_is_missing_waits_for_its_claim(tmp_path: Path):
    """DynamicResources is modelled: the pod is queued; without its template no claim is made
    for it, and it waits as upstream's PreEnqueue keeps it waiting."""
    claim = pod("trainer", resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}])
    path = write_list(tmp_path / "s.yaml", [node("n1"), claim, pod("plain")])
    result = run(str(path))
    assert "2 pending pod(s) on 1 node(s): 1 scheduled, 0 unschedulable, 1 gated" in result.output
    assert 'default/trainer: pod "default/trainer": ResourceClaim not created yet' in result.output
    assert summary(str(path))["snapshot"]["unmodelled"] == {}


def test_a_dash_reads_the_snapshot_from_stdin(tmp_path: Path):
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("n1"), pod("p")]})
    result = run("-", "-q", stdin=text)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("<stdin>: 1 pending pod(s) on 1 node(s): 1 scheduled")


def test_stdin_takes_yaml_too(tmp_path: Path):
    result = run("-", "-q", stdin=yaml.safe_dump_all([node("n1"), pod("p")]))
    assert result.output.startswith("<stdin>: 1 pending pod(s) on 1 node(s): 1 scheduled")


def test_python_dash_m_kubesched_reads_stdin():
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("n1"), pod("p")]})
    proc = subprocess.run([sys.executable, "-m", "kubesched", "simulate", "-", "-q"], input=text,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "1 scheduled" in proc.stdout
