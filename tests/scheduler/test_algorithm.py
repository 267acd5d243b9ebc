"""schedulePod: how many nodes to look at (percentageOfNodesToScore), the rotating start
index, a single feasible node, the tie-break, and the FitError message."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.scheduler.algorithm import Algorithm, num_feasible_nodes_to_find
from kubesched.scheduler.node_walk import first_passing, walk_few
from kubesched.scheduler.fit_error import Diagnosis, FitError, NoNodesAvailableError

from ..helpers import Cluster, expr, framework, make_pod, node, only, pod, required_node_affinity, taint


@pytest.mark.parametrize(
    "percentage, nodes, expected",
    [
        pytest.param(0, 0, 0, id="no nodes"),
        pytest.param(0, 50, 50, id="under 100 nodes: all"),
        pytest.param(0, 99, 99, id="99 nodes: all"),
        pytest.param(0, 100, 100, id="100 nodes: 50% would be 50, so the minimum 100"),
        pytest.param(0, 200, 100, id="200 nodes: 49% is 98, so 100"),
        pytest.param(0, 300, 144, id="300 nodes: 48%"),
        pytest.param(0, 1000, 420, id="1000 nodes: 42%"),
        pytest.param(0, 5000, 500, id="5000 nodes: 10%"),
        pytest.param(0, 5624, 337, id="5624 nodes: 50 - 44 = 6%"),
        pytest.param(0, 6000, 300, id="6000 nodes: floor of 5%"),
        pytest.param(0, 20000, 1000, id="20000 nodes: 5%"),
        pytest.param(50, 1000, 500, id="explicit 50%"),
        pytest.param(100, 5000, 5000, id="explicit 100%"),
        pytest.param(1, 1000, 100, id="explicit 1%: still at least 100"),
        pytest.param(30, 80, 80, id="explicit, under 100 nodes: all"),
    ],
)
def test_num_feasible_nodes_to_find(percentage, nodes, expected):
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


# -- the walk over the nodes -------------------------------------------------------------------------------
def big_cluster(n, **node_kw):
    return Cluster([node(f"n{i:03d}", **node_kw) for i in range(n)])


def names_of(cluster, rows):
    return [cluster.cache.table.names[r] for r in rows.tolist()]


def test_filtering_stops_once_enough_nodes_fit_and_the_next_pod_starts_where_it_stopped():
    c = big_cluster(200)
    fwk = framework(c)
    algo = Algorithm(tie_break="name")
    order = c.names()
    first = algo.schedule_pod(fwk, CycleState(), make_pod("a"), c.snapshot)
    assert sorted(names_of(c, first.feasible_rows)) == sorted(order[:100])
    assert algo.next_start_node_index == 100
    second = algo.schedule_pod(fwk, CycleState(), make_pod("b"), c.snapshot)
    assert sorted(names_of(c, second.feasible_rows)) == sorted(order[100:])
    assert algo.next_start_node_index == 0


def test_rejected_nodes_count_as_processed():
    # every other node is cordoned: the walk keeps 144 feasible nodes (the last at 286) and
    # stops at the next passing one (288), counting the cordoned node 287 before it
    nodes = [node(f"n{i:03d}", unschedulable=i % 2 == 1) for i in range(300)]
    c = Cluster(nodes)
    fwk = framework(c, {"percentageOfNodesToScore": 0})
    algo = Algorithm(tie_break="name")
    result = algo.schedule_pod(fwk, CycleState(), make_pod("a"), c.snapshot)
    assert result.feasible_nodes == 144  # 300 nodes: 48%
    assert algo.next_start_node_index == 288
    assert result.evaluated_nodes == 288


def test_the_walk_wraps_around_from_the_start_index():
    c = big_cluster(150)
    fwk = framework(c, {"percentageOfNodesToScore": 0})
    algo = Algorithm(tie_break="name")
    algo.next_start_node_index = 120
    result = algo.schedule_pod(fwk, CycleState(), make_pod("a"), c.snapshot)
    order = c.names()
    assert sorted(names_of(c, result.feasible_rows)) == sorted(order[120:] + order[:70])
    assert algo.next_start_node_index == 70


def test_the_profile_percentage_overrides_the_global_one():
    c = big_cluster(400)
    algo = Algorithm(percentage_of_nodes_to_score=100, tie_break="name")
    assert algo.schedule_pod(framework(c), CycleState(), make_pod("a"), c.snapshot).feasible_nodes == 400
    limited = framework(c, {"percentageOfNodesToScore": 50})
    assert algo.schedule_pod(limited, CycleState(), make_pod("b"), c.snapshot).feasible_nodes == 200


def test_the_start_index_advances_modulo_all_nodes_when_prefilter_narrows():
    c = big_cluster(10)
    fwk = framework(c)
    algo = Algorithm(tie_break="name")
    algo.next_start_node_index = 7
    terms = [{"matchFields": [expr("metadata.name", "In", n)]} for n in ("n001", "n002", "n003")]
    narrowed = make_pod("a", affinity=required_node_affinity(*terms))
    algo.schedule_pod(fwk, CycleState(), narrowed, c.snapshot)
    assert algo.next_start_node_index == (7 + 3) % 10


def test_a_single_feasible_node_is_chosen_without_scoring():
    c = Cluster([node("a", unschedulable=True), node("b"), node("c", unschedulable=True)])
    result = Algorithm(tie_break="name").schedule_pod(framework(c), CycleState(), make_pod("p"), c.snapshot)
    assert result.suggested_host == "b" and result.scores is None and result.feasible_nodes == 1


def test_no_nodes_at_all():
    c = Cluster()
    with pytest.raises(NoNodesAvailableError) as err:
        Algorithm().schedule_pod(framework(c), CycleState(), make_pod("p"), c.snapshot)
    assert str(err.value) == "no nodes available to schedule pods"


# -- host selection ---------------------------------------------------------------------------------------------
def test_the_highest_total_wins():
    c = Cluster([node("busy", cpu="4"), node("idle", cpu="4")], [pod("x", cpu="3", node_name="busy")])
    result = Algorithm(tie_break="random", seed=1).schedule_pod(framework(c), CycleState(), make_pod("p", cpu="1"), c.snapshot)
    assert result.suggested_host == "idle"


def test_name_tie_break_picks_the_smallest_name_in_byte_order():
    c = Cluster([node(n) for n in ("node-9", "node10", "node-10")])
    result = Algorithm(tie_break="name").schedule_pod(framework(c), CycleState(), make_pod("p"), c.snapshot)
    assert sorted(names_of(c, result.best_rows)) == ["node-10", "node-9", "node10"]
    assert result.suggested_host == "node-10"


def choices(seed, runs=60):
    c = Cluster([node(f"n{i}") for i in range(4)])
    fwk = framework(c)
    algo = Algorithm(tie_break="random", seed=seed)
    return [algo.schedule_pod(fwk, CycleState(), make_pod(f"p{i}"), c.snapshot).suggested_host for i in range(runs)]


def test_random_tie_break_is_reproducible_with_a_seed():
    assert choices(7) == choices(7)


def test_random_tie_break_spreads_over_every_tied_node():
    picked = Counter(choices(3, runs=400))
    assert set(picked) == {"n0", "n1", "n2", "n3"}
    assert min(picked.values()) > 50


def test_tie_break_must_be_known():
    with pytest.raises(ValueError):
        Algorithm(tie_break="first")


# -- FitError --------------------------------------------------------------------------------------------------
def fit_error(cluster, p, profile=None):
    with pytest.raises(FitError) as err:
        Algorithm(tie_break="name").schedule_pod(framework(cluster, profile), CycleState(), p, cluster.snapshot)
    return err.value


def test_the_message_counts_each_reason_and_sorts_the_counts_as_strings():
    nodes = [node(f"small{i}", cpu="1", memory="1Gi") for i in range(10)]
    nodes += [node(f"tainted{i}", taints=[taint("dedicated", "x")]) for i in range(2)]
    nodes += [node("cordoned", unschedulable=True)]
    err = fit_error(Cluster(nodes), make_pod("p", cpu="2", memory="2Gi"))
    assert str(err) == (
        "0/13 nodes are available: 1 node(s) were unschedulable, 10 Insufficient cpu, 10 Insufficient memory, "
        "2 node(s) had untolerated taint(s)."
    )
    assert err.diagnosis.unschedulable_plugins == {"NodeResourcesFit", "TaintToleration", "NodeUnschedulable"}


def test_nodes_outside_the_prefilter_result_count_under_its_reason():
    c = Cluster([node("n1", cpu="1"), node("n2"), node("n3")])
    p = make_pod("p", cpu="2", affinity=required_node_affinity({"matchFields": [expr("metadata.name", "In", "n1")]}))
    err = fit_error(c, p)
    assert str(err) == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    assert err.diagnosis.unschedulable_plugins == {"NodeAffinity", "NodeResourcesFit"}


def test_a_prefilter_rejection_is_the_whole_message():
    c = Cluster([node("n1"), node("n2")])
    term = {"matchFields": [expr("metadata.name", "In", "n1"), expr("metadata.name", "In", "n2")]}
    err = fit_error(c, make_pod("p", affinity=required_node_affinity(term)))
    assert str(err) == "0/2 nodes are available: pod affinity terms conflict."
    assert err.diagnosis.unschedulable_plugins == {"NodeAffinity"}


def test_the_plugins_whose_prefilter_results_conflict_are_the_rejectors():
    class Narrow:
        def __init__(self, name, nodes):
            self.name, self.nodes = name, frozenset(nodes)

        def pre_filter(self, state, pod, snapshot):
            from kubesched.framework.interfaces import PreFilterResult

            return PreFilterResult(self.nodes), None

    from kubesched.framework.registry import Registry
    from kubesched.plugins.registry import in_tree_registry

    registry = in_tree_registry().merged(Registry())
    registry.add("A", lambda args, handle: Narrow("A", {"n1"}))
    registry.add("B", lambda args, handle: Narrow("B", {"n2"}))
    c = Cluster([node("n1"), node("n2")])
    with pytest.raises(FitError) as err:
        Algorithm().schedule_pod(framework(c, only("A", "B"), registry), CycleState(), make_pod("p"), c.snapshot)
    assert str(err.value) == "0/2 nodes are available: node(s) didn't satisfy plugin(s) [A B] simultaneously."
    assert err.value.diagnosis.unschedulable_plugins == {"A", "B"}


def test_a_postfilter_message_follows_the_filter_message():
    d = Diagnosis(absent_status=Status(Code.UNSCHEDULABLE, "Insufficient cpu"))
    d.post_filter_msg = "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    err = FitError("default/p", 3, d)
    assert str(err) == (
        "0/3 nodes are available: 3 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


# -- the walk's stopping rule, three ways ------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(40))
def test_the_walk_stops_at_the_node_after_the_last_one_kept_in_every_form(seed):
    # upstream's rule: keep the first `want` passing nodes from `start`, stop at the next
    # passing one, advance by the nodes visited before it (all of them if none)
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    order = np.array(rng.sample(range(n), n), dtype=np.int64)
    passed = np.array([rng.random() < 0.5 for _ in range(n)])
    start, want = rng.randrange(n), rng.randint(1, n)
    visit = [int(order[(start + i) % n]) for i in range(n)]
    hits = [i for i, row in enumerate(visit) if passed[row]]
    expect_kept = [visit[i] for i in hits[:want]]
    expect_advance = hits[want] if len(hits) > want else n
    asked: list[int] = []

    def status_of(row: int) -> Status | None:
        asked.append(row)
        return None if passed[row] else Status(Code.UNSCHEDULABLE, "no")

    kept, rejected, advance = walk_few(status_of, order.tolist(), start, want)
    assert kept == expect_kept and advance == expect_advance
    assert [row for row, _ in rejected] == [row for row in visit[:advance] if not passed[row]]
    # the nodes after the one the walk stops at are never filtered
    assert asked == visit[: advance + 1] if advance < n else asked == visit
    if len(hits) > want:
        chosen, processed = first_passing(passed, order, False, start, want)
        assert order[chosen].tolist() == expect_kept and processed == expect_advance
