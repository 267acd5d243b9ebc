"""Preemption for a whole pod group (workload-aware preemption), as upstream's
``podgrouppreemption_test.go`` specifies it: which victims ``PodGroupEvaluator`` chooses on the
whole cluster (``TestPodGroupEvaluator_SelectVictimsOnDomain``: the group's algorithm is
played by "blocking rules", a node giving the group ``capacity`` slots once the listed pods
are gone) and how victims compare (``TestMoreImportantVictim``); then the parts upstream
tests through them: the units victims are made of, budgets per unit, the preemptor's
priority and policy, and what the dry run leaves behind.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.framework.preemption import (
    NO_GROUP_VICTIMS,
    DisruptionBudget,
    PodGroupEvaluator,
    Victim,
    domain_victims,
    group_preemptor,
    more_important_victim,
    pod_group_priority,
    split_victims_by_pdb_violation,
)
from kubesched.framework.status import Code, Status
from kubesched.objects.nodeinfo import NodeInfo
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.objects.podgroup import PodGroup
from kubesched.objects.selectors import parse_label_selector

from ..helpers import make_node, pod

LOW, MID, HIGH = 10, 100, 1000


def victim_pod(name: str, node: str = "", priority: int = 0, group: str | None = None, start: int | None = None,
               labels: dict[str, str] | None = None, policy: str | None = None) -> PodInfo:
    raw = pod(name, uid=name, node_name=node or None, priority=priority, labels=labels or {})
    if group is not None:
        raw["spec"]["schedulingGroup"] = {"podGroupName": group}
    if policy is not None:
        raw["spec"]["preemptionPolicy"] = policy
    if start is not None:
        raw["status"] = {"startTime": f"1970-01-01T00:00:{start:02d}Z"}
    return parse_pod(raw)


def pod_group(name: str, mode: str | None = None, priority: int | None = None) -> PodGroup:
    return PodGroup("default", name, name, 1, "1", None, priority=priority, disruption_mode=mode)


def budget(labels: dict[str, str], allowed: int) -> DisruptionBudget:
    return DisruptionBudget("default", "pdb", parse_label_selector({"matchLabels": labels}, "spec.selector"),
                            allowed, frozenset())


@dataclass
class DryRun:
    """A ``DryRunSnapshot`` over node infos built by hand."""

    nodes: dict[str, NodeInfo]
    removed: list[str] = field(default_factory=list)

    def list(self) -> list[NodeInfo]:
        return list(self.nodes.values())

    def get(self, name: str) -> NodeInfo | None:
        return self.nodes.get(name)

    def remove_pod(self, pod: PodInfo) -> None:
        assert self.nodes[pod.node_name].remove_pod(pod), f"{pod.key} is not on {pod.node_name}"
        self.removed.append(pod.name)

    def add_pod(self, pod: PodInfo) -> None:
        self.nodes[pod.node_name].add_pod(pod)


def cluster(names: list[str], pods: list[PodInfo]) -> DryRun:
    nodes = {name: NodeInfo(node=make_node(name), row=i) for i, name in enumerate(names)}
    for p in pods:
        nodes[p.node_name].add_pod(p)
    return DryRun(nodes)


Rule = tuple[str, int, set[str]]  # (node, slots it gives, pods that must be gone first)


def blocking(dry: DryRun, needed: int, rules: list[Rule]) -> Any:
    """upstream's mockSchedulingFunc: the group fits when the rules whose blocking pods are all
    off their node give at least ``needed`` slots."""

    def schedule() -> Status | None:
        slots = 0
        for node, capacity, blockers in rules:
            present = {p.name for p in dry.nodes[node].pods.values()}
            if not present & blockers:
                slots += capacity
        return None if slots >= needed else Status(Code.UNSCHEDULABLE)

    return schedule


@dataclass
class Case:
    nodes: list[str]
    pods: list[PodInfo]
    groups: list[PodGroup]
    preemptor_priority: int
    preemptor_pods: list[PodInfo]
    rules: list[Rule]
    victims: set[str]
    code: Code = Code.SUCCESS
    pdbs: list[DisruptionBudget] = field(default_factory=list)


def _preemptor(*policies: str | None, priority: int = HIGH) -> list[PodInfo]:
    return [victim_pod(f"p-{i}", priority=priority, policy=p) for i, p in enumerate(policies, 1)]


CASES = {
    "Mix of no-group and single-pod-groups": Case(
        ["node1", "node2", "node3"],
        [victim_pod("p1", "node1", LOW), victim_pod("p2", "node2", LOW, "pg1"), victim_pod("p3", "node3", LOW, "pg2")],
        [pod_group("pg1", "Pod"), pod_group("pg2", "Pod")], HIGH, _preemptor(None),
        [("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})],
        {"p1"}),  # p1 is less important than p2: it is not part of a pod group
    "Priority: Shared group vs no group": Case(
        ["node1", "node2", "node3"],
        [victim_pod("p1", "node1", LOW, "pg1", start=1), victim_pod("p2", "node2", LOW, "pg1", start=0),
         victim_pod("p3", "node3", MID)],
        [pod_group("pg1", "Pod")], HIGH, _preemptor(None),
        [("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})],
        {"p1"}),  # p1 started later than p2
    "Shared Group: Preempt separately": Case(
        ["node1", "node2"],
        [victim_pod("p1", "node1", LOW, "pg1", start=1), victim_pod("p2", "node2", LOW, "pg1", start=0)],
        [pod_group("pg1", "Pod")], HIGH, _preemptor(None),
        [("node1", 1, {"p1"}), ("node2", 1, {"p2"})],
        {"p1"}),
    "Complex Mixed: Shared, different, and no groups": Case(
        ["node1", "node2", "node3", "node4", "node5"],
        [victim_pod("p1", "node1", LOW, "pg1", start=2), victim_pod("p2", "node2", LOW, "pg1", start=1),
         victim_pod("p3", "node3", LOW, "pg2", start=0), victim_pod("p4", "node4", MID),
         victim_pod("p5", "node5", HIGH, "pg3", start=0)],
        [pod_group("pg1", "Pod"), pod_group("pg2", "Pod"), pod_group("pg3", "Pod")], HIGH, _preemptor(None, None, None),
        [(f"node{i}", 1, {f"p{i}"}) for i in range(1, 6)],
        {"p1", "p2", "p3"}),
    "PDB: Mixed groups": Case(
        ["node1", "node2"],
        [victim_pod("victim-pdb", "node1", LOW, "pg1", labels={"app": "foo"}), victim_pod("victim-no-pdb", "node2", LOW, "pg1")],
        [], HIGH, _preemptor(None),
        [("node1", 1, {"victim-pdb"}), ("node2", 1, {"victim-no-pdb"})],
        {"victim-no-pdb"}, pdbs=[budget({"app": "foo"}, 0)]),
    "PodGroup with PreemptNever does not perform preemption": Case(
        ["node1", "node2", "node3"],
        [victim_pod("p1", "node1", LOW), victim_pod("p2", "node2", LOW, "pg1"), victim_pod("p3", "node3", LOW, "pg2")],
        [], HIGH, _preemptor("Never", None),
        [("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})],
        set(), Code.UNSCHEDULABLE),
    "Preempt single lower priority pod": Case(
        ["node1"], [victim_pod("p1", "node1", LOW)], [], HIGH, _preemptor(None),
        [("node1", 1, {"p1"})], {"p1"}),
    "Priority: Prefer lower priority victim": Case(
        ["node1"], [victim_pod("p1", "node1", LOW), victim_pod("p2", "node1", MID), victim_pod("p3", "node1", HIGH)],
        [], HIGH, _preemptor(None),
        [("node1", 1, {"p1"}), ("node1", 1, {"p2"}), ("node1", 1, {"p3"})], {"p1"}),
    "Efficiency: Preempt minimum number of victims": Case(
        ["node1"], [victim_pod(f"p{i}", "node1", LOW) for i in range(1, 5)], [], HIGH, _preemptor(None),
        [("node1", 1, {"p1", "p2"}), ("node1", 1, {"p1"})], {"p1"}),
    "PDB: Prefer non-violating victim": Case(
        ["node1"], [victim_pod("victim-pdb", "node1", LOW, labels={"app": "foo"}), victim_pod("victim-no-pdb", "node1", LOW)],
        [], HIGH, _preemptor(None),
        [("node1", 1, {"victim-pdb"}), ("node1", 1, {"victim-no-pdb"})],
        {"victim-no-pdb"}, pdbs=[budget({"app": "foo"}, 0)]),
    "PodGroup with PreemptNever does not perform preemption (groups with priorities)": Case(
        ["node1", "node2", "node3"],
        [victim_pod("p1", "node1", LOW), victim_pod("p2", "node2", LOW, "pg1"), victim_pod("p3", "node3", LOW, "pg2")],
        [pod_group("pg1", "Pod", LOW), pod_group("pg2", "Pod", LOW)], HIGH, _preemptor("Never", None),
        [("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})],
        set(), Code.UNSCHEDULABLE),
    "PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible": Case(
        ["node1"], [victim_pod("p1", "node1", LOW, labels={"app": "foo"}), victim_pod("p2", "node1", MID, labels={"app": "foo"})],
        [], HIGH, _preemptor(None),
        [("node1", 1, {"p1"}), ("node1", 1, {"p2"})], {"p1"}, pdbs=[budget({"app": "foo"}, 0)]),
    "PodGroup: Preempt group as a whole": Case(
        ["node1", "node2"], [victim_pod("p1", "node1", LOW, "pg1"), victim_pod("p2", "node2", LOW, "pg1")],
        [pod_group("pg1", "PodGroup", LOW)], HIGH, _preemptor(None),
        [("node1", 1, {"p1"})], {"p1", "p2"}),
    "PodGroup: Prefer single pod over podGroup for preemption candidate": Case(
        ["node1"], [victim_pod("p1", "node1", LOW), victim_pod("g1-1", "node1", LOW, "pg1"), victim_pod("g1-2", "node1", LOW, "pg1")],
        [pod_group("pg1", "PodGroup", LOW)], HIGH, _preemptor(None),
        [("node1", 1, {"g1-1", "g1-2"}), ("node1", 1, {"p1"})], {"p1"}),
    "PodGroup: Preempt group as a whole on single node": Case(
        ["node1"], [victim_pod("g1-1", "node1", LOW, "pg1"), victim_pod("g1-2", "node1", LOW, "pg1"), victim_pod("p1", "node1", MID)],
        [pod_group("pg1", "PodGroup", LOW)], HIGH, _preemptor(None),
        [("node1", 1, {"g1-1"})], {"g1-1", "g1-2"}),
    "PDB: Unit violation if any member violates": Case(
        ["node1"], [victim_pod("g1-1", "node1", LOW, "pg1", labels={"app": "foo"}), victim_pod("g1-2", "node1", LOW, "pg1"),
                    victim_pod("p1", "node1", LOW)],
        [pod_group("pg1", "PodGroup", LOW)], HIGH, _preemptor(None),
        [("node1", 1, {"g1-1"}), ("node1", 1, {"p1"})], {"p1"}, pdbs=[budget({"app": "foo"}, 0)]),
    "PodGroup: Prefer preempting single pod over group of same priority": Case(
        ["node1"], [victim_pod("p1", "node1", LOW), victim_pod("g1-1", "node1", LOW, "pg1"), victim_pod("g1-2", "node1", LOW, "pg1")],
        [pod_group("pg1", "PodGroup", LOW)], HIGH, _preemptor(None),
        [("node1", 1, {"g1-1", "g1-2"}), ("node1", 1, {"p1"})], {"p1"}),
    "Failure: Cannot preempt the victim with higher priority": Case(
        ["node1"], [victim_pod("p1", "node1", HIGH)], [], MID, _preemptor(None, priority=MID),
        [("node1", 0, {"p1"})], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    "Failure: Cannot preempt if node is empty": Case(
        ["node1"], [], [], MID, _preemptor(None, priority=MID), [], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    "Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group": Case(
        ["node1", "node2"], [victim_pod("p1", "node1", HIGH, "pg1"), victim_pod("p2", "node2", HIGH, "pg1")],
        [pod_group("pg1", "PodGroup", MID)], HIGH, _preemptor(None),
        [("node1", 1, {"p1"})], {"p1", "p2"}),
    "Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group": Case(
        ["node1", "node2"], [victim_pod("p1", "node1", LOW, "pg1"), victim_pod("p2", "node2", LOW, "pg1")],
        [pod_group("pg1", "PodGroup", MID)], MID, _preemptor(None, priority=MID),
        [("node1", 1, {"p1"})], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    "Priority divergence: preemptor PodGroup has higher priority than the Pod from preemptor PodGroup": Case(
        ["node1", "node2"], [victim_pod("p1", "node1", MID, "pg1"), victim_pod("p2", "node2", MID, "pg1")],
        [pod_group("pg1", "PodGroup", MID)], HIGH, _preemptor(None, priority=LOW),
        [("node1", 1, {"p1"})], {"p1", "p2"}),
    "Priority divergence: preemptor PodGroup has lower priority than the Pod from preemptor PodGroup": Case(
        ["node1", "node2"], [victim_pod("p1", "node1", MID, "pg1"), victim_pod("p2", "node2", MID, "pg1")],
        [pod_group("pg1", "PodGroup", MID)], LOW, _preemptor(None, priority=HIGH),
        [("node1", 1, {"p1"})], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_select_victims_on_the_cluster(case: Case) -> None:
    dry = cluster(case.nodes, case.pods)
    groups = {g.name: g for g in case.groups}
    evaluator = PodGroupEvaluator(lambda ns, name: groups.get(name), lambda: case.pdbs)
    preemptor = pod_group("preemptor-pg", priority=case.preemptor_priority)
    victims, status = evaluator.select_victims(preemptor, case.preemptor_pods,
                                               blocking(dry, len(case.preemptor_pods), case.rules), dry)
    assert (status.code if status is not None else Code.SUCCESS) == case.code
    assert {v.name for v in victims} == case.victims


# -- TestMoreImportantVictim ---------------------------------------------------------
def unit(priority: int, *groups: str | None, start: float = math.inf) -> Victim:
    pods = [victim_pod(f"v{i}", "n", priority, g) for i, g in enumerate(groups)]
    if start != math.inf:
        pods = [p.copy_with(start_time=start) for p in pods]
    return Victim(pods, priority)


NOW, BEFORE = 1000.0, 500.0


@pytest.mark.parametrize("a, b, want", [
    pytest.param(Victim([], 20), Victim([], 10), True, id="vi1 has higher priority"),
    pytest.param(Victim([], 10), Victim([], 20), False, id="vi2 has higher priority"),
    pytest.param(unit(10, "pg"), unit(10, None), True, id="vi1 is PG, vi2 is Pod, same priority"),
    pytest.param(unit(10, None), unit(10, "pg"), False, id="vi1 is Pod, vi2 is PG, same priority"),
    pytest.param(unit(10, None, start=BEFORE), unit(10, None, start=NOW), True, id="both Pods, vi1 older"),
    pytest.param(unit(10, None, start=NOW), unit(10, None, start=BEFORE), False, id="both Pods, vi2 older"),
    pytest.param(unit(10, "pg", "pg"), unit(10, "pg"), True, id="both PGs, vi1 larger"),
    pytest.param(unit(10, "pg"), unit(10, "pg", "pg"), False, id="both PGs, vi2 larger"),
    pytest.param(unit(10, "pg", "pg", start=BEFORE), unit(10, "pg", "pg", start=NOW), True, id="both PGs, same size, vi1 older"),
    pytest.param(unit(10, "pg", "pg", start=NOW), unit(10, "pg", "pg", start=BEFORE), False, id="both PGs, same size, vi2 older"),
])
def test_more_important_victim(a: Victim, b: Victim, want: bool) -> None:
    assert more_important_victim(a, b) is want


# -- the units, the budgets, the preemptor -------------------------------------------
def test_a_pod_group_in_pod_group_disruption_mode_is_one_victim_with_the_group_s_priority() -> None:
    dry = cluster(["n1", "n2"], [victim_pod("a", "n1", 5, "g"), victim_pod("b", "n2", 5, "g"), victim_pod("c", "n2", 7)])
    groups = {"g": pod_group("g", "PodGroup", 3)}
    victims = domain_victims(dry.list(), lambda ns, name: groups.get(name))
    assert [([p.name for p in v.pods], v.priority, sorted(v.nodes)) for v in victims] == [
        (["a", "b"], 3, ["n1", "n2"]), (["c"], 7, ["n2"])]


@pytest.mark.parametrize("groups", [{"g": pod_group("g", "Pod", 3)}, {"g": pod_group("g", None, 3)}, {}],
                         ids=["disruption mode Pod", "no disruption mode", "PodGroup not found"])
def test_members_of_other_groups_are_victims_one_by_one_with_their_own_priority(groups: dict[str, PodGroup]) -> None:
    dry = cluster(["n1"], [victim_pod("a", "n1", 5, "g"), victim_pod("b", "n1", 6, "g")])
    victims = domain_victims(dry.list(), lambda ns, name: groups.get(name))
    assert [([p.name for p in v.pods], v.priority, v.is_pod_group) for v in victims] == [
        (["a"], 5, True), (["b"], 6, True)]


def test_a_unit_violates_a_budget_when_one_of_its_pods_does_and_its_later_pods_use_nothing_up() -> None:
    guarded = [victim_pod(n, "n", LOW, "g", labels={"app": "db"}) for n in ("a", "b")]
    whole = Victim(guarded, LOW)
    single = Victim([victim_pod("c", "n", LOW, labels={"app": "db"})], LOW)
    violating, fine = split_victims_by_pdb_violation([whole, single], [budget({"app": "db"}, 1)])
    # a uses the one disruption, b goes below zero (the unit violates); c goes further below.
    assert (violating, fine) == ([whole, single], [])
    violating, fine = split_victims_by_pdb_violation([whole, single], [budget({"app": "db"}, 2)])
    assert (violating, fine) == ([single], [whole])


def test_the_preemptor_has_its_group_s_priority_and_never_preempts_when_one_pod_says_never() -> None:
    assert pod_group_priority(pod_group("g")) == 0 and pod_group_priority(pod_group("g", priority=7)) == 7
    pods = [victim_pod("a", priority=1), victim_pod("b", priority=1, policy="Never")]
    preemptor = group_preemptor(pod_group("g", priority=7), pods)
    assert (preemptor.priority, preemptor.preemption_policy) == (7, "Never")
    assert group_preemptor(pod_group("g"), pods[:1]).preemption_policy == "PreemptLowerPriority"


def test_no_victim_at_all_is_unresolvable_with_upstream_s_message() -> None:
    dry = cluster(["n1"], [victim_pod("a", "n1", HIGH)])
    victims, status = PodGroupEvaluator(lambda ns, n: None, list).select_victims(
        pod_group("pg", priority=MID), [victim_pod("p", priority=MID)], lambda: None, dry)
    assert victims == [] and status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_GROUP_VICTIMS)


def test_when_the_group_does_not_fit_even_without_every_victim_the_dry_run_s_status_is_the_answer() -> None:
    dry = cluster(["n1"], [victim_pod("a", "n1", LOW)])
    answer = Status(Code.UNSCHEDULABLE, "0/1 nodes are available")
    victims, status = PodGroupEvaluator(lambda ns, n: None, list).select_victims(
        pod_group("pg", priority=HIGH), [victim_pod("p", priority=HIGH)], lambda: answer, dry)
    assert victims == [] and status is answer


def test_every_victim_leaves_before_the_first_dry_run_and_the_reprieved_come_back() -> None:
    dry = cluster(["n1"], [victim_pod("a", "n1", LOW), victim_pod("b", "n1", MID), victim_pod("keep", "n1", HIGH)])
    seen: list[set[str]] = []

    def schedule() -> Status | None:
        seen.append({p.name for p in dry.nodes["n1"].pods.values()})
        return None if len(seen[-1]) <= 2 else Status(Code.UNSCHEDULABLE)

    victims, status = PodGroupEvaluator(lambda ns, n: None, list).select_victims(
        pod_group("pg", priority=HIGH), [victim_pod("p", priority=HIGH)], schedule, dry)
    assert status is None and [v.name for v in victims] == ["a"]
    # everything below the preemptor gone; then b (more important) tried back first and kept, a not.
    assert seen == [{"keep"}, {"keep", "b"}, {"keep", "b", "a"}]


def test_equally_important_victims_go_in_the_cluster_s_order_unless_a_random_source_shuffles_them() -> None:
    pods = [victim_pod(f"v{i}", "n1", LOW) for i in range(6)]

    def first_reprieved(evaluator: PodGroupEvaluator) -> str:
        dry = cluster(["n1"], pods)
        tried: list[str] = []
        original_add = dry.add_pod

        def add(pod: PodInfo) -> None:
            tried.append(pod.name)
            original_add(pod)

        dry.add_pod = add  # type: ignore[method-assign]
        evaluator.select_victims(pod_group("pg", priority=HIGH), [victim_pod("p", priority=HIGH)], lambda: None, dry)
        return tried[0]

    assert first_reprieved(PodGroupEvaluator(lambda ns, n: None, list)) == "v0"
    picks = {first_reprieved(PodGroupEvaluator(lambda ns, n: None, list, random.Random(seed))) for seed in range(20)}
    assert len(picks) > 1
