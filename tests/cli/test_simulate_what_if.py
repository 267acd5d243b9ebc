"""`simulate --drain/--drain-selector/--add/--remove`: what-if edits applied before scheduling
and named in the report; a drain says which evicted pods fit elsewhere, which do not and why,
and which PodDisruptionBudgets it would violate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dumps import node, other, pod, write_list
from kubesched.cli.main import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)


def what_if(*args: str) -> dict:
    result = run(*args, "-o", "json", "--tie-break", "name")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def daemonset_pod(name: str, node_name: str) -> dict:
    p = pod(name, cpu="100m", node_name=node_name)
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u-ds",
                                         "controller": True}]
    return p


def mirror_pod(name: str, node_name: str) -> dict:
    p = pod(name, cpu="100m", node_name=node_name, namespace="kube-system")
    p["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    return p


def pdb(name: str, app: str, **spec: object) -> dict:
    return other("PodDisruptionBudget", name, api_version="policy/v1",
                 spec={"selector": {"matchLabels": {"app": app}}, **spec})


@pytest.fixture()
def cluster(tmp_path: Path) -> Path:
    """n1 runs three web replicas (a budget keeps two), a DaemonSet pod, a mirror pod, a
    batch pod too big for the other nodes and a bare pod (no controller); n2 and n3 have
    room for the replicas only."""
    return write_list(tmp_path / "s.yaml", [
        node("n1", cpu="4", labels={"pool": "old"}), node("n2", cpu="2"), node("n3", cpu="1", labels={"pool": "old"}),
        *[pod(f"web-{i}", cpu="500m", node_name="n1", owner="web", labels={"app": "web"}) for i in range(3)],
        daemonset_pod("agent-n1", "n1"), mirror_pod("etcd-n1", "n1"),
        pod("big", cpu="1500m", node_name="n1", owner="batch"),
        pod("bare", cpu="100m", node_name="n1"),
        pdb("web", "web", minAvailable=2),
    ])


def test_a_drained_node_is_cordoned_and_gets_no_pod(cluster: Path):
    out = what_if(str(cluster), "--drain", "n1")
    placed = {p["pod"]: p["node"] for p in out["whatIf"]["placedElsewhere"]}
    assert placed and "n1" not in placed.values()


def test_a_drain_evicts_the_pods_kubectl_drain_deletes_and_their_controllers_recreate(cluster: Path):
    doc = what_if(str(cluster), "--drain", "n1")["whatIf"]
    assert sorted(e["pod"] for e in doc["evicted"]) == ["default/big", "default/web-0", "default/web-1", "default/web-2"]
    assert doc["leftInPlace"] == {"DaemonSet pods": 1, "mirror pods": 1}


def test_a_drain_says_which_pods_fit_elsewhere_and_which_not_and_why(cluster: Path):
    doc = what_if(str(cluster), "--drain", "n1")["whatIf"]
    assert sorted(p["pod"] for p in doc["placedElsewhere"]) == ["default/web-0", "default/web-1", "default/web-2"]
    [stuck] = doc["notPlaced"]
    assert stuck["pod"] == "default/big"
    assert "node(s) were unschedulable" in stuck["message"] and "Insufficient cpu" in stuck["message"]


def test_a_pod_without_a_controller_blocks_the_drain_as_kubectl_drain_says_and_stays(cluster: Path):
    out = what_if(str(cluster), "--drain", "n1", "--ignore-daemonsets")
    doc = out["whatIf"]
    assert doc["refused"] == [{"message": "cannot delete Pods that declare no controller (use --force to override)",
                               "pods": ["default/bare"]}]
    assert "default/bare" not in {p["pod"] for p in doc["placedElsewhere"] + doc["notPlaced"]}
    assert out["pods"]["pending"] == 4  # the evicted ones: the bare pod stays bound where it is


def test_with_force_a_pod_without_a_controller_is_deleted_not_placed(cluster: Path):
    doc = what_if(str(cluster), "--drain", "n1", "--force", "--ignore-daemonsets")["whatIf"]
    assert doc["refused"] == []
    assert doc["deleted"] == [{"why": "pods that declare no controller (--force): nothing recreates them",
                               "pods": ["default/bare"]}]
    assert {"message": "deleting Pods that declare no controller", "pods": ["default/bare"]} in doc["warnings"]
    assert "default/bare" not in {p["pod"] for p in doc["placedElsewhere"] + doc["notPlaced"]}


def test_daemonset_pods_stay_and_kubectl_drain_refuses_them_without_ignore_daemonsets(cluster: Path):
    without = what_if(str(cluster), "--drain", "n1")["whatIf"]
    assert {"message": "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
            "pods": ["default/agent-n1"]} in without["refused"]
    ignoring = what_if(str(cluster), "--drain", "n1", "--ignore-daemonsets")["whatIf"]
    assert {"message": "ignoring DaemonSet-managed Pods", "pods": ["default/agent-n1"]} in ignoring["warnings"]
    assert all("DaemonSet" not in r["message"] for r in ignoring["refused"])
    assert without["leftInPlace"] == ignoring["leftInPlace"] == {"DaemonSet pods": 1, "mirror pods": 1}


def test_a_pod_with_an_empty_dir_blocks_unless_delete_emptydir_data(tmp_path: Path):
    scratch = pod("cache-0", node_name="n1", owner="cache", volumes=[{"name": "tmp", "emptyDir": {"medium": "Memory"}}])
    snap = write_list(tmp_path / "s.yaml", [node("n1"), node("n2"), scratch])
    refused = what_if(str(snap), "--drain", "n1")["whatIf"]
    assert refused["refused"] == [{"message": "cannot delete Pods with local storage (use --delete-emptydir-data to "
                                              "override)", "pods": ["default/cache-0"]}]
    assert refused["evicted"] == []
    deleting = what_if(str(snap), "--drain", "n1", "--delete-emptydir-data")["whatIf"]
    assert deleting["placedElsewhere"] == [{"pod": "default/cache-0", "node": "n2"}]
    assert deleting["flagged"] == [{"pod": "default/cache-0", "flags": ["deleting Pods with local storage"]}]


def test_finished_pods_on_a_drained_node_are_deleted(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1"), node("n2"), pod("done", node_name="n1", owner="job",
                                                                         phase="Succeeded")])
    doc = what_if(str(snap), "--drain", "n1")["whatIf"]
    assert doc["deleted"] == [{"why": "finished pods (Succeeded or Failed): nothing restarts them", "pods": ["default/done"]}]
    assert doc["evicted"] == [] and doc["refused"] == []


def test_a_pod_that_tolerates_the_cordon_is_never_placed_on_the_drained_node(tmp_path: Path):
    """A catch-all toleration tolerates the cordon: the pod would otherwise go back to the
    roomy drained node (LeastAllocated prefers it)."""
    catch_all = [{"operator": "Exists"}]
    snap = write_list(tmp_path / "s.yaml", [
        node("n1", cpu="16"), node("n2", cpu="2"),
        pod("agent", node_name="n1", owner="agent", tolerations=catch_all),
        pod("huge", cpu="8", node_name="n1", owner="huge", tolerations=catch_all),
        pod("late", tolerations=catch_all)])
    placements = tmp_path / "placements.txt"
    doc = what_if(str(snap), "--drain", "n1", "--output", str(placements))["whatIf"]
    assert doc["placedElsewhere"] == [{"pod": "default/agent", "node": "n2"}]
    [stuck] = doc["notPlaced"]
    assert stuck["pod"] == "default/huge" and "didn't match Pod's node affinity/selector" in stuck["message"]
    assert sorted(doc["keptOff"]) == ["default/agent", "default/huge", "default/late"]
    assert "default/late -> n2\n" in placements.read_text()


def test_a_pod_pinned_by_its_controllers_template_to_the_drained_node_cannot_move(tmp_path: Path):
    pinned_rs = other("ReplicaSet", "agent", api_version="apps/v1",
                      spec={"selector": {"matchLabels": {"app": "agent"}},
                            "template": {"metadata": {"labels": {"app": "agent"}},
                                         "spec": {"nodeName": "n1", "containers": [{"name": "a", "image": "a"}]}}})
    snap = write_list(tmp_path / "s.yaml", [node("n1"), node("n2"), pinned_rs,
                                            pod("agent-x", node_name="n1", owner="agent", labels={"app": "agent"})])
    doc = what_if(str(snap), "--drain", "n1")["whatIf"]
    assert doc["placedElsewhere"] == []
    assert doc["notPlaced"][0]["pod"] == "default/agent-x"
    assert doc["unmovable"] == [{"pod": "default/agent-x", "why": "its controller's pod template sets spec.nodeName: n1: "
                                                                  "recreated there, bypassing the scheduler"}]


def test_a_drain_evicting_more_pods_than_a_budget_allows_violates_it(cluster: Path):
    [budget] = what_if(str(cluster), "--drain", "n1")["whatIf"]["budgets"]
    assert budget == {"budget": "default/web", "disruptionsAllowed": 1, "violated": True,
                      "evicted": ["default/web-0", "default/web-1", "default/web-2"]}


def test_a_budget_status_written_by_the_disruption_controller_is_believed(tmp_path: Path):
    budget = pdb("web", "web", minAvailable=1)
    budget["status"] = {"disruptionsAllowed": 5}
    snap = write_list(tmp_path / "s.yaml", [node("n1"), node("n2"), budget,
                                            pod("web-0", node_name="n1", owner="web", labels={"app": "web"})])
    [check] = what_if(str(snap), "--drain", "n1")["whatIf"]["budgets"]
    assert (check["disruptionsAllowed"], check["violated"]) == (5, False)


@pytest.mark.parametrize("spec, allowed", [
    ({"minAvailable": 2}, 1), ({"minAvailable": "50%"}, 1), ({"maxUnavailable": 1}, 1), ({"maxUnavailable": "0%"}, 0),
    ({"minAvailable": 3}, 0),
])
def test_a_budget_without_status_allows_what_the_disruption_controller_would(tmp_path: Path, spec: dict, allowed: int):
    snap = write_list(tmp_path / "s.yaml", [
        node("n1"), node("n2"), pdb("web", "web", **spec),
        *[pod(f"web-{i}", node_name="n1", owner="web", labels={"app": "web"}) for i in range(3)]])
    [check] = what_if(str(snap), "--drain", "n1")["whatIf"]["budgets"]
    assert check["disruptionsAllowed"] == allowed


def test_drain_selector_drains_every_matching_node(cluster: Path):
    doc = what_if(str(cluster), "--drain-selector", "pool=old")["whatIf"]
    assert doc["drainedNodes"] == ["n1", "n3"]
    assert doc["edits"] == ["drain nodes matching pool=old"]


def test_a_pod_read_before_its_node_is_still_evicted(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [pod("web-0", node_name="n1", owner="web"), node("n2"), node("n1")])
    doc = what_if(str(snap), "--drain", "n1")["whatIf"]
    assert doc["placedElsewhere"] == [{"pod": "default/web-0", "node": "n2"}]


def test_add_puts_new_nodes_in_the_snapshot_before_scheduling(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1", cpu="1"), pod("big", cpu="3")])
    extra = write_list(tmp_path / "more.yaml", [node("big-node", cpu="8")])
    out = what_if(str(snap), "--add", str(extra))
    assert out["pods"]["scheduled"] == 1
    assert out["whatIf"]["added"] == {"Node": 1}
    assert out["whatIf"]["edits"] == [f"add the objects of {extra}"]


def test_removing_a_pod_drops_it(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1"), pod("a"), pod("b")])
    out = what_if(str(snap), "--remove", "pod/default/a")
    assert out["pods"]["pending"] == 1
    assert out["whatIf"]["removed"] == ["pod/default/a"]


def test_removing_a_node_sends_its_pods_back_to_the_queue(tmp_path: Path):
    snap = write_list(tmp_path / "s.yaml", [node("n1"), node("n2"), pod("web-0", node_name="n1", owner="web"),
                                            daemonset_pod("agent-n1", "n1")])
    out = what_if(str(snap), "--remove", "node/n1")
    assert out["nodes"]["count"] == 1
    assert out["whatIf"]["placedElsewhere"] == [{"pod": "default/web-0", "node": "n2"}]


def test_the_text_report_names_each_edit_and_the_violated_budget(cluster: Path, tmp_path: Path):
    extra = write_list(tmp_path / "more.yaml", [node("n9")])
    result = run(str(cluster), "--drain", "n1", "--add", str(extra), "--remove", "pod/default/bare", "--seed", "1")
    assert result.exit_code == 0
    assert "  drain node n1\n" in result.output
    assert f"  add the objects of {extra}\n" in result.output
    assert "  remove pod/default/bare\n" in result.output
    assert "    default/web: allows 1 disruption(s), the drain evicts 3\n" in result.output


@pytest.mark.parametrize("args, message", [
    (["--drain", "nope"], "--drain nope: no node named nope in the snapshot"),
    (["--drain-selector", "pool=none"], "--drain-selector pool=none: no node matches"),
    (["--drain-selector", "pool=("], "--drain-selector: invalid label selector 'pool=(': cannot parse 'pool=('"),
    (["--remove", "pod/default/nope"], "--remove pod/default/nope: no such object in the snapshot"),
    (["--remove", "nonsense"], "--remove nonsense: want KIND/NAME, or KIND/NAMESPACE/NAME for a namespaced object"),
    (["--add", "missing.yaml"], "--add missing.yaml: no such file"),
])
def test_an_edit_that_cannot_apply_is_one_line_and_exit_2(cluster: Path, args: list[str], message: str):
    result = run(str(cluster), *args)
    assert result.exit_code == 2
    assert [line for line in result.output.splitlines() if line.startswith("error:")] == [f"error: {message}"]


def test_without_edits_the_report_has_no_what_if_part(cluster: Path):
    assert "whatIf" not in what_if(str(cluster))


def test_a_pod_written_without_a_namespace_is_removed_by_its_default_namespace(tmp_path: Path):
    bare = pod("a")
    del bare["metadata"]["namespace"]
    snap = write_list(tmp_path / "s.yaml", [node("n1"), bare, pod("b")])
    assert what_if(str(snap), "--remove", "pod/default/a")["pods"]["pending"] == 1
