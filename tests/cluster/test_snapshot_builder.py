"""load_snapshot reads dumps object by object: what arrives later (a list's kind, a
PriorityClass) still applies, duplicates name both places, bound pods are kept compact."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

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
