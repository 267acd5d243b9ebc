"""GPUPacking: GPU pods go where GPUs are already used; pods without GPUs stay off GPU nodes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.framework import CycleState
from kubesched.objects.pod import parse_pod

from kubesched_examples.gpu_packing import GPUPacking, GPUPackingArgs

from ..helpers import Cluster, node, pod
from .support import Cli, config, cpu_node, gpu_node, plain


def scores(plugin: GPUPacking, cluster: Cluster, pod: dict) -> tuple[list[int], list[int]]:
    """The batch form's and the per-node form's scores of every node, in snapshot order."""
    info = parse_pod(pod)
    rows = cluster.rows()
    batch = plugin.score_nodes(CycleState(), info, cluster.snapshot, rows)
    per_node = [plugin.score(CycleState(), info, cluster.snapshot.node_infos[r]) for r in rows.tolist()]
    return [int(s) for s in batch], per_node


# -- placements ------------------------------------------------------------------------------


def test_gpu_pods_fill_the_partly_used_gpu_node_first(installed: Cli):
    nodes = [gpu_node("gpu-idle", 8), gpu_node("gpu-busy", 8), cpu_node("cpu", cpu="32")]
    objects = nodes + [plain("running", gpu=4, node_name="gpu-busy")]
    objects += [plain(f"job-{i}", gpu=1) for i in range(4)] + [plain("wide", gpu=8)]
    run = installed.simulate(objects, config(with_coscheduling=False, gpu_packing_only=True))
    assert run.returncode == 0, run.stderr
    # The four 1-GPU jobs fill gpu-busy; the idle node stays whole for the 8-GPU pod.
    assert run.placements == {**{f"default/job-{i}": "gpu-busy" for i in range(4)}, "default/wide": "gpu-idle"}


def test_cpu_only_pods_avoid_gpu_nodes(installed: Cli):
    # Left to the default scores (LeastAllocated), the pods would go to the big, idle GPU node.
    nodes = [gpu_node("gpu", 8, cpu="64"), cpu_node("small", cpu="4")]
    run = installed.simulate(nodes + [plain(f"web-{i}") for i in range(3)], config(with_coscheduling=False, gpu_packing=True))
    assert run.returncode == 0, run.stderr
    assert set(run.placements.values()) == {"small"}
    assert {a["scores"]["gpu"]["GPUPacking"] for a in run.attempts} == {0}
    assert {a["scores"]["small"]["GPUPacking"] for a in run.attempts} == {5 * 100}


# -- the formula --------------------------------------------------------------------------------


def test_scores_follow_the_documented_formula():
    plugin = GPUPacking(GPUPackingArgs())
    cluster = Cluster(
        [gpu_node("g8-used6", 8), gpu_node("g8-idle", 8), gpu_node("g2-idle", 2), gpu_node("g4-full", 4), cpu_node("cpu")],
        [plain("a", gpu=6, node_name="g8-used6"), plain("b", gpu=4, node_name="g4-full")],
    )
    order = cluster.names()
    for pod, expected in [
        # A 2-GPU pod: the node's GPU use once it is there (an exact fit scores 100); no GPUs: 0.
        (plain("two", gpu=2), {"g8-used6": 100, "g8-idle": 25, "g2-idle": 100, "g4-full": 100, "cpu": 0}),
        (plain("one", gpu=1), {"g8-used6": 87, "g8-idle": 12, "g2-idle": 50, "g4-full": 100, "cpu": 0}),
        # No GPU: 100 off GPU nodes; on a GPU node at most 50, the less the idler its GPUs.
        (plain("web"), {"g8-used6": 37, "g8-idle": 0, "g2-idle": 0, "g4-full": 50, "cpu": 100}),
    ]:
        batch, per_node = scores(plugin, cluster, pod)
        assert dict(zip(order, batch)) == expected
        assert per_node == batch


node_specs = st.lists(
    st.tuples(st.sampled_from([0, 0, 1, 2, 4, 8]), st.lists(st.integers(0, 4), max_size=3)),  # (GPUs, bound pods' GPUs)
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=node_specs, want=st.integers(0, 8), removed=st.lists(st.integers(0, 7), max_size=3))
def test_per_node_and_batch_scores_are_identical_on_random_clusters(nodes, want, removed):
    cluster = Cluster()
    for i, (gpus, bound) in enumerate(nodes):
        cluster.add_node(gpu_node(f"n{i}", gpus) if gpus else cpu_node(f"n{i}"))
        for j, amount in enumerate(bound):
            cluster.add_pod(plain(f"p{i}-{j}", gpu=amount, node_name=f"n{i}"))  # may overcommit: the scores clamp
    for i in sorted(set(removed)):  # freed rows, reused by the nodes added after
        if i < len(nodes) and cluster.cache.table.num_nodes > 1:
            cluster.cache.remove_node(f"n{i}")
            cluster.add_node(gpu_node(f"m{i}", 4))
    batch, per_node = scores(GPUPacking(GPUPackingArgs()), cluster, plain("pod", gpu=want))
    assert batch == per_node
    assert all(0 <= s <= 100 for s in batch)


def test_the_resource_to_pack_is_an_argument():
    fpga = "example.com/fpga"
    plugin = GPUPacking(GPUPackingArgs(resource_name=fpga))
    cluster = Cluster([node("fpga", extended={fpga: 4}), gpu_node("gpu", 8), cpu_node("plain")])
    batch, _ = scores(plugin, cluster, pod("job", requests={"cpu": "1", fpga: "1"}))
    assert dict(zip(cluster.names(), batch)) == {"fpga": 25, "gpu": 0, "plain": 0}
