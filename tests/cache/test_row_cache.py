"""NodeTable.row_cached: per-row values kept current across cycles, and the plugins using it.

The cache must be invisible: whatever it answers equals computing from scratch, after
pods come and go, after node changes, after the change log overflows. The per-row
(scalar) forms of NodeResourcesFit and BalancedAllocation must equal their array forms
on every row, including nodes without a resource and nodes over-committed.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.cache import pod_accounting as node_table_module
from kubesched.cache.node_table import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.noderesources import balanced_allocation, fit
from kubesched.plugins.noderesources.resource_allocation import ResourceSpec, pod_request_vector, resource_columns
from tests.helpers import make_node, make_pod

GPU = "example.com/gpu"


class _Snapshot:
    def __init__(self, table: NodeTable) -> None:
        self.table = table


def _random_table(rng: random.Random, nodes: int = 40, pods: int = 120) -> tuple[NodeTable, list]:
    table = NodeTable(capacity=8)
    for i in range(nodes):
        extended = {GPU: str(rng.choice([0, 1, 4]))} if rng.random() < 0.4 else None
        table.add_node(
            make_node(
                f"n{i}",
                cpu=rng.choice(["0", "1", "2", "4", "64"]) if rng.random() < 0.9 else None,
                memory=rng.choice(["0", "1Gi", "4Gi", "32Gi"]) if rng.random() < 0.9 else None,
                pods=rng.choice([0, 1, 3, 110]),
                ephemeral=rng.choice([None, "10Gi", "0"]),
                extended=extended,
            )
        )
    placed = []
    for j in range(pods):
        p = _random_pod(rng, f"p{j}")
        row = rng.randrange(nodes)
        table.account_pod(row, p, 1)
        placed.append((row, p))
    return table, placed


def _random_pod(rng: random.Random, name: str):
    requests = {}
    if rng.random() < 0.8:
        requests["cpu"] = rng.choice(["0", "10m", "500m", "3", "100"])
    if rng.random() < 0.8:
        requests["memory"] = rng.choice(["0", "1Mi", "512Mi", "3Gi", "40Gi"])
    if rng.random() < 0.3:
        requests["ephemeral-storage"] = rng.choice(["1Gi", "20Gi"])
    if rng.random() < 0.3:
        requests[GPU] = rng.choice(["1", "2", "8"])
    return make_pod(name, requests=requests or None)


def _all_rows(table: NodeTable) -> np.ndarray:
    return np.arange(table.size)


# -- the cache itself ----------------------------------------------------------------
def test_first_request_is_none_then_values_of_every_row_are_kept():
    table, _ = _random_table(random.Random(1))
    calls = []

    def compute(rows):
        calls.append(len(rows))
        return table.pod_count[rows] * 10

    assert table.row_cached("k", compute) is None
    assert calls == []
    values = table.row_cached("k", compute)
    assert calls == [table.size]
    assert np.array_equal(values, table.pod_count[: table.size] * 10)
    assert table.row_cached("k", compute) is values and calls == [table.size]  # nothing changed
    eager = table.row_cached("e", compute, eager=True)
    assert eager is not None and calls == [table.size, table.size]


def test_only_changed_rows_are_recomputed():
    rng = random.Random(2)
    table, placed = _random_table(rng)
    compute_rows = []

    def compute(rows):
        return table.pod_count[rows] * 10 + table.req_cpu[rows]

    def compute_row(row):
        compute_rows.append(row)
        return int(table.pod_count[row]) * 10 + int(table.req_cpu[row])

    table.row_cached("k", compute, compute_row, eager=True)
    for _ in range(30):
        row, p = placed.pop(rng.randrange(len(placed)))
        table.account_pod(row, p, -1)
        new_row = rng.randrange(table.size)
        table.account_pod(new_row, p, 1)
        placed.append((new_row, p))
        compute_rows.clear()
        values = table.row_cached("k", compute, compute_row)
        assert np.array_equal(values, compute(_all_rows(table)))
        assert set(compute_rows) == {row, new_row}


def test_node_changes_and_a_long_history_recompute_everything(monkeypatch):
    table, placed = _random_table(random.Random(3))
    seen = []

    def compute(rows):
        seen.append(len(rows))
        return table.alloc_cpu[rows] - table.req_cpu[rows]

    table.row_cached("k", compute, eager=True)
    table.add_node(make_node("late", cpu="8"))
    values = table.row_cached("k", compute)
    assert seen[-1] == table.size and np.array_equal(values, compute(_all_rows(table)))

    monkeypatch.setattr(node_table_module, "_ROW_LOG_LIMIT", 8)
    monkeypatch.setattr(node_table_module, "_ROW_CACHE_PATCH_LIMIT", 1000)
    for row, p in placed[:20]:  # more changes than the log remembers
        table.account_pod(row, p, -1)
    seen.clear()
    values = table.row_cached("k", lambda rows: compute(rows))
    assert seen[0] == table.size  # not patched: the log no longer reaches back
    assert np.array_equal(values, table.alloc_cpu[: table.size] - table.req_cpu[: table.size])


def test_rows_changed_since():
    table, _ = _random_table(random.Random(4), pods=0)
    gen = table.pod_generation
    p = make_pod("x", cpu="1")
    table.account_pod(3, p, 1)
    table.account_pod(5, p, 1)
    assert table.rows_changed_since(gen) == [3, 5]
    assert table.rows_changed_since(table.pod_generation) == []


# -- per-row forms equal array forms ------------------------------------------------
RESOURCE_SETS = [
    fit.DEFAULT_RESOURCES,
    (ResourceSpec("cpu", 3), ResourceSpec("memory", 1)),
    (ResourceSpec("cpu", 1), ResourceSpec("memory", 2), ResourceSpec("ephemeral-storage", 1), ResourceSpec(GPU, 5)),
    (ResourceSpec("memory", 1),),
    (ResourceSpec(GPU, 1),),
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("strategy", [fit.LEAST_ALLOCATED, fit.MOST_ALLOCATED])
@pytest.mark.parametrize("resources", RESOURCE_SETS)
def test_fit_score_row_equals_array_form(seed, strategy, resources):
    rng = random.Random(seed)
    table, _ = _random_table(rng)
    plugin = fit.NodeResourcesFit(fit.FitArgs(scoring_strategy=fit.ScoringStrategy(strategy, resources)))
    for i in range(5):
        pod = _random_pod(rng, f"q{i}")
        requests = pod_request_vector(pod.requests, resources, use_requested=False)
        columns = [resource_columns(table, s.name, r, use_requested=False) for s, r in zip(resources, requests)]
        expected = plugin._scores(table, _all_rows(table), requests)
        assert [plugin._score_row(columns, requests, row) for row in range(table.size)] == expected.tolist()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("resources", [r for r in RESOURCE_SETS if all(s.weight == 1 for s in r)])
def test_balanced_score_row_equals_array_form(seed, resources):
    rng = random.Random(seed)
    table, _ = _random_table(rng)
    plugin = balanced_allocation.BalancedAllocation(balanced_allocation.BalancedAllocationArgs(resources))
    for i in range(5):
        pod = _random_pod(rng, f"q{i}")
        requests = pod_request_vector(pod.requests, resources, use_requested=True)
        columns = [resource_columns(table, s.name, r, use_requested=True) for s, r in zip(resources, requests)]
        expected = plugin._scores(table, _all_rows(table), requests)
        got = [balanced_allocation._score_row(columns, requests, row) for row in range(table.size)]
        assert got == expected.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_fit_filter_key_row_equals_array_form(seed):
    rng = random.Random(seed)
    table, _ = _random_table(rng)
    for i in range(5):
        requests = _random_pod(rng, f"q{i}").requests.requests
        checks = [
            ("cpu", requests.milli_cpu, table.alloc_cpu, table.req_cpu),
            ("memory", requests.memory, table.alloc_mem, table.req_mem),
            ("ephemeral-storage", requests.ephemeral_storage, table.alloc_eph, table.req_eph),
        ]
        for name, amount in sorted(requests.scalar.items()):
            checks.append((name, amount, *table.scalar_columns(name)))
        checks = [c for c in checks if c[1] > 0]
        keys = fit._fit_keys(table, _all_rows(table), checks)
        assert [fit._fit_key(table, row, checks) for row in range(table.size)] == keys.tolist()


# -- the plugins over many cycles: cached answers equal fresh ones --------------------
def _fresh_table_like(table: NodeTable, placed: list, nodes: list) -> NodeTable:
    fresh = NodeTable(capacity=8)
    for n in nodes:
        fresh.add_node(n)
    for row, p in placed:
        fresh.account_pod(row, p, 1)
    return fresh


@pytest.mark.parametrize("seed", range(4))
def test_plugins_answer_as_without_cache_while_pods_move(seed):
    rng = random.Random(seed)
    table, placed = _random_table(rng, nodes=30, pods=60)
    nodes = [table.nodes[r] for r in range(table.size)]
    plugins = [
        fit.NodeResourcesFit(fit.FitArgs()),
        fit.NodeResourcesFit(fit.FitArgs(scoring_strategy=fit.ScoringStrategy(fit.MOST_ALLOCATED))),
        balanced_allocation.BalancedAllocation(balanced_allocation.BalancedAllocationArgs()),
    ]
    shapes = [_random_pod(rng, f"shape{i}") for i in range(3)]
    for step in range(40):
        # move, add or remove a pod
        if placed and rng.random() < 0.4:
            row, p = placed.pop(rng.randrange(len(placed)))
            table.account_pod(row, p, -1)
        else:
            p = rng.choice(shapes)
            row = rng.randrange(table.size)
            table.account_pod(row, p, 1)
            placed.append((row, p))
        fresh = _fresh_table_like(table, placed, nodes)
        pod = rng.choice(shapes)
        rows = np.array(sorted(rng.sample(range(table.size), 12)), dtype=np.int64)
        for plugin in plugins:
            got_state, fresh_state = CycleState(), CycleState()
            plugin.pre_score(got_state, pod, _Snapshot(table), rows)
            plugin.pre_score(fresh_state, pod, _Snapshot(fresh), rows)
            got = plugin.score_nodes(got_state, pod, _Snapshot(table), rows)
            want = plugin.score_nodes(fresh_state, pod, _Snapshot(fresh), rows)  # first ask: computed afresh
            assert got.tolist() == want.tolist(), (step, plugin.name)
        state = CycleState()
        plugins[0].pre_filter(state, pod, _Snapshot(table))
        got_v = plugins[0].filter_nodes(state, pod, _Snapshot(table), table.alive[: table.size])
        fresh_v = plugins[0].filter_nodes(state, pod, _Snapshot(fresh), fresh.alive[: fresh.size])
        got_status = [got_v.statuses[c - 1] if c else None for c in got_v.codes[: table.size].tolist()]
        fresh_status = [fresh_v.statuses[c - 1] if c else None for c in fresh_v.codes[: fresh.size].tolist()]
        assert got_status == fresh_status, step
