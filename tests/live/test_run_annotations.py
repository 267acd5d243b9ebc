"""`kubesched run` with an out-of-tree plugin keyed on node annotations: the plugin sees the
annotations the informer delivers, and a node's annotation change (upstream's
UpdateNodeAnnotation) wakes the pod it rejected; a plugin declaring ``needs_raw`` reads
whole node documents, and those of the pods bound to nodes, in the live mode too."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from tests.apiserver import APIServer
from tests.helpers import PlacedPodDocuments, placed_pod_documents_registry
from tests.live.harness import Kubesched, node, node_of, pod, scheduler_config, wait_until

from kubesched.framework.config import parse_config
from kubesched.framework.loader import load_plugins
from kubesched.plugins.registry import in_tree_registry

ACME = Path(__file__).resolve().parents[1] / "sdk" / "acme" / "src"
if str(ACME) not in sys.path:
    sys.path.insert(0, str(ACME))


def _start(server: APIServer, kubeconfig: Path, started: list[Kubesched], plugin: str) -> Kubesched:
    registry = load_plugins(in_tree_registry(), ["acme_plugins:specs"], use_entry_points=False)
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"multiPoint": {"enabled": [{"name": plugin, "weight": 50}]}}}]}
    config = scheduler_config()
    config.profiles = parse_config(doc, registry).profiles
    sched = Kubesched(server, kubeconfig, config, registry=registry).start()
    started.append(sched)
    return sched


def test_an_annotation_change_wakes_the_pod_the_window_plugin_rejected(server: APIServer, kubeconfig: Path,
                                                                       started: list[Kubesched]) -> None:
    closed = node("n1")
    closed["metadata"]["annotations"] = {"acme.io/window": "closed"}
    server.create(closed)
    server.create(pod("web"))
    _start(server, kubeconfig, started, "MaintenanceWindow")
    wait_until(lambda: (server.get("Pod", "default", "web") or {}).get("status", {}).get("conditions"),
               what="web marked unschedulable")
    assert node_of(server, "web") is None
    current = server.get("Node", None, "n1")
    assert current is not None
    current["metadata"]["annotations"] = {"acme.io/window": "open"}
    server.update(current)
    wait_until(lambda: node_of(server, "web") == "n1", what="web bound once the window opened")


def test_a_plugin_declaring_needs_raw_reads_node_documents_in_run(server: APIServer, kubeconfig: Path,
                                                                  started: list[Kubesched]) -> None:
    for name, kernel in (("old", "5.15.0"), ("new", "6.8.0")):
        obj = node(name)
        obj["status"]["nodeInfo"] = {"kernelVersion": kernel}
        server.create(obj)
    server.create(pod("p"))
    _start(server, kubeconfig, started, "KernelPreference")
    wait_until(lambda: node_of(server, "p") == "new", what="p bound to the node with the preferred kernel")


def _placed_pod_document(server: APIServer, kubeconfig: Path, started: list[Kubesched],
                         needs_raw: bool) -> Mapping[str, object] | None:
    """The document a Filter plugin sees of a pod already bound to the node (None: dropped)."""
    made: list[PlacedPodDocuments] = []
    registry = placed_pod_documents_registry(needs_raw, made)
    placed = pod("placed", node_name="n1")
    placed["spec"]["hostname"] = "kept-only-in-the-document"
    server.create(node("n1"))
    server.create(placed)
    server.create(pod("p"))
    config = scheduler_config()
    config.profiles = parse_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"filter": {"enabled": [{"name": "PlacedPodDocuments"}]}}}]}, registry).profiles
    started.append(Kubesched(server, kubeconfig, config, registry=registry).start())
    wait_until(lambda: node_of(server, "p") == "n1", what="p bound to n1")
    (plugin,) = made
    return plugin.seen["default/placed"]


def test_a_plugin_declaring_needs_raw_reads_bound_pod_documents_in_run(server: APIServer, kubeconfig: Path,
                                                                       started: list[Kubesched]) -> None:
    raw = _placed_pod_document(server, kubeconfig, started, needs_raw=True)
    assert raw is not None
    spec = raw["spec"]
    assert isinstance(spec, Mapping) and spec["hostname"] == "kept-only-in-the-document"


def test_without_a_needs_raw_plugin_bound_pods_keep_no_document_in_run(server: APIServer, kubeconfig: Path,
                                                                      started: list[Kubesched]) -> None:
    assert _placed_pod_document(server, kubeconfig, started, needs_raw=False) is None
