"""The check of a scale-up by simulation: the cluster as a run left it, and the search for the
fewest new nodes with which the scheduler places the pods the estimate promised."""

from __future__ import annotations

import pytest

from kubesched.planning.node_pools import build_templates, discover_pools
from kubesched.planning.scale_up_check import ScaleUpCheck, settled_snapshot, with_new_nodes
from tests.helpers import pod
from tests.planning.scale_up_clusters import CONFIG, REGISTRY, daemon_pod, pool_node, replicas, run, snapshot

PODS = [f"default/p{i}" for i in range(10)]


class Scripted(ScaleUpCheck):
    """A check whose simulations are replaced by a table (new nodes -> pods placed), to
    specify the search on its own; ``asked`` records the counts simulated."""

    def __init__(self, placed_by_count) -> None:
        sim_snapshot = snapshot(pool_node("s1", "small"))
        _, result = run(sim_snapshot)
        super().__init__(sim_snapshot, result, CONFIG, REGISTRY)
        self._table = placed_by_count
        self.asked: list[int] = []

    def placed(self, template, count):  # type: ignore[override]
        self.asked.append(count)
        return frozenset(self._table(count))


def first(n: int) -> list[str]:
    return PODS[: max(0, min(n, len(PODS)))]


def _template():
    snap = snapshot(pool_node("s1", "small"))
    return build_templates(discover_pools(snap.nodes), snap.nodes, snap.bound_pods)["small"]


@pytest.mark.parametrize(("table", "estimated", "start", "cap", "nodes", "helped"), [
    # one pod per node, the estimate right
    (lambda n: first(min(n, 5)), first(5), 5, 100, 5, first(5)),
    # the estimate too high: 5 nodes place all 5
    (lambda n: first(min(n, 5)), first(5), 9, 100, 5, first(5)),
    # the estimate too low: 7 nodes needed for 5 pods
    (lambda n: first(min(n - 2, 5)), first(5), 3, 100, 7, first(5)),
    # the cap: 4 nodes at most, 2 pods placed by 4 nodes, fewer by fewer
    (lambda n: first(min(n - 2, 2)), first(5), 3, 4, 4, first(2)),
    # fewer nodes than estimated place more pods: the search follows the larger set down
    (lambda n: first(6) if n == 4 else first(min(n, 5)), first(5), 5, 100, 4, first(6)),
])
def test_the_fewest_nodes_placing_the_estimated_pods(table, estimated, start, cap, nodes, helped):
    check = Scripted(table)
    answer = check.fewest_nodes(_template(), frozenset(estimated), start, cap)
    assert (answer.node_count, sorted(answer.helped)) == (nodes, sorted(helped))
    assert set(helped) <= set(table(nodes))  # sufficient
    assert not set(helped) <= set(table(nodes - 1))  # minimal
    assert answer.probes == sorted(set((n, len(table(n))) for n in check.asked))


def test_a_search_that_finds_nothing_placed_answers_no_nodes():
    answer = Scripted(lambda n: []).fewest_nodes(_template(), frozenset(first(2)), 2, 10)
    assert (answer.node_count, answer.helped, answer.capped) == (0, frozenset(), True)


def test_the_settled_cluster_has_the_runs_placements_bound_and_the_rest_pending():
    items = [pool_node("s1", "small", cpu="4"), *replicas("web", 3, cpu="2")]
    snap = snapshot(*items)
    _, result = run(snap)
    settled = settled_snapshot(snap, result)
    assert sorted((p.key, p.node_name) for p in settled.bound_pods) == [("default/web-0", "s1"), ("default/web-1", "s1")]
    assert [p.key for p in settled.pending_pods] == ["default/web-2"]


def test_pods_a_preemption_evicted_are_gone_from_the_settled_cluster():
    low = pod("low", cpu="4", node_name="s1", priority=0)
    high = pod("high", cpu="4", priority=1000)
    snap = snapshot(pool_node("s1", "small", cpu="4"), low, high)
    _, result = run(snap)
    settled = settled_snapshot(snap, result)
    assert [(p.key, p.node_name) for p in settled.bound_pods] == [("default/high", "s1")]
    assert settled.pending_pods == []


def test_new_nodes_come_with_their_templates_pods():
    snap = snapshot(pool_node("s1", "small"), daemon_pod("s1"))
    template = build_templates(discover_pools(snap.nodes), snap.nodes, snap.bound_pods)["small"]
    edited, names = with_new_nodes(snap, template, 2)
    assert names == ["template-node-for-small-0", "template-node-for-small-1"]
    assert sorted(p.node_name for p in edited.bound_pods) == ["s1", *names]
