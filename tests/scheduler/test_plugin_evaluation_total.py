"""scheduler_plugin_evaluation_total counted as upstream's instrumented plugins count it
(framework/runtime/instrumented_plugins.go, v1.36): PreFilter and PreScore once per plugin
per cycle unless the plugin answered Skip; Filter once per plugin per node asked (a node
stops at its first rejecting plugin, plugins PreFilter skipped are not asked); Score once
per plugin per feasible node (plugins PreScore skipped are not asked, and a single feasible
node is not scored at all)."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.framework import Code, CycleState, PluginSpec, Status
from kubesched.framework.config import parse_config
from kubesched.objects import NodeInfo, PodInfo
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.metrics import SchedulerMetrics

from ..helpers import config, node, only, parse, pod

NO_SCHEDULE = {"key": "dedicated", "value": "db", "effect": "NoSchedule"}
PROFILE = "default-scheduler"


def evaluations(metrics: SchedulerMetrics) -> dict[tuple[str, str, str], float]:
    """(plugin, extension_point, profile) -> value of every plugin_evaluation_total sample."""
    out: dict[tuple[str, str, str], float] = {}
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        for sample in family.samples:
            if sample.name == "scheduler_plugin_evaluation_total":
                labels = sample.labels
                out[(labels["plugin"], labels["extension_point"], labels["profile"])] = sample.value
    return out


def schedule(nodes: list[dict], pods: list[dict], profile: dict | None = None,
             metrics: SchedulerMetrics | None = None):
    clock = VirtualClock()
    client = SimulatedCluster(clock)
    doc = config({"schedulerName": PROFILE, **(profile or only("TaintToleration", "NodeResourcesFit", "NodeAffinity"))})
    sched = new_scheduler(parse(doc), client, clock, tie_break="name", metrics=metrics)
    for raw in nodes:
        sched.on_node_add(parse_node(raw))
    for raw in pods:
        sched.on_pod_add(parse_pod(raw))
        assert sched.schedule_one()
    return sched, client


def cluster(size: int) -> list[dict]:
    """One node tainted against the pod, one too small for it, the rest roomy."""
    return [node("n0", taints=[NO_SCHEDULE]), node("n1", cpu="1")] + [node(f"n{i}") for i in range(2, size)]


# Sizes on both sides of the scheduler's few-nodes path (filters row by row up to 4 nodes,
# over the node table beyond): the counts are the same.
@pytest.mark.parametrize("size", [4, 7])
def test_one_pod_counts_what_upstream_counts_per_plugin_and_extension_point(size: int) -> None:
    metrics = SchedulerMetrics()
    _, client = schedule(cluster(size), [pod("p", cpu="2")], metrics=metrics)
    assert client.bindings
    feasible = size - 2
    assert evaluations(metrics) == {
        # NodeAffinity answers Skip at PreFilter and PreScore for a pod without affinity:
        # no evaluation there, and it is then asked at neither Filter nor Score.
        ("NodeResourcesFit", "PreFilter", PROFILE): 1,
        ("TaintToleration", "Filter", PROFILE): size,  # every node
        ("NodeResourcesFit", "Filter", PROFILE): size - 1,  # not the node TaintToleration rejected
        ("TaintToleration", "PreScore", PROFILE): 1,
        ("NodeResourcesFit", "PreScore", PROFILE): 1,
        ("TaintToleration", "Score", PROFILE): feasible,
        ("NodeResourcesFit", "Score", PROFILE): feasible,
    }


def test_a_single_feasible_node_is_not_scored() -> None:
    metrics = SchedulerMetrics()
    schedule(cluster(3), [pod("p", cpu="2")], metrics=metrics)
    counted = evaluations(metrics)
    assert {point for _, point, _ in counted} == {"PreFilter", "Filter"}
    assert counted[("TaintToleration", "Filter", PROFILE)] == 3


def test_a_plugin_that_does_not_skip_is_counted_at_prefilter_and_asked_at_filter() -> None:
    metrics = SchedulerMetrics()
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n9"]}]}]}}}
    schedule(cluster(5), [pod("p", cpu="2", affinity=affinity)], metrics=metrics)
    counted = evaluations(metrics)
    assert counted[("NodeAffinity", "PreFilter", PROFILE)] == 1
    # Asked about the nodes no earlier plugin rejected: not n0 (taint), not n1 (cpu).
    assert counted[("NodeAffinity", "Filter", PROFILE)] == 3
    assert ("NodeAffinity", "Score", PROFILE) not in counted  # no preferred terms: PreScore skipped it


def test_counts_add_up_over_pods_as_a_counter() -> None:
    metrics = SchedulerMetrics()
    schedule(cluster(5), [pod("a", cpu="2"), pod("b", cpu="2")], metrics=metrics)
    counted = evaluations(metrics)
    assert counted[("NodeResourcesFit", "PreFilter", PROFILE)] == 2
    # 5 nodes per pod, plus OpportunisticBatching's check of the node chosen for the first
    # pod before the second (upstream's batch.go runs RunFilterPlugins there: counted too).
    assert counted[("TaintToleration", "Filter", PROFILE)] == 5 + 5 + 1
    assert counted[("NodeResourcesFit", "Filter", PROFILE)] == 4 + 4 + 1


def test_without_metrics_the_frameworks_count_nothing() -> None:
    sched, _ = schedule(cluster(5), [pod("p", cpu="2")])
    assert all(fwk.plugin_evaluations is None for fwk in sched.profiles.values())


def test_above_100_nodes_filter_counts_only_the_nodes_the_walk_visited() -> None:
    # 150 nodes: upstream looks for max(100, 150 * 49%) = 100 feasible nodes, walking from
    # the start index (0 for the first pod): n0 (tainted) and n1 (too small) are rejected,
    # n2..n101 kept, and the walk stops at n102, which passes and is filtered but not kept.
    # The nodes after it are never asked, although kubesched filters them all in batch.
    metrics = SchedulerMetrics()
    _, client = schedule(cluster(150), [pod("p", cpu="2")], metrics=metrics)
    assert client.bindings
    counted = evaluations(metrics)
    assert counted[("TaintToleration", "Filter", PROFILE)] == 103  # n0..n102
    assert counted[("NodeResourcesFit", "Filter", PROFILE)] == 102  # not n0, which TaintToleration rejected
    assert counted[("TaintToleration", "Score", PROFILE)] == 100  # the feasible nodes kept
    assert counted[("NodeResourcesFit", "Score", PROFILE)] == 100


def test_above_100_nodes_a_walk_that_finds_too_few_counts_every_node() -> None:
    # Only 40 of 150 nodes fit: the walk visits every node without stopping early.
    nodes = [node(f"n{i}", taints=[NO_SCHEDULE]) for i in range(60)]
    nodes += [node(f"s{i}", cpu="1") for i in range(50)] + [node(f"r{i}") for i in range(40)]
    metrics = SchedulerMetrics()
    schedule(nodes, [pod("p", cpu="2")], metrics=metrics)
    counted = evaluations(metrics)
    assert counted[("TaintToleration", "Filter", PROFILE)] == 150
    assert counted[("NodeResourcesFit", "Filter", PROFILE)] == 90  # the 60 tainted nodes stop at TaintToleration
    assert counted[("NodeResourcesFit", "Score", PROFILE)] == 40


class EveryThird:
    """A Filter plugin with only the per-node form (the walk asks it window by window):
    it rejects the nodes whose number is divisible by 3."""

    name = "EveryThird"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE, "node(s) had a number divisible by 3") if int(node.name[1:]) % 3 == 0 else None


def test_above_100_nodes_a_per_node_filter_counts_only_the_nodes_the_walk_visited() -> None:
    # 200 nodes: 100 feasible to find. EveryThird comes first and rejects n0, n3, ...; the
    # 100th node kept is n149, n150 is rejected and the walk stops at n151: 152 nodes
    # visited. The plugins after EveryThird are asked about the 101 that it let through.
    registry = in_tree_registry()
    registry.register(PluginSpec("EveryThird", lambda args, handle: EveryThird()))
    doc = config({"schedulerName": PROFILE, **only("EveryThird", "TaintToleration", "NodeResourcesFit")})
    metrics = SchedulerMetrics()
    clock = VirtualClock()
    client = SimulatedCluster(clock)
    sched = new_scheduler(parse_config(doc, registry, UPSTREAM_ONLY), client, clock, registry, tie_break="name",
                          metrics=metrics)
    for i in range(200):
        sched.on_node_add(parse_node(node(f"n{i}")))
    sched.on_pod_add(parse_pod(pod("p", cpu="2")))
    assert sched.schedule_one() and client.bindings
    counted = evaluations(metrics)
    assert counted[("EveryThird", "Filter", PROFILE)] == 152
    assert counted[("TaintToleration", "Filter", PROFILE)] == 101
    assert counted[("NodeResourcesFit", "Filter", PROFILE)] == 101


def test_a_prefilter_that_rejects_the_pod_stops_the_count_at_it() -> None:
    """Upstream's PreFilter loop returns at an UnschedulableAndUnresolvable status: the plugins
    up to the rejecting one were evaluated, the later ones never ran, and no node was asked."""
    metrics = SchedulerMetrics()
    # One term naming two different nodes: no node can be both (NodeAffinity's conflict).
    nowhere = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]},
                         {"key": "metadata.name", "operator": "In", "values": ["n3"]}]}]}}}
    profile = only("NodeAffinity", "NodeResourcesFit")  # in this order: Fit (which never skips) comes after
    sched, _ = schedule(cluster(5), [pod("p", cpu="2", affinity=nowhere)], profile=profile, metrics=metrics)
    assert [p.name for p in sched.profiles[PROFILE].points["preFilter"]] == ["NodeAffinity", "NodeResourcesFit"]
    counted = evaluations(metrics)
    assert counted.get(("NodeAffinity", "PreFilter", PROFILE)) == 1
    assert ("NodeResourcesFit", "PreFilter", PROFILE) not in counted
    assert not any(point == "Filter" for _, point, _ in counted)
