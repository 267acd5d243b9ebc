"""Each policy scores nodes as the FGD paper defines it (``reference``), and places pods accordingly."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.objects.pod import parse_pod
from kubesched.plugins.gpushare import PodShape, TypicalPod
from kubesched.plugins.gpushare.best_fit import min_max_normalize

from . import reference as ref
from .cluster import gpu_node, gpu_pod, placed_devices, score_all, simulation

# Three typical pods: a half-GPU share, a whole GPU, a cpu-only pod (weights are counts).
TYPICAL = [TypicalPod(PodShape(4_000, 500, 1), 3.0), TypicalPod(PodShape(8_000, 1000, 1), 2.0),
           TypicalPod(PodShape(2_000, 0, 0), 1.0)]
REF_TYPICAL = [(ref.Pod(t.shape.cpu_milli, t.shape.gpu_milli, t.shape.gpu_count), t.weight) for t in TYPICAL]

# Nodes, and the pods already on them, placed on devices by best fit in this order.
CLUSTER = [
    gpu_node("a-idle", 8),
    gpu_node("b-busy", 8),
    gpu_pod("b-whole", 1000, node="b-busy", cpu=10_000),  # device 0
    gpu_pod("b-share", 700, node="b-busy", cpu=2_000),  # device 1: 300 left
    gpu_node("c-t4", 2, model="T4", cpu=104_000),
    gpu_pod("c-share", 500, node="c-t4", cpu=6_000),  # device 0: 500 left
    gpu_node("d-small", 1, model="V100M16", cpu=8_000, memory_mib=32_768),
]
# The same nodes as the paper's simulator sees them: cpu left, free milli-GPU per device, model, pod kinds.
NODES = {
    "a-idle": ref.Node(96_000, (1000,) * 8, "G2"),
    "b-busy": ref.Node(84_000, (0, 300) + (1000,) * 6, "G2", frozenset({"1-gpu", "share"})),
    "c-t4": ref.Node(98_000, (500, 1000), "T4", frozenset({"share"})),
    "d-small": ref.Node(8_000, (1000,), "V100M16"),
}
PODS = {
    "share-300": ref.Pod(3_000, 300, 1),
    "share-500": ref.Pod(4_000, 500, 1),
    "share-900": ref.Pod(4_000, 900, 1),
    "whole-1": ref.Pod(8_000, 1000, 1),
    "whole-2": ref.Pod(12_000, 1000, 2),
    "cpu-only": ref.Pod(2_000, 0, 0),
}


def _pod(name: str) -> dict[str, object]:
    p = PODS[name]
    return gpu_pod(name, p.milli, max(p.count, 1), cpu=p.cpu) if p.count else gpu_pod(name, cpu=p.cpu)


def _fits(node: ref.Node, pod: ref.Pod) -> bool:
    return node.cpu_left >= pod.cpu and (pod.count == 0 or ref.can_host(node, pod))


def _expected(policy: str, pod: ref.Pod) -> dict[str, int]:
    nodes = {name: node for name, node in NODES.items() if _fits(node, pod)}
    if policy == "FGD":
        return {name: ref.fgd(node, pod, REF_TYPICAL)[0] for name, node in nodes.items()}
    definition = {"BestFit": ref.best_fit, "DotProduct": ref.dot_product, "GpuPacking": ref.gpu_packing,
                  "GpuClustering": ref.gpu_clustering}[policy]
    return {name: definition(node, pod) for name, node in nodes.items()}


@pytest.mark.parametrize("pod_name", list(PODS))
@pytest.mark.parametrize("policy", ["FGD", "BestFit", "DotProduct", "GpuPacking", "GpuClustering"])
def test_policy_scores_nodes_as_the_paper_defines(policy: str, pod_name: str) -> None:
    sim = simulation(policy, CLUSTER, TYPICAL)
    pod = parse_pod(_pod(pod_name))
    expected = _expected(policy, PODS[pod_name])
    scores = score_all(sim, policy, pod)
    assert {name: scores[name] for name in expected} == expected


@pytest.mark.parametrize("pod_name", list(PODS))
@pytest.mark.parametrize("policy", ["FGD", "BestFit", "DotProduct", "GpuPacking", "GpuClustering"])
def test_policy_places_the_pod_on_its_best_node(policy: str, pod_name: str) -> None:
    expected = _expected(policy, PODS[pod_name])
    if policy == "BestFit":
        expected = dict(zip(expected, ref.normalize(list(expected.values()))))
    best = max(expected.values())
    winner = min(name for name, score in expected.items() if score == best)  # ties: the smallest name
    sim = simulation(policy, [*CLUSTER, _pod(pod_name)], TYPICAL)
    result = sim.run()
    assert result.placements[-1] == (f"default/{pod_name}", winner)


def test_fgd_puts_a_share_on_the_device_that_fragments_least() -> None:
    # On b-busy, device 1 has exactly the 300 the pod asks: filling it leaves no fragment.
    sim = simulation("FGD", [*[o for o in CLUSTER if o["metadata"]["name"] != "c-t4"], _pod("share-300")], TYPICAL)
    sim.run()
    node, chosen = placed_devices(sim, "share-300")
    assert (node, chosen) == ("b-busy", (1,))
    assert ref.fgd(NODES["b-busy"], PODS["share-300"], REF_TYPICAL)[1] == 1


def test_best_fit_normalizes_scores_to_the_whole_range() -> None:
    assert min_max_normalize(np.array([70, 85, 100])).tolist() == ref.normalize([70, 85, 100]) == [0, 50, 100]
    assert min_max_normalize(np.array([42, 42])).tolist() == [0, 0]


def test_policies_other_than_fgd_and_random_put_a_share_on_the_best_fit_device() -> None:
    # c-t4's device 0 has 500 left, device 1 is idle: a 400 share goes to device 0.
    sim = simulation("GpuPacking", [gpu_node("c-t4", 2, model="T4"), gpu_pod("c-share", 500, node="c-t4"),
                                    gpu_pod("share-400", 400)])
    sim.run()
    assert placed_devices(sim, "share-400") == ("c-t4", (0,))


def test_random_picks_any_feasible_node_and_repeats_for_a_seed() -> None:
    cluster = [gpu_node(f"n{i}", 2) for i in range(6)] + [gpu_node("tiny", 1, cpu=1_000)]

    def chosen(seed: int) -> str:
        result = simulation("Random", [*cluster, gpu_pod("p", 500, cpu=2_000)], seed=seed).run()
        return result.placements[0][1]

    picks = [chosen(seed) for seed in range(12)]
    assert "tiny" not in picks  # not enough cpu there
    assert len(set(picks)) > 2
    assert picks == [chosen(seed) for seed in range(12)]
