"""The parts preemption is built from: the nominator, budgets, the candidate criteria, Go's sort."""

from __future__ import annotations

import random

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.preemption import Candidate, parse_pdb, pick_candidates, split_by_pdb_violation
from kubesched.framework.status import Code, Status
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.extender_client import Victims
from kubesched.scheduler.preemption import extenders_filter
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


# -- extenders ----------------------------------------------------------------------------------------------
class FakeExtender:
    def __init__(self, keep: dict[str, list[str]] | None = None, fails: bool = False, ignorable: bool = False,
                 preempts: bool = True) -> None:
        self.keep, self.fails, self.ignorable, self.preempts = keep, fails, ignorable, preempts
        self.asked: list[dict[str, list[str]]] = []

    @property
    def name(self) -> str:
        return "fake"

    def supports_preemption(self) -> bool:
        return self.preempts

    def is_interested(self, pod: PodInfo) -> bool:
        return True

    def is_ignorable(self) -> bool:
        return self.ignorable

    def process_preemption(self, pod, victims, node_infos):  # type: ignore[no-untyped-def]
        self.asked.append({node: [p.name for p in v.pods] for node, v in victims.items()})
        if self.fails:
            raise RuntimeError("extender down")
        keep = self.keep if self.keep is not None else {n: [p.name for p in v.pods] for n, v in victims.items()}
        return {node: Victims([p for p in victims[node].pods if p.name in names], 0) for node, names in keep.items()}


def _candidates() -> list[Candidate]:
    return [_candidate("a", [10]), _candidate("b", [20])]


def test_extenders_narrow_the_candidates_in_turn():
    first, second = FakeExtender({"a": ["a-0"], "b": ["b-0"]}), FakeExtender({"b": ["b-0"]})
    kept = extenders_filter([first, second], None)(_pod("p"), _candidates())  # type: ignore[arg-type]
    assert [c.node for c in kept] == ["b"] and second.asked == [{"a": ["a-0"], "b": ["b-0"]}]


def test_an_extender_that_fails_fails_the_preemption_unless_ignorable():
    status = extenders_filter([FakeExtender(fails=True)], None)(_pod("p"), _candidates())  # type: ignore[arg-type]
    assert isinstance(status, Status) and status.code == Code.ERROR
    kept = extenders_filter([FakeExtender(fails=True, ignorable=True)], None)(_pod("p"), _candidates())  # type: ignore[arg-type]
    assert [c.node for c in kept] == ["a", "b"]


def test_a_node_left_without_victims_is_an_error_or_dropped_when_ignorable():
    empty = {"a": [], "b": ["b-0"]}
    status = extenders_filter([FakeExtender(empty)], None)(_pod("p"), _candidates())  # type: ignore[arg-type]
    assert isinstance(status, Status) and status.message == 'expected at least one victim pod on node "a"'
    kept = extenders_filter([FakeExtender(empty, ignorable=True)], None)(_pod("p"), _candidates())  # type: ignore[arg-type]
    assert [c.node for c in kept] == ["b"]


def test_the_evaluator_reports_no_candidate_when_extenders_keep_none():
    registry = in_tree_registry()
    objects = [{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}},
               {"kind": "Pod", "metadata": {"name": "low", "namespace": "default", "uid": "low"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
               {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "p"},
                "spec": {"priority": 10, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}]
    sim = Simulation(snapshot_from_objects([("t", o) for o in objects]),
                     parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY), registry)
    plugin = sim.scheduler.profiles["default-scheduler"].plugin("DefaultPreemption")
    plugin.evaluator.extenders = extenders_filter([FakeExtender({})], sim.scheduler.cache.snapshot())
    result = sim.run(max_attempts=1)
    assert result.outcomes["default/p"].message.endswith(" preemption: no candidate node for preemption")
