"""load_snapshot reads dumps object by object: what arrives later (a list's kind, a
PriorityClass) still applies, duplicates name both places, bound pods are kept compact."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
import yaml

from kubesched.cluster import yaml_parallel
from kubesched.cluster.snapshot import SnapshotError, load_snapshot

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, node: str = "", **spec: object) -> dict[str, object]:
    body: dict[str, object] = {"containers": [{"name": "c", "image": "nginx",
                                               "resources": {"requests": {"cpu": "100m"}}}], **spec}
    if node:
        body["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": body}


def write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document, indent=4))
    return path


def test_items_of_a_typed_list_whose_kind_follows_them_take_it(tmp_path: Path) -> None:
    # kubectl sorts keys: apiVersion, items, kind, metadata; items of a PodList carry no kind.
    path = write(tmp_path / "pods.json", {"apiVersion": "v1", "items": [pod("a", "n1"), pod("b")], "kind": "PodList",
                                          "metadata": {}})
    snapshot = load_snapshot(path)
    assert [p.name for p in snapshot.bound_pods] == ["a"]
    assert [p.name for p in snapshot.pending_pods] == ["b"]


def test_a_priority_class_after_the_pods_that_name_it_still_gives_them_its_value(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json", {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Pod", **pod("a", priorityClassName="high")},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    ]})
    assert [p.priority for p in load_snapshot(path).pending_pods] == [1000]


def test_a_duplicate_names_both_places(tmp_path: Path) -> None:
    first = write(tmp_path / "a.json", {"apiVersion": "v1", "kind": "List",
                                        "items": [NODE, {"apiVersion": "v1", "kind": "Pod", **pod("a")}]})
    second = write(tmp_path / "b.json", {"apiVersion": "v1", "kind": "Pod", **pod("a")})
    with pytest.raises(SnapshotError) as raised:
        load_snapshot(tmp_path)
    assert str(raised.value) == (f"{second}: Pod default/a (document 1): duplicate: the same Pod is at {first} "
                                 "(document 1, items[1])")


def test_bound_pods_of_one_template_share_their_parts_and_keep_no_document(tmp_path: Path) -> None:
    items = [NODE] + [{"apiVersion": "v1", "kind": "Pod", **pod(name, "n1", tolerations=[{"operator": "Exists"}])}
                      for name in ("a", "b")]
    snapshot = load_snapshot(write(tmp_path / "dump.json", {"apiVersion": "v1", "kind": "List", "items": items}))
    a, b = snapshot.bound_pods
    assert a.raw is None and b.raw is None
    assert a.requests is b.requests and a.tolerations is b.tolerations and a.images is b.images


def test_loading_leaves_the_garbage_collector_as_it_was(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json", {"apiVersion": "v1", "kind": "List", "items": [NODE]})
    assert gc.isenabled()
    load_snapshot(path)
    assert gc.isenabled()


def kubectl_yaml(items: list[dict[str, object]]) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})


def many_pods(count: int) -> list[dict[str, object]]:
    return [NODE] + [{"apiVersion": "v1", "kind": "Pod", **pod(f"p{i}", "n1" if i % 2 else "")} for i in range(count)]


@pytest.mark.parametrize("workers", [False, True])
def test_a_yaml_file_loads_as_the_same_json_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: bool) -> None:
    if workers:
        monkeypatch.setattr(yaml_parallel, "MIN_TEXT", 0)
    items = many_pods(3000)
    (tmp_path / "dump.yaml").write_text(kubectl_yaml(items))
    from_yaml = load_snapshot(tmp_path / "dump.yaml")
    from_json = load_snapshot(write(tmp_path / "dump.json", {"apiVersion": "v1", "kind": "List", "items": items}))
    assert [(p.key, p.node_name) for p in from_yaml.bound_pods] == [(p.key, p.node_name) for p in from_json.bound_pods]
    assert [p.key for p in from_yaml.pending_pods] == [p.key for p in from_json.pending_pods]


def test_a_yaml_list_with_anchors_is_read_whole(tmp_path: Path) -> None:
    text = kubectl_yaml(many_pods(2)).replace("  containers:\n", "  containers: &c\n", 1)
    path = tmp_path / "dump.yaml"
    path.write_text(text)
    assert len(load_snapshot(path).pending_pods) + len(load_snapshot(path).bound_pods) == 2


def test_a_bad_item_in_a_large_yaml_list_is_reported_at_its_line_in_the_file(tmp_path: Path) -> None:
    lines = kubectl_yaml(many_pods(2000)).splitlines()
    bad = next(i for i, line in enumerate(lines) if "name: p1500" in line)
    lines[bad] = lines[bad] + ": oops"
    path = tmp_path / "dump.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SnapshotError, match=f"invalid YAML at line {bad + 1}, column"):
        load_snapshot(path)
