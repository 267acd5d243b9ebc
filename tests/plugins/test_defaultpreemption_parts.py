"""The parts preemption is built from: the nominator, budgets, the candidate criteria, Go's sort."""

from __future__ import annotations

import random

from kubesched.framework.preemption import Candidate, parse_pdb, pick_candidates, split_by_pdb_violation
from kubesched.framework.preemption.gosort import go_sort_slice
from kubesched.objects.pod import parse_pod
from kubesched.objects.pod import PodInfo
from kubesched.queue.nominator import Nominator


def _pod(name: str, priority: int = 0, labels: dict | None = None, nominated: str = "", started: str | None = None) -> PodInfo:
    raw = {"metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels or {}},
           "spec": {"priority": priority, "containers": []}, "status": {}}
    if nominated:
        raw["status"]["nominatedNodeName"] = nominated
    if started:
        raw["status"]["startTime"] = started
    return parse_pod(raw)


def _pdb(labels: dict | None, allowed: int, disrupted: dict | None = None, namespace: str = "default") -> dict:
    spec = {"selector": {"matchLabels": labels}} if labels is not None else {}
    return {"metadata": {"name": "b", "namespace": namespace}, "spec": spec,
            "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}}}


# -- nominator ------------------------------------------------------------------------------
def test_a_nomination_made_by_the_scheduler_survives_updates_that_do_not_carry_it():
    nominator, p = Nominator(), _pod("p")
    nominator.add(p, "n1")
    nominator.update(p, p.copy_with(labels={"x": "y"}))
    assert [q.key for q in nominator.nominated_pods_for_node("n1")] == ["default/p"]


def test_an_update_clearing_nominated_node_name_drops_the_nomination():
    nominator, p = Nominator(), _pod("p", nominated="n1")
    nominator.add(p)
    nominator.update(p, p.copy_with(nominated_node_name=""))
    assert nominator.nominated_node_names() == []


def test_an_update_moving_the_nomination_moves_the_pod():
    nominator, p = Nominator(), _pod("p", nominated="n1")
    nominator.add(p)
    nominator.update(p, p.copy_with(nominated_node_name="n2"))
    assert (nominator.nominated_pods_for_node("n1"), nominator.node_of("p")) == ([], "n2")


def test_deleting_a_pod_forgets_its_nomination():
    nominator, p = Nominator(), _pod("p")
    nominator.add(p, "n1")
    nominator.delete(p)
    assert len(nominator) == 0 and nominator.nominated_node_names() == []


# -- budgets -----------------------------------------------------------------------------------
def test_each_covered_pod_uses_up_one_disruption_and_the_rest_violate():
    pods = [_pod(n, labels={"app": "db"}) for n in ("a", "b", "c")]
    violating, fine = split_by_pdb_violation(pods, [parse_pdb(_pdb({"app": "db"}, 1))])
    assert ([p.name for p in fine], [p.name for p in violating]) == (["a"], ["b", "c"])


def test_a_pod_already_disrupted_does_not_use_up_the_budget():
    pods = [_pod("a", labels={"app": "db"}), _pod("b", labels={"app": "db"})]
    violating, fine = split_by_pdb_violation(pods, [parse_pdb(_pdb({"app": "db"}, 1, {"a": "2024-01-01T00:00:00Z"}))])
    assert ([p.name for p in fine], violating) == (["a", "b"], [])


def test_budgets_with_no_or_empty_selector_or_in_another_namespace_cover_nothing():
    pods = [_pod("a", labels={"app": "db"})]
    for budget in (_pdb(None, 0), _pdb({}, 0), _pdb({"app": "db"}, 0, namespace="other")):
        assert split_by_pdb_violation(pods, [parse_pdb(budget)])[0] == []


def test_a_pod_without_labels_violates_no_budget():
    # The selector would match it (no "app" label), but upstream skips pods without labels.
    budget = {"metadata": {"name": "b", "namespace": "default"},
              "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}},
              "status": {"disruptionsAllowed": 0}}
    unlabelled, labelled = _pod("a"), _pod("b", labels={"tier": "x"})
    violating, fine = split_by_pdb_violation([unlabelled, labelled], [parse_pdb(budget)])
    assert ([p.name for p in fine], [p.name for p in violating]) == (["a"], ["b"])


# -- candidate criteria ----------------------------------------------------------------------------
def _candidate(node: str, priorities: list[int], violations: int = 0, started: str = "2024-01-01T00:00:00Z") -> Candidate:
    return Candidate(node, [_pod(f"{node}-{i}", p, started=started) for i, p in enumerate(sorted(priorities, reverse=True))],
                     violations)


def test_criteria_apply_in_upstreams_order():
    assert [c.node for c in pick_candidates([_candidate("a", [1], 1), _candidate("b", [50])])] == ["b"]
    assert [c.node for c in pick_candidates([_candidate("a", [50]), _candidate("b", [10, 10, 10])])] == ["b"]
    assert [c.node for c in pick_candidates([_candidate("a", [10, 10]), _candidate("b", [10, 5])])] == ["b"]
    assert [c.node for c in pick_candidates([_candidate("a", [10, -5]), _candidate("b", [10])])] == ["b"]


def test_negative_priorities_are_summed_after_the_offset_so_fewer_victims_still_win():
    # Upstream adds 2^31 to each priority: two victims at -10 sum higher than one at -10.
    assert [c.node for c in pick_candidates([_candidate("a", [-10, -10]), _candidate("b", [-10])])] == ["b"]


def test_the_latest_start_among_the_most_important_victims_breaks_remaining_ties():
    early, late = _candidate("a", [10], started="2024-01-01T00:00:00Z"), _candidate("b", [10], started="2024-02-01T00:00:00Z")
    assert [c.node for c in pick_candidates([early, late])] == ["b"]
    assert [c.node for c in pick_candidates([late, _candidate("c", [10], started="2024-02-01T00:00:00Z")])] == ["b", "c"]


# -- Go's sort -------------------------------------------------------------------------------------------
def test_go_sort_slice_sorts():
    rng = random.Random(7)
    for n in range(0, 200, 7):
        xs = [rng.randint(0, 9) for _ in range(n)]
        ys = list(xs)
        go_sort_slice(ys, lambda a, b: a < b)
        assert ys == sorted(xs)


def test_go_sort_slice_is_stable_up_to_twelve_and_not_beyond():
    # Insertion sort below 13 elements keeps equal keys in order; pdqsort above may not.
    short = [(0, i) for i in range(12)]
    go_sort_slice(short, lambda a, b: a[0] < b[0])
    assert short == [(0, i) for i in range(12)]
    long = [(i % 2, i) for i in range(40)]
    go_sort_slice(long, lambda a, b: a[0] < b[0])
    assert [k for k, _ in long] == [0] * 20 + [1] * 20
    assert [i for k, i in long if k == 0] != list(range(0, 40, 2))
