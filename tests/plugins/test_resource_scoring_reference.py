"""Property: NodeResourcesFit's three strategies and BalancedAllocation, computed over the node
table, equal a node-by-node reference written from upstream's formulas (resource_allocation.go,
least/most_allocated.go, requested_to_capacity_ratio.go, balanced_allocation.go), on random
clusters, random pods and random scored resource lists."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.objects.pod import parse_pod
from kubesched.objects.resources import is_scalar_resource
from kubesched.plugins.noderesources import balanced_allocation, fit

from ..helpers import Cluster, container, node, pod

RESOURCES = ["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "example.com/foo"]


def alloc_and_request(info, resource, pod_request, use_requested):
    """``calculateResourceAllocatableRequest`` for one node."""
    requested = info.requested if use_requested else info.non_zero_requested
    if pod_request == 0 and is_scalar_resource(resource):
        return 0, 0
    alloc = info.allocatable
    if resource == "cpu":
        return alloc.milli_cpu, requested.milli_cpu + pod_request
    if resource == "memory":
        return alloc.memory, requested.memory + pod_request
    if resource == "ephemeral-storage":
        return alloc.ephemeral_storage, info.requested.ephemeral_storage + pod_request
    if resource in alloc.scalar:
        return alloc.scalar[resource], info.requested.scalar.get(resource, 0) + pod_request
    return 0, 0


def least(req, cap):
    return 0 if cap == 0 or req > cap else (cap - req) * 100 // cap


def most(req, cap):
    return 0 if cap == 0 else min(req, cap) * 100 // cap


def broken_linear(shape, p):
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            pu, ps = shape[i - 1]
            num, den = (s - ps) * (p - pu), u - pu
            return ps + (abs(num) // den) * (1 if num >= 0 else -1)  # Go's division truncates toward zero
    return shape[-1][1]


def reference_fit(args, info, pod_info):
    source = pod_info.requests.scoring
    node_score = weight_sum = 0
    shape = [(u, s * 10) for u, s in args.shape]
    for spec in args.resources:
        cap, req = alloc_and_request(info, spec.name, source.get(spec.name), use_requested=False)
        if cap == 0:
            continue
        if args.strategy == "LeastAllocated":
            score = least(req, cap)
        elif args.strategy == "MostAllocated":
            score = most(req, cap)
        else:
            score = broken_linear(shape, 100 if req > cap else req * 100 // cap)
            if score <= 0:
                continue
        node_score += score * spec.weight
        weight_sum += spec.weight
    if weight_sum == 0:
        return 0
    if args.strategy == "RequestedToCapacityRatio":
        return math.floor(node_score / weight_sum + 0.5)
    return node_score // weight_sum


def balance(fractions):
    if len(fractions) == 2:
        std = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * 100)


def reference_balanced(args, info, pod_info):
    source = pod_info.requests.requests
    after, before = [], []
    for spec in args.resources:
        want = source.get(spec.name)
        cap, req = alloc_and_request(info, spec.name, want, use_requested=True)
        if cap == 0:
            continue
        after.append(min(req / cap, 1.0))
        before.append(min((req - want) / cap, 1.0))
    return (150 + balance(after) - balance(before)) // 2


node_specs = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from([None, "0", "500m", "2", "16"]),
        "memory": st.sampled_from([None, "1Gi", "8Gi"]),
        "ephemeral": st.sampled_from([None, "10Gi"]),
        "gpu": st.sampled_from([None, 0, 2, 8]),
    }
)
request = st.fixed_dictionaries(
    {},
    optional={
        "cpu": st.sampled_from(["0", "100m", "1", "3", "20"]),
        "memory": st.sampled_from(["0", "256Mi", "2Gi", "9Gi"]),
        "ephemeral-storage": st.sampled_from(["1Gi", "20Gi"]),
        "nvidia.com/gpu": st.sampled_from(["1", "4"]),
        "example.com/foo": st.just("1"),
    },
)
resource_lists = st.lists(
    st.tuples(st.sampled_from(RESOURCES), st.integers(1, 5)), min_size=1, max_size=4, unique_by=lambda r: r[0]
)
shapes = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 10)), min_size=1, max_size=4, unique_by=lambda p: p[0]).map(sorted)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def build(nodes, bound):
    cluster = Cluster()
    for i, spec in enumerate(nodes):
        extended = {"nvidia.com/gpu": spec["gpu"]} if spec["gpu"] is not None else None
        cluster.add_node(node(f"n{i}", cpu=spec["cpu"], memory=spec["memory"], ephemeral=spec["ephemeral"], extended=extended))
    for j, (idx, containers) in enumerate(bound):
        if idx < len(nodes):
            cluster.add_pod(pod(f"b{j}", node_name=f"n{idx}", containers=[container(f"c{k}", requests=r) for k, r in enumerate(containers)]))
    return cluster


clusters = st.tuples(
    st.lists(node_specs, min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(0, 5), st.lists(request, min_size=1, max_size=2)), max_size=8),
)
pods = st.lists(request, min_size=1, max_size=3)


@SETTINGS
@given(clusters, pods, st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]), resource_lists, shapes)
def test_fit_scores_match_the_reference(c, containers, kind, resources, shape):
    cluster = build(*c)
    incoming = parse_pod(pod("p", containers=[container(f"c{k}", requests=r) for k, r in enumerate(containers)]))
    raw = {"scoringStrategy": {"type": kind, "resources": [{"name": n, "weight": w} for n, w in resources]}}
    if kind == "RequestedToCapacityRatio":
        raw["scoringStrategy"]["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    args = fit.parse_args(raw)
    plugin = fit.new(args, None)
    names = cluster.names()
    state = CycleState()
    plugin.pre_score(state, incoming, cluster.snapshot, cluster.rows(names))
    got = [int(x) for x in plugin.score_nodes(state, incoming, cluster.snapshot, cluster.rows(names))]
    assert got == [reference_fit(args, cluster.info(n), incoming) for n in names]


@SETTINGS
@given(clusters, pods, resource_lists)
def test_balanced_allocation_scores_match_the_reference(c, containers, resources):
    cluster = build(*c)
    incoming = parse_pod(pod("p", containers=[container(f"c{k}", requests=r) for k, r in enumerate(containers)]))
    args = balanced_allocation.parse_args({"resources": [{"name": n, "weight": 1} for n, _ in resources]})
    plugin = balanced_allocation.new(args, None)
    names = cluster.names()
    state = CycleState()
    status = plugin.pre_score(state, incoming, cluster.snapshot, cluster.rows(names))
    if status is not None and status.is_skip():
        assert all(incoming.requests.requests.get(spec.name) == 0 for spec in args.resources)
        return
    got = [int(x) for x in plugin.score_nodes(state, incoming, cluster.snapshot, cluster.rows(names))]
    assert got == [reference_balanced(args, cluster.info(n), incoming) for n in names]
