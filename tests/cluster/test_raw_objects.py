"""Whole pod documents for plugins that declare ``needs_raw``: in ``simulate`` a pod bound to
a node keeps its document (``PodInfo.raw`` in ``NodeInfo.pods``), as upstream's plugins see
every ``*v1.Pod`` whole; without such a plugin bound pods stay compact (no document)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import load_snapshot
from kubesched.framework.config import API_VERSION, KIND, needs_raw_objects, parse_config
from tests.helpers import PlacedPodDocuments, placed_pod_documents_registry


def _cluster(tmp_path: Path) -> Path:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    bound = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "placed", "namespace": "default", "uid": "u-placed"},
             "spec": {"nodeName": "n1", "priority": 0, "hostname": "kept-only-in-the-document",
                      "containers": [{"name": "c", "image": "app"}]}}
    pending = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "new", "namespace": "default", "uid": "u-new"},
               "spec": {"priority": 0, "containers": [{"name": "c", "image": "app"}]}}
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, bound, pending]}))
    return path


def _simulate(tmp_path: Path, needs_raw: bool) -> PlacedPodDocuments:
    made: list[PlacedPodDocuments] = []
    registry = placed_pod_documents_registry(needs_raw, made)
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [
        {"schedulerName": "default-scheduler",
         "plugins": {"filter": {"enabled": [{"name": "PlacedPodDocuments"}]}}}]}, registry)
    snapshot = load_snapshot(_cluster(tmp_path), keep_raw_objects=needs_raw_objects(config, registry))
    result = Simulation(snapshot, config, registry).run()
    assert result.outcomes["default/new"].node == "n1"
    assert len(made) == 1
    return made[0]


def test_a_needs_raw_plugin_sees_the_document_of_a_pod_bound_to_the_node(tmp_path: Path) -> None:
    seen = _simulate(tmp_path, needs_raw=True).seen
    raw = seen["default/placed"]
    assert raw is not None
    spec = raw["spec"]
    assert isinstance(spec, Mapping) and spec["hostname"] == "kept-only-in-the-document"


def test_without_a_needs_raw_plugin_bound_pods_keep_no_document(tmp_path: Path) -> None:
    assert _simulate(tmp_path, needs_raw=False).seen == {"default/placed": None}

