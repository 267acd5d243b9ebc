"""NodeResourcesFit at PlacementScore, as upstream's TestScorePlacement_Resources specifies it: the
placement's nodes as one, the proposed pods' requests plus what the nodes hold against their summed
allocatable, MostAllocated with the strategy's resources and weights; nodes outside the placement
left out; an extended resource counted only when the proposed pods ask for it. The factory makes
the placement-scoring plugin only with TopologyAwareWorkloadScheduling on."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from kubesched.cache.cache import Cache
from kubesched.framework import Assignment, CycleState, Placement, PodGroupAssignments, PodGroupInfo
from kubesched.framework.features import Features
from kubesched.objects.nodeinfo import NodeInfo
from kubesched.objects.pod import PodInfo
from kubesched.plugins.noderesources import fit_placement
from kubesched.plugins.noderesources.fit_args import FitArgs, ScoringStrategy
from kubesched.plugins.noderesources.resource_allocation import ResourceSpec
from kubesched.scheduler.handle import HandleHub
from kubesched.clock import VirtualClock

from ..helpers import container, make_node, make_pod

GPU = "nvidia.com/gpu"
CPU_MEM = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass
class Case:
    nodes: list[str]
    placement: list[str]
    pods: list[tuple[str, dict[str, str]]]  # uid, requests
    assignments: dict[str, str]
    resources: tuple[ResourceSpec, ...]
    score: int
    existing: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # node, requests
    gpus: bool = False


CASES = {
    "Computes score based on total requests": Case(
        ["node1", "node2"], ["node1", "node2"],
        [("foo", {"cpu": "1000m", "memory": "0"}), ("bar", {"cpu": "2000m", "memory": "2000"})],
        {"foo": "node1", "bar": "node2"}, CPU_MEM, 25),
    "Computes score using weights": Case(
        ["node1", "node2"], ["node1", "node2"],
        [("foo", {"cpu": "1000m", "memory": "0"}), ("bar", {"cpu": "2000m", "memory": "2000"})],
        {"foo": "node1", "bar": "node2"}, (ResourceSpec("cpu", 4), ResourceSpec("memory", 1)), 28),
    "Handles multiple pods per node": Case(
        ["node1", "node2"], ["node1", "node2"],
        [("foo", {"cpu": "1000m", "memory": "0"}), ("bar", {"cpu": "2000m", "memory": "2000"})],
        {"foo": "node1", "bar": "node1"}, (ResourceSpec("cpu", 4), ResourceSpec("memory", 1)), 28),
    "Does not include nodes from outside of placement": Case(
        ["node1", "node2", "node3"], ["node1", "node2"],
        [("foo", {"cpu": "1000m", "memory": "0"}), ("bar", {"cpu": "2000m", "memory": "2000"})],
        {"foo": "node1", "bar": "node2"}, CPU_MEM, 25),
    "Includes pre-existing pods from outside of pod group": Case(
        ["node1", "node2"], ["node1", "node2"],
        [("foo", {"cpu": "1000m", "memory": "0"}), ("bar", {"cpu": "2000m", "memory": "2000"})],
        {"foo": "node1", "bar": "node2"}, CPU_MEM, 30, existing=[("node1", {"cpu": "1000m", "memory": "0"})]),
    "Includes scalar resources if any pod in pod group has nonzero requests": Case(
        ["node1", "node2"], ["node1", "node2"],
        [("foo", {"cpu": "1000m", "memory": "0", GPU: "0"}), ("bar", {"cpu": "1000m", "memory": "2000", GPU: "1"})],
        {"foo": "node1", "bar": "node2"}, (*CPU_MEM, ResourceSpec(GPU, 1)), 20,
        existing=[("node1", {"cpu": "1000m", "memory": "0", GPU: "0"})], gpus=True),
    "Does not include scalar resources if all pods in pod group have zero requests": Case(
        ["node1", "node2"], ["node1", "node2"],
        [("foo", {"cpu": "1000m", "memory": "0", GPU: "0"}), ("bar", {"cpu": "1000m", "memory": "2000", GPU: "0"})],
        {"foo": "node1", "bar": "node2"}, (*CPU_MEM, ResourceSpec(GPU, 1)), 25,
        existing=[("node1", {"cpu": "1000m", "memory": "0", GPU: "1"})], gpus=True),
}


def handle(cache: Cache, topology_aware: bool = True) -> object:
    hub = HandleHub(cache, VirtualClock(), None)
    hub.features = Features(enable_generic_workload=True, enable_topology_aware_workload_scheduling=topology_aware)
    return hub.handle("default-scheduler")


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_score_placement_resources(case: Case) -> None:
    cache = Cache()
    for name in case.nodes:
        cache.add_node(make_node(name, cpu="5000m", memory="5000", extended={GPU: 5} if case.gpus else None))
    for i, (node_name, requests) in enumerate(case.existing):
        cache.add_pod(make_pod(f"existing-{i}", node_name=node_name, requests=requests))
    args = FitArgs(scoring_strategy=ScoringStrategy("MostAllocated", case.resources))
    pl = fit_placement.new(args, handle(cache))  # type: ignore[arg-type]
    assert isinstance(pl, fit_placement.NodeResourcesFitPlacement)
    pods = {uid: make_pod(uid, uid=uid, requests=requests) for uid, requests in case.pods}
    proposed = [Assignment(pods[uid], node) for uid, node in case.assignments.items()]
    placement = Placement("", tuple(cache.nodes[n] for n in case.placement))
    score, status = pl.score_placement(CycleState(), PodGroupInfo("default", "pg", list(pods.values())),
                                       PodGroupAssignments(placement, proposed))
    assert status is None
    assert score == case.score


def test_the_profiles_strategy_does_not_change_the_placement_formula() -> None:
    """LeastAllocated for pods, MostAllocated for placements: a fuller placement still scores higher."""
    cache = Cache()
    cache.add_node(make_node("node1", cpu="4", memory="4Gi"))
    args = FitArgs(scoring_strategy=ScoringStrategy("LeastAllocated", CPU_MEM))
    pl = fit_placement.new(args, handle(cache))  # type: ignore[arg-type]
    pod = make_pod("p", requests={"cpu": "3", "memory": "3Gi"})
    score, _ = pl.score_placement(CycleState(), PodGroupInfo("default", "pg", [pod]),  # type: ignore[attr-defined]
                                  PodGroupAssignments(Placement("", (cache.nodes["node1"],)), [Assignment(pod, "node1")]))
    assert score == 75  # LeastAllocated's formula would give 25


def test_without_topology_aware_scheduling_the_plugin_scores_no_placement() -> None:
    pl = fit_placement.new(FitArgs(), handle(Cache(), topology_aware=False))  # type: ignore[arg-type]
    assert not hasattr(pl, "score_placement")


@pytest.mark.parametrize("containers, pod_level, score", [
    # Upstream's placement scorer is getScorer(MostAllocated) alone, without the feature
    # flags NewFit sets on the plugin's own scorer: its PodRequests skip spec.resources.
    ([{"cpu": "1", "memory": "1Gi"}], {"cpu": "3", "memory": "3Gi"}, 25),  # 1 of 4 cpu, 1 of 4Gi
    # A container without requests counts the 100m / 200Mi defaults, as for any pod.
    ([{}], {"cpu": "2", "memory": "2Gi"}, 3),  # (100m of 4 = 2) + (200Mi of 4Gi = 4) -> 3
    ([{"cpu": "1", "memory": "1Gi"}], None, 25),
], ids=["pod-level-resources-left-out", "container-defaults-without-pod-level", "no-pod-level-resources"])
def test_a_placement_counts_its_pods_container_requests_not_their_pod_level_resources(
        containers: list[dict[str, str]], pod_level: dict[str, str] | None, score: int) -> None:
    cache = Cache()
    cache.add_node(make_node("node1", cpu="4", memory="4Gi"))
    args = FitArgs(scoring_strategy=ScoringStrategy("MostAllocated", CPU_MEM))
    pl = fit_placement.new(args, handle(cache))  # type: ignore[arg-type]
    pod = make_pod("p", containers=[container(f"c{i}", requests=r) for i, r in enumerate(containers)],
                   pod_requests=pod_level)
    got, _ = pl.score_placement(CycleState(), PodGroupInfo("default", "pg", [pod]),  # type: ignore[attr-defined]
                                PodGroupAssignments(Placement("", (cache.nodes["node1"],)), [Assignment(pod, "node1")]))
    assert got == score


@pytest.mark.parametrize("seed", range(25))
def test_a_placement_is_scored_as_its_nodes_summed_one_by_one(seed: int) -> None:
    """Random placements (nodes without some resource, a GPU on some, pods already there, any
    subset of the nodes in any order): the score is MostAllocated over the sums a walk of the
    placement's nodes gives, each resource counted only on nodes that have it."""
    rnd = random.Random(seed)
    cache = Cache()
    for i in range(rnd.randint(1, 30)):
        cache.add_node(make_node(f"n{i}", cpu=rnd.choice(["0", "2", "4", "8500m"]),
                                 memory=rnd.choice(["0", "4Gi", "16Gi"]), ephemeral=rnd.choice([None, "0", "10Gi"]),
                                 extended={GPU: rnd.choice([0, 1, 4])} if rnd.random() < 0.5 else None))
    names = list(cache.nodes)
    for i in range(rnd.randint(0, 20)):
        cache.add_pod(make_pod(f"e{i}", node_name=rnd.choice(names),
                               requests={"cpu": f"{rnd.randint(0, 900)}m", "memory": f"{rnd.randint(0, 512)}Mi",
                                         "ephemeral-storage": f"{rnd.randint(0, 2)}Gi"}))
    resources = (ResourceSpec("cpu", rnd.randint(1, 3)), ResourceSpec("memory", 1),
                 ResourceSpec("ephemeral-storage", 1), ResourceSpec(GPU, 2))
    pods = [make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": f"{rnd.randint(0, 2000)}m", GPU: str(rnd.randint(0, 1))})
            for i in range(rnd.randint(1, 8))]
    rnd.shuffle(names)
    nodes = tuple(cache.nodes[n] for n in names[: rnd.randint(1, len(names))])
    score = fit_placement.placement_score(resources, PodGroupAssignments(
        Placement("p", nodes), [Assignment(p, rnd.choice(names)) for p in pods]))
    assert score == _walked_score(resources, nodes, pods)


def _walked_score(resources: tuple[ResourceSpec, ...], nodes: tuple[NodeInfo, ...], pods: list[PodInfo]) -> int:
    total = weights = 0
    for spec in resources:
        wanted = sum(fit_placement.placement_requests(p.requests).get(spec.name) for p in pods)
        if wanted == 0 and spec.name == GPU:
            continue  # an extended resource no proposed pod asks for
        capacity = 0
        for info in nodes:
            node_allocatable, node_requested = fit_placement._node_amounts(info, spec.name)
            if node_allocatable:
                capacity += node_allocatable
                wanted += node_requested
        if capacity:
            total += min(wanted, capacity) * 100 // capacity * spec.weight
            weights += spec.weight
    return total // weights if weights else 0
