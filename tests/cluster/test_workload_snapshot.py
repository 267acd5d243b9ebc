"""Snapshots read workload-aware scheduling's PodGroups and Workloads (``scheduling.k8s.io/v1alpha2``):
into ``pod_groups`` and ``scheduling_workloads``, checked as the API server checks them, and
kept apart from other groups' kinds of the same name (Coscheduling's PodGroup, Kueue's Workload)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.cluster.snapshot import SnapshotError, load_snapshot

V1ALPHA2 = "scheduling.k8s.io/v1alpha2"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod_group(name: str, min_count: int | None = 2, api_version: str | None = V1ALPHA2, **spec: Any) -> dict[str, Any]:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    obj: dict[str, Any] = {"kind": "PodGroup", "metadata": {"name": name, "namespace": "ml"},
                           "spec": {"schedulingPolicy": policy, **spec}}
    if api_version is not None:
        obj["apiVersion"] = api_version
    return obj


def workload(name: str, api_version: str = V1ALPHA2, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Workload", "metadata": {"name": name, "namespace": "ml"},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}], **spec}}


def member(name: str, group: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
            "spec": {"schedulingGroup": {"podGroupName": group},
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}


def write(path: Path, *items: dict[str, Any], kind: str = "List", api_version: str = "v1") -> Path:
    path.write_text(json.dumps({"apiVersion": api_version, "kind": kind, "metadata": {}, "items": list(items)}))
    return path


def test_kubectl_get_podgroups_and_workloads_fill_the_snapshot(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json", NODE, pod_group("train"), pod_group("infer", min_count=None),
                 workload("job"), member("train-0", "train"), member("train-1", "train"))
    snap = load_snapshot(path)
    assert [(g.key, g.min_count) for g in snap.pod_groups] == [("ml/train", 2), ("ml/infer", None)]
    assert [(w.key, [t.name for t in w.templates]) for w in snap.scheduling_workloads] == [("ml/job", ["workers"])]
    assert [p.pod_group_name for p in snap.pending_pods] == ["train", "train"]
    assert "PodGroup" not in snap.ignored and "Workload" not in snap.ignored


@pytest.mark.parametrize("kind, attribute", [("PodGroupList", "pod_groups"), ("WorkloadList", "scheduling_workloads")])
@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_a_typed_list_of_the_api_gives_its_items_kind_and_api_version(tmp_path: Path, kind: str, attribute: str,
                                                                     suffix: str) -> None:
    item = pod_group("train") if kind == "PodGroupList" else workload("job")
    stripped = {k: v for k, v in item.items() if k not in ("kind", "apiVersion")}
    document = {"apiVersion": V1ALPHA2, "kind": kind, "metadata": {}, "items": [stripped, stripped | {
        "metadata": {"name": "second", "namespace": "ml"}}]}
    path = tmp_path / f"list.{suffix}"
    path.write_text(json.dumps(document) if suffix == "json" else yaml.safe_dump(document))
    assert [o.name for o in getattr(load_snapshot(path), attribute)] == [item["metadata"]["name"], "second"]


def test_an_invalid_pod_group_is_one_line_per_problem_naming_file_object_and_field(tmp_path: Path) -> None:
    bad = pod_group("train", min_count=0, schedulingConstraints={"topology": [{"key": "a"}, {"key": "b"}]})
    path = write(tmp_path / "dump.json", NODE, bad)
    with pytest.raises(SnapshotError) as raised:
        load_snapshot(path)
    assert [str(p) for p in raised.value.problems] == [
        f"{path}: PodGroup ml/train spec.schedulingPolicy.gang.minCount: Required value",
        f"{path}: PodGroup ml/train spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item",
    ]


def test_an_invalid_workload_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json", workload("job", podGroupTemplates=[]))
    with pytest.raises(SnapshotError) as raised:
        load_snapshot(path)
    assert str(raised.value) == f"{path}: Workload ml/job spec.podGroupTemplates: Required value"


def test_a_pods_scheduling_group_is_checked_as_pod_validation_checks_it(tmp_path: Path) -> None:
    bad = member("p", "Train_0")
    path = write(tmp_path / "dump.json", NODE, bad)
    with pytest.raises(SnapshotError) as raised:
        load_snapshot(path)
    [problem] = raised.value.problems
    assert (problem.obj, problem.field) == ("Pod ml/p", "spec.schedulingGroup.podGroupName")
    assert problem.message.startswith('Invalid value: "Train_0": a lowercase RFC 1123 subdomain')


def test_a_version_the_api_server_no_longer_serves_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json", workload("job", api_version="scheduling.k8s.io/v1alpha1"))
    with pytest.raises(SnapshotError) as raised:
        load_snapshot(path)
    assert str(raised.value) == (f"{path}: Workload ml/job apiVersion: unknown apiVersion 'scheduling.k8s.io/v1alpha1' "
                                 "for Workload; the API server serves scheduling.k8s.io/v1alpha2")


def test_other_groups_kinds_of_the_same_name_are_not_read_as_the_apis(tmp_path: Path) -> None:
    coscheduling = pod_group("train", api_version="scheduling.x-k8s.io/v1alpha1")
    coscheduling["spec"] = {"minMember": 2}
    kueue = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "job", "namespace": "ml"},
             "spec": {"queueName": "q"}}
    path = write(tmp_path / "dump.json", NODE, coscheduling, kueue, pod_group("train"), workload("job"))
    snap = load_snapshot(path)  # same names, other groups: no duplicates either
    assert [g.key for g in snap.pod_groups] == ["ml/train"]
    assert [w.key for w in snap.scheduling_workloads] == ["ml/job"]
    assert snap.ignored == {"PodGroup": 1, "Workload": 1}


def test_a_plugin_reading_coschedulings_pod_groups_still_gets_them(tmp_path: Path) -> None:
    coscheduling = pod_group("train", api_version="scheduling.x-k8s.io/v1alpha1")
    coscheduling["spec"] = {"minMember": 2}
    snap = load_snapshot(write(tmp_path / "dump.json", NODE, coscheduling, pod_group("other")),
                         plugin_kinds=frozenset({"PodGroup"}))
    assert [o["metadata"]["name"] for o in snap.objects["PodGroup"]] == ["train"]
    assert [g.name for g in snap.pod_groups] == ["other"]


def test_a_pod_group_without_api_version_is_the_apis_unless_a_plugin_reads_the_kind(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json", NODE, pod_group("train", api_version=None))
    assert [g.name for g in load_snapshot(path).pod_groups] == ["train"]
    assert load_snapshot(path, plugin_kinds=frozenset({"PodGroup"})).pod_groups == []


def test_a_duplicate_pod_group_names_both_places(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json", pod_group("train"), pod_group("train"))
    with pytest.raises(SnapshotError, match="duplicate: the same PodGroup is at"):
        load_snapshot(path)


def test_simulate_exits_2_on_an_invalid_pod_group(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json", NODE, pod_group("train", min_count=-1))
    result = CliRunner().invoke(cli, ["simulate", str(path)])
    assert result.exit_code == 2
    assert (f"{path}: PodGroup ml/train spec.schedulingPolicy.gang.minCount: Invalid value: -1: "
            "must be greater than or equal to 1") in result.stderr


def test_the_gang_example_holds_a_gang_that_fits_one_that_does_not_and_a_basic_group() -> None:
    snap = load_snapshot(Path(__file__).resolve().parents[2] / "examples" / "gang-cluster.yaml")
    racks = {n.labels["topology.kubernetes.io/rack"] for n in snap.nodes}
    assert racks == {"rack-a", "rack-b"} and len(snap.nodes) == 4
    groups = {g.name: (g.min_count, g.topology_keys) for g in snap.pod_groups}
    assert groups == {"train": (4, ("topology.kubernetes.io/rack",)), "train-xl": (5, ("topology.kubernetes.io/rack",)),
                      "web": (None, ())}
    members = {name: sum(p.pod_group_name == name for p in snap.pending_pods) for name in groups}
    assert members == {"train": 4, "train-xl": 5, "web": 3}
    assert [t.name for t in snap.scheduling_workloads[0].templates] == ["train", "train-xl", "web"]
