"""`simulate|capacity|compare --kubeconfig`: the snapshot taken from an API server with the live
mode's list code (paginated, every kind the profile reads), read-only, saved with --save."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.cluster.live_snapshot import PAGE_SIZE, listed_kinds
from kubesched.framework.config import default_config
from kubesched.plugins.registry import in_tree_registry
from tests.apiserver import APIServer
from tests.cli.dumps import node, other, pod, write_list

ROOT = Path(__file__).resolve().parents[2]


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def objects(bound: int = 3) -> list[dict[str, Any]]:
    """Three nodes, ``bound`` small pods on n1, pending pods of which one fits nowhere, a budget."""
    items = [node("n1", cpu="64"), node("n2", cpu="2"), node("n3", cpu="2")]
    items += [pod(f"bound-{i}", cpu="10m", node_name="n1", owner="rs", labels={"app": "web"}) for i in range(bound)]
    items += [pod(f"web-{i}", cpu="1", labels={"app": "web"}) for i in range(3)]
    items += [pod("huge", cpu="100", namespace="shop")]
    items.append(other("PodDisruptionBudget", "web", api_version="policy/v1",
                       spec={"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}))
    return items


def serve(server: APIServer, items: list[dict[str, Any]]) -> None:
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    clean = []
    for obj in items:
        meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "uid", "managedFields")}
        clean.append({**obj, "metadata": meta})
    server.load(clean)


def placements(output: str) -> dict[str, Any]:
    doc = json.loads(output)
    return {k: doc[k] for k in ("pods", "unschedulable", "attempts")}


def test_a_snapshot_from_the_cluster_gives_the_file_s_answer(server: APIServer, kubeconfig: Path, tmp_path: Path):
    items = objects()
    serve(server, items)
    from_cluster = invoke("simulate", "--kubeconfig", str(kubeconfig), "-o", "json", "--tie-break", "name")
    from_file = invoke("simulate", str(write_list(tmp_path / "s.yaml", items)), "-o", "json", "--tie-break", "name")
    assert from_cluster.exit_code == 0, from_cluster.output
    assert placements(from_cluster.output) == placements(from_file.output)


def test_lists_are_paginated_and_complete(server: APIServer, kubeconfig: Path):
    serve(server, objects(bound=PAGE_SIZE * 2 + 7))
    result = invoke("simulate", "--kubeconfig", str(kubeconfig), "-o", "json", "--tie-break", "name", "--all-nodes")
    nodes = {n["name"]: n for n in json.loads(result.output)["nodes"]["all"]}
    assert nodes["n1"]["pods"]["requested"] >= PAGE_SIZE * 2 + 7
    pod_lists = [target for method, target in server.requests if target.startswith("/api/v1/pods")]
    assert len(pod_lists) == 3 and all(f"limit={PAGE_SIZE}" in t for t in pod_lists)
    assert sum("continue=" in t for t in pod_lists) == 2


def test_the_snapshot_only_gets_and_lists(server: APIServer, kubeconfig: Path):
    serve(server, objects())
    before = len(server.requests)
    assert invoke("simulate", "--kubeconfig", str(kubeconfig), "-q").exit_code == 0
    assert {method for method, _ in server.requests[before:]} == {"GET"}
    assert not any("watch=" in target for _, target in server.requests[before:])


def test_every_kind_the_profile_reads_is_listed(server: APIServer, kubeconfig: Path):
    serve(server, objects())
    before = len(server.requests)
    invoke("simulate", "--kubeconfig", str(kubeconfig), "-q")
    listed = {target.split("?")[0] for _, target in server.requests[before:]}
    registry = in_tree_registry()
    assert {k.path for k in listed_kinds(default_config(registry), registry)} <= listed


def test_save_keeps_the_snapshot_for_later_runs(server: APIServer, kubeconfig: Path, tmp_path: Path):
    serve(server, objects())
    saved = tmp_path / "snapshot.json"
    live = invoke("simulate", "--kubeconfig", str(kubeconfig), "--save", str(saved), "-o", "json", "--tie-break", "name")
    later = invoke("simulate", str(saved), "-o", "json", "--tie-break", "name")
    assert json.loads(saved.read_text())["kind"] == "List"
    assert placements(live.output) == placements(later.output)


def test_explain_pods_answers_why_a_pod_is_pending_in_one_command(server: APIServer, kubeconfig: Path):
    serve(server, objects())
    result = invoke("simulate", "--kubeconfig", str(kubeconfig), "--explain-pods", "shop/*", "--tie-break", "name")
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("shop/huge: pending after 1 attempt(s): "))
    assert lines[start + 1] == "  3 node(s): NodeResourcesFit: Insufficient cpu (e.g. n1, n2, n3)"
    assert lines[start + 2].startswith("  preemption would not help: ")


def test_a_drain_works_on_a_snapshot_from_the_cluster(server: APIServer, kubeconfig: Path):
    serve(server, objects())
    result = invoke("simulate", "--kubeconfig", str(kubeconfig), "--drain", "n1", "-o", "json", "--tie-break", "name")
    doc = json.loads(result.output)["whatIf"]
    assert len(doc["evicted"]) == 3
    assert doc["budgets"][0]["budget"] == "default/web"


def test_a_refused_list_is_one_line_and_exit_2(server: APIServer, kubeconfig: Path):
    serve(server, objects())
    server.faults.add(method="GET", path="^/api/v1/pods", status=403, times=None)
    result = invoke("simulate", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert line.startswith("error: cluster ") and "listing pods: 403 Forbidden" in line


def test_a_failed_snapshot_leaves_no_half_saved_file(server: APIServer, kubeconfig: Path, tmp_path: Path):
    serve(server, objects())
    server.faults.add(method="GET", path="^/api/v1/pods", status=403, times=None)
    saved = tmp_path / "snapshot.json"
    assert invoke("simulate", "--kubeconfig", str(kubeconfig), "--save", str(saved)).exit_code == 2
    assert not saved.exists()


@pytest.mark.parametrize("args, message", [
    (["SNAP", "--kubeconfig", "KC"], "give a SNAPSHOT file or --kubeconfig, not both"),
    ([], "give a SNAPSHOT file (or - for standard input), or --kubeconfig FILE to take one from a cluster"),
    (["SNAP", "--save", "out.json"], "--save keeps a snapshot taken with --kubeconfig: give --kubeconfig FILE too"),
    (["--kubeconfig", "missing-kubeconfig"], "kubeconfig missing-kubeconfig: file does not exist"),
])
def test_bad_source_options_are_one_line_and_exit_2(kubeconfig: Path, tmp_path: Path, args: list[str], message: str):
    snap = str(write_list(tmp_path / "s.yaml", objects()))
    result = invoke("simulate", *[snap if a == "SNAP" else str(kubeconfig) if a == "KC" else a for a in args])
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {message}")


def test_capacity_takes_its_snapshot_from_the_cluster(server: APIServer, kubeconfig: Path, tmp_path: Path):
    items = objects()
    serve(server, items)
    spec = tmp_path / "pod.yaml"
    spec.write_text(yaml.safe_dump(pod("more", cpu="1")))
    live = invoke("capacity", "--kubeconfig", str(kubeconfig), str(spec), "-o", "json", "--seed", "3")
    local = invoke("capacity", str(write_list(tmp_path / "s.yaml", items)), str(spec), "-o", "json", "--seed", "3")
    assert live.exit_code == 0, live.output
    assert json.loads(live.output)["replicas"] == json.loads(local.output)["replicas"]


def test_compare_takes_its_snapshot_from_the_cluster(server: APIServer, kubeconfig: Path, tmp_path: Path):
    serve(server, objects())
    saved = tmp_path / "kept.json"
    result = invoke("compare", "--kubeconfig", str(kubeconfig), "--config", "default", "--config", "default",
                    "--save", str(saved), "--json", "-", "--seed", "1")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["pending"] == 4 and saved.is_file()


def test_the_documented_cluster_role_grants_get_and_list_on_every_listed_kind():
    role = yaml.safe_load((ROOT / "deploy" / "snapshot-reader" / "clusterrole.yaml").read_text())
    granted = {(group, resource) for rule in role["rules"] for group in rule["apiGroups"] for resource in rule["resources"]}
    assert {verb for rule in role["rules"] for verb in rule["verbs"]} == {"get", "list"}
    registry = in_tree_registry()
    needed = {(k.api_version.rpartition("/")[0], k.plural) for k in listed_kinds(default_config(registry), registry)}
    assert needed <= granted


def test_the_report_page_of_a_cluster_says_what_was_listed(server: APIServer, kubeconfig: Path, tmp_path: Path):
    serve(server, objects())
    page = tmp_path / "report.html"
    assert invoke("simulate", "--kubeconfig", str(kubeconfig), "--report", str(page), "-q").exit_code == 0
    text = page.read_text()
    assert '"listed":{' in text and '"pods":7' in text and '"nodes":3' in text


def test_context_picks_the_cluster_of_that_context(server: APIServer, kubeconfig: Path, tmp_path: Path):
    serve(server, objects())
    test_cluster = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]  # with the test CA over https
    config = tmp_path / "two-contexts"
    config.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "gone",
        "clusters": [{"name": "gone", "cluster": {"server": "http://127.0.0.1:9"}},
                     {"name": "test", "cluster": test_cluster}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "u"}},
                     {"name": "test", "context": {"cluster": "test", "user": "u"}}],
    }))
    result = invoke("simulate", "--kubeconfig", str(config), "--context", "test", "-q")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("cluster test: 4 pending pod(s) on 3 node(s)")
