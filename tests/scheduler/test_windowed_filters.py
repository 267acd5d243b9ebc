"""Per-node Filter plugins are asked only about the nodes the search visits, and still give
upstream's decisions: the same feasible nodes, and each rejected node's first failing plugin."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework import (
    BoolArray,
    Code,
    CycleState,
    NodeVerdicts,
    PluginSpec,
    SnapshotView,
    Status,
)
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.objects import NodeInfo, PodInfo
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.algorithm import Algorithm

from ..helpers import Cluster, framework, node, only

REASON = "node(s) had a number divisible by 3"


def _rejects(name: str) -> bool:
    return int(name.removeprefix("n")) % 3 == 0


class PerNode:
    name = "Thirds"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        self.asked.append(node.name)
        return Status(Code.UNSCHEDULABLE, REASON) if _rejects(node.name) else None


class Batch:
    name = "Thirds"

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        table = snapshot.table
        passed = np.array([not (name and _rejects(name)) for name in table.names], dtype=bool)
        return NodeVerdicts.from_mask(passed, Status(Code.UNSCHEDULABLE, REASON))


def _simulate(plugin: object, nodes: int, pods: int, cpu: str = "1", filters: list[str] | None = None):
    registry = in_tree_registry()
    registry.register(PluginSpec("Thirds", lambda args, handle: plugin))
    enabled = [{"name": n} for n in (filters or ["Thirds"])]
    # PostFilter off (DynamicResources and DefaultPreemption): the messages compared are the filters' alone
    plugins = {"filter": {"enabled": enabled}, "postFilter": {"disabled": [{"name": "*"}]}}
    if filters:
        plugins["filter"]["disabled"] = [{"name": "*"}]
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND,
                           "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}, registry)
    objects = [{"kind": "Node", "metadata": {"name": f"n{i}"},
                "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}} for i in range(nodes)]
    objects += [{"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"p{i}"},
                 "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}
                for i in range(pods)]
    snapshot = snapshot_from_objects([("test", o) for o in objects])
    sim = Simulation(snapshot, config, registry, tie_break="name", seed=1)
    return sim.run()


def test_a_per_node_filter_is_asked_only_about_the_nodes_the_search_visits():
    plugin = PerNode()
    _simulate(plugin, nodes=1000, pods=1)
    # 1,000 nodes: upstream looks for 420 feasible ones (42%); two thirds pass.
    assert 420 <= len(plugin.asked) < 700
    assert len(set(plugin.asked)) == len(plugin.asked)


def test_per_node_and_batch_forms_place_pods_alike():
    per_node = _simulate(PerNode(), nodes=300, pods=40)
    batch = _simulate(Batch(), nodes=300, pods=40)
    assert per_node.placements == batch.placements
    assert all(not _rejects(node) for _, node in per_node.placements)


def test_per_node_and_batch_forms_explain_a_failure_alike():
    order = ["Thirds", "NodeResourcesFit"]
    per_node = _simulate(PerNode(), nodes=9, pods=1, cpu="3", filters=order)
    batch = _simulate(Batch(), nodes=9, pods=1, cpu="3", filters=order)
    message = per_node.outcomes["default/p0"].message
    assert message == batch.outcomes["default/p0"].message
    assert message == f"0/9 nodes are available: 3 {REASON}, 6 Insufficient cpu."


def test_a_per_node_filter_before_a_batch_one_is_the_rejecting_plugin_where_both_reject():
    # Thirds runs before NodeResourcesFit: nodes both reject count as Thirds' rejections.
    result = _simulate(PerNode(), nodes=9, pods=1, cpu="3", filters=["Thirds", "NodeResourcesFit"])
    assert result.outcomes["default/p0"].message == f"0/9 nodes are available: 3 {REASON}, 6 Insufficient cpu."
    after = _simulate(PerNode(), nodes=9, pods=1, cpu="3", filters=["NodeResourcesFit", "Thirds"])
    assert after.outcomes["default/p0"].message == "0/9 nodes are available: 9 Insufficient cpu."


def test_without_score_plugins_the_first_feasible_node_is_taken():
    # upstream's numNodesToFind is 1 when nothing scores: the walk stops at the first fit.
    registry = in_tree_registry()
    plugin = PerNode()
    registry.register(PluginSpec("Thirds", lambda args, handle: plugin))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"filter": {"enabled": [{"name": "Thirds"}]}, "score": {"disabled": [{"name": "*"}]},
                    "preScore": {"disabled": [{"name": "*"}]}}}]}, registry)
    objects = [{"kind": "Node", "metadata": {"name": f"n{i}"},
                "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}} for i in range(200)]
    objects.append({"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "p"},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}})
    result = Simulation(snapshot_from_objects([("test", o) for o in objects]), config, registry).run()
    assert result.placements == [("default/p", "n1")]  # n0 is divisible by 3, n1 is the first fit
    assert plugin.asked[:2] == ["n0", "n1"] and len(plugin.asked) < 200


class _Rejects:
    """Rejects the nodes named in ``rejected``; per-node or batch form."""

    name = "Rejects"

    def __init__(self, rejected: set[str]) -> None:
        self.rejected = rejected

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE, "no") if node.name in self.rejected else None


class _RejectsBatch(_Rejects):
    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        names = snapshot.table.names
        passed = np.array([name not in self.rejected for name in names], dtype=bool)
        return NodeVerdicts.from_mask(passed, Status(Code.UNSCHEDULABLE, "no"))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(0, 10_000), st.integers(0, 100), st.randoms(use_true_random=False))
def test_windowed_filtering_finds_exactly_the_nodes_a_full_pass_finds(count, start, percent_rejected, rng):
    rejected = {f"n{i}" for i in range(count) if rng.randrange(100) < percent_rejected}
    cluster = Cluster([node(f"n{i}", zone=f"z{i % 3}") for i in range(count)])
    found = []
    for plugin in (_Rejects(rejected), _RejectsBatch(rejected)):
        registry = in_tree_registry()
        registry.register(PluginSpec("Rejects", lambda args, handle, plugin=plugin: plugin))
        fwk = framework(cluster, only("Rejects", "NodeResourcesBalancedAllocation"), registry)
        algorithm = Algorithm(percentage_of_nodes_to_score=0)
        algorithm.next_start_node_index = start
        pod = parse_pod({"metadata": {"name": "p", "namespace": "default", "uid": "p"},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}})
        feasible, diagnosis = algorithm.find_nodes_that_fit(fwk, CycleState(), pod, cluster.snapshot)
        found.append((feasible.tolist(), diagnosis.evaluated.tolist(), algorithm.next_start_node_index,
                      sorted(cluster.cache.table.names[r] for r in diagnosis.failed_rows().tolist())))
    assert found[0] == found[1]
