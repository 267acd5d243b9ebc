"""`simulate`'s report on pod groups (GenericWorkload): each group with its policy, topology
constraint, members placed and pending, the domain it landed in and its PodGroupScheduled
condition; gangs left wholly unbound called out; PodGroups the gate left unread said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.cli.gangs import ALL_GATES, gang_cluster, member, pod_group, racks
from tests.cli.dumps import write_list


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _groups(snapshot: Path, gates: str = ALL_GATES) -> dict[str, dict[str, Any]]:
    document = json.loads(_run(str(snapshot), "--feature-gates", gates, "-o", "json"))
    return {g["name"]: g for g in document["podGroups"]}


@pytest.fixture()
def cluster(tmp_path: Path) -> Path:
    return gang_cluster(tmp_path / "gangs.yaml")


def test_each_group_has_its_policy_min_count_and_topology_constraint(cluster: Path) -> None:
    groups = _groups(cluster)
    assert [(g["policy"], g["minCount"], g["topologyKeys"]) for g in groups.values()] == [
        ("gang", 4, ["topology.kubernetes.io/rack"]), ("gang", 5, ["topology.kubernetes.io/rack"]), ("basic", None, [])]


def test_a_gang_that_fits_has_every_member_placed_in_one_domain(cluster: Path) -> None:
    train = _groups(cluster)["ml/train"]
    assert sorted(train["placed"]) == [f"ml/train-{i}" for i in range(4)]
    assert {node.rsplit("-", 1)[0] for node in train["placed"].values()} == {"rack-a"}
    assert train["domains"] == ["rack-a"] and train["placement"] == "rack-a"
    assert train["pending"] == [] and train["condition"] == {"status": "True", "reason": "Scheduled", "message": ""}
    assert train["whollyUnbound"] is False


def test_a_gang_no_domain_holds_is_wholly_unbound_with_its_condition(cluster: Path) -> None:
    xl = _groups(cluster)["ml/train-xl"]
    assert xl["placed"] == {} and xl["pending"] == [f"ml/train-xl-{i}" for i in range(5)]
    assert xl["whollyUnbound"] is True and xl["domains"] == []
    assert xl["condition"]["status"] == "False" and xl["condition"]["reason"] == "Unschedulable"
    assert xl["condition"]["message"].startswith("0/2 placements are available")
    assert "Insufficient cpu" in xl["podMessage"]


def test_a_basic_group_is_never_called_wholly_unbound(tmp_path: Path) -> None:
    snapshot = write_list(tmp_path / "s.yaml", [*racks(), pod_group("big"), member("big-0", "big", "64")])
    big = _groups(snapshot)["ml/big"]
    assert big["policy"] == "basic" and big["pending"] == ["ml/big-0"] and big["whollyUnbound"] is False


def test_members_bound_before_the_run_are_counted_apart(tmp_path: Path) -> None:
    snapshot = write_list(tmp_path / "s.yaml", [
        *racks(), pod_group("resume", 2), member("resume-0", "resume", "1", node_name="rack-b-2"),
        member("resume-1", "resume", "1")])
    resume = _groups(snapshot)["ml/resume"]
    assert resume["boundBefore"] == ["ml/resume-0"] and list(resume["placed"]) == ["ml/resume-1"]
    assert resume["members"] == 2 and resume["whollyUnbound"] is False


def test_a_group_its_pods_name_but_the_snapshot_lacks_is_listed_as_missing(tmp_path: Path) -> None:
    snapshot = write_list(tmp_path / "s.yaml", [*racks(), member("lost-0", "lost", "1")])
    lost = _groups(snapshot)["ml/lost"]
    assert lost["policy"] == "missing" and lost["pending"] == ["ml/lost-0"] and lost["condition"] is None


def test_the_backoff_retries_are_counted_per_group(cluster: Path) -> None:
    groups = _groups(cluster)
    assert groups["ml/train-xl"]["backoffRetries"] == 1 and groups["ml/train"]["backoffRetries"] == 0


def test_with_generic_workload_off_no_group_is_listed_and_the_unread_ones_are_counted(cluster: Path) -> None:
    document = json.loads(_run(str(cluster), "-o", "json"))
    assert document["podGroups"] == [] and document["podGroupsIgnored"] == 3


def test_the_text_report_has_a_row_per_group_with_its_condition(cluster: Path) -> None:
    text = _run(str(cluster), "--feature-gates", ALL_GATES)
    assert "Pod groups (3): 2 with every pod bound, 1 gang(s) left wholly unbound" in text
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in text.splitlines() if line.startswith("│ ml/")}
    assert rows["ml/train"] == ["gang, minCount 4", "topology.kubernetes.io/rack", "4/4", "0", "2", "rack-a",
                                "True (Scheduled)"]
    assert rows["ml/train-xl"][2:] == ["0/5", "5", "0", "-", "False (Unschedulable)"]
    assert rows["ml/web"][:3] == ["basic", "-", "3/3"]


def test_the_text_report_calls_out_gangs_left_wholly_unbound_and_why(cluster: Path) -> None:
    lines = _run(str(cluster), "--feature-gates", ALL_GATES).splitlines()
    at = lines.index("Gangs left wholly unbound (1): all or nothing, and not one of their pods is bound:")
    assert lines[at + 1].startswith("  ml/train-xl (gang, minCount 5; 5 pod(s) pending: ml/train-xl-0, ml/train-xl-1, "
                                    "ml/train-xl-2 and 2 more): Unschedulable: 0/2 placements are available")
    assert "its pods: 0/2 nodes are available: 2 Insufficient cpu." in lines[at + 1]


def test_the_text_report_says_when_generic_workload_left_pod_groups_unread(cluster: Path) -> None:
    text = " ".join(_run(str(cluster)).split())
    assert "3 PodGroup(s) in the snapshot were not read: GenericWorkload is off, so their pods were scheduled one by one" in text
    assert "Pod groups (" not in text


def test_the_report_page_data_lists_the_groups_with_their_members_in_the_pod_list(cluster: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    _run(str(cluster), "--feature-gates", ALL_GATES, "--report", str(out), "-q")
    text = out.read_text()
    start = text.index('<script id="data" type="application/json">') + len('<script id="data" type="application/json">')
    data = json.loads(text[start:text.index("</script>", start)])
    groups = {g["name"]: g for g in data["podGroups"]}
    assert list(groups) == ["ml/train-xl", "ml/train", "ml/web"]  # the gang with nothing bound first
    assert groups["ml/train-xl"]["unbound"] is True and groups["ml/train-xl"]["retries"] == 1
    names = {g: sorted(data["pods"][i][1] for i in groups[g]["pods"]) for g in groups}
    assert names["ml/web"] == ["web-0", "web-1", "web-2"]
    assert data["groupRetries"] == [["ml/train-xl", 1]]
