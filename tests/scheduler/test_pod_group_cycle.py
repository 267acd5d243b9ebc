"""Pod-group cycles end to end on a simulated cluster with the default profile (GenericWorkload
and GangScheduling on unless said): which pods one cycle takes and in what order (upstream's
``TestPodGroupInfoForPod``), one profile per group (``TestFrameworkForPodGroup``), the gang
gate, all-or-nothing binding and its messages, the PodGroupScheduled condition, placements,
the gates off, and SchedulerPopFromBackoffQ's retries of a failed gang.
"""

from __future__ import annotations

from typing import Any

from kubesched.framework.podgroups import QueuedPodGroupInfo
from kubesched.framework.queued_pod import QueuedPodInfo

from .podgroup_support import FakePodGroupPlugin, group, member, raw_group, raw_member, scripted_scheduler, simulate
from tests.helpers import node

WAITING = ("pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
           "one or more plugins asked to wait and no plugin rejected pod")


def nodes(count: int, cpu: str = "4", zones: int = 1) -> list[dict[str, Any]]:
    return [node(f"n{i}", cpu=cpu, zone=f"zone-{i % zones}") for i in range(count)]


def cycles(sim: Any) -> list[tuple[str, list[str]]]:
    return [(c.group, c.order) for c in sim.scheduler.group_cycles]


# -- which pods a cycle takes -------------------------------------------------------------
def test_a_cycle_takes_every_unscheduled_member_ordered_by_priority_then_queue_entry() -> None:
    sched, _ = scripted_scheduler(FakePodGroupPlugin(), groups=[group()])
    pods = [member("p1", priority=1), member("p2", priority=2), member("p3", priority=2), member("other", "pg2")]
    for p in pods:
        sched.on_pod_add(p)
    popped = sched.queue.pop()  # p2: the highest priority, first in
    assert popped is not None and popped.pod.name == "p2"
    info = sched._pod_group_info_for_pod(popped)
    assert isinstance(info, QueuedPodGroupInfo)
    assert [p.name for p in info.unscheduled_pods] == ["p2", "p3", "p1"]
    assert sched.queue.where("other") == "activeQ"


def test_members_not_waiting_in_the_queue_are_left_out() -> None:
    sched, _ = scripted_scheduler(FakePodGroupPlugin(), groups=[group()])
    p1, p2 = member("p1"), member("p2")
    sched.on_pod_add(p1)
    sched.cache.add_pod_group_member(p2)  # known to the group, never queued
    popped = sched.queue.pop()
    assert popped is not None
    info = sched._pod_group_info_for_pod(popped)
    assert info is not None and [p.name for p in info.unscheduled_pods] == ["p1"]


def test_a_group_the_cache_does_not_know_fails_its_pod_with_upstream_s_error() -> None:
    sched, cluster = scripted_scheduler(FakePodGroupPlugin(), groups=[group()])
    p1 = member("p1")
    sched.on_pod_add(p1)
    sched.cache.remove_pod_group_member(p1)
    sched.schedule_one()
    assert cluster.conditions["default/p1"] == (
        "SchedulerError", "error while retrieving pod group state: pod group state not found for pod group default/pg")


def test_all_members_of_one_group_must_share_a_profile() -> None:
    sched, cluster = scripted_scheduler(FakePodGroupPlugin(), groups=[group()])
    fwk = sched.profiles["default-scheduler"]
    assert sched._framework_for_pod_group(_info([member("a"), member("b")]))[0] is fwk
    _, problem = sched._framework_for_pod_group(_info([member("a"), member("b", scheduler_name="other")]))
    assert problem == ('all pods in a single pod group should have the same .spec.schedulerName set, '
                       'got: "other" and "default-scheduler"')
    _, problem = sched._framework_for_pod_group(_info([member("a", scheduler_name="nobody")]))
    assert problem == 'profile not found for scheduler name "nobody"'


def _info(pods: list[Any]) -> QueuedPodGroupInfo:
    info = QueuedPodGroupInfo("default", "pg")
    info.set_queued_pods([QueuedPodInfo(pod=p, timestamp=0.0, seq=i) for i, p in enumerate(pods)])
    return info


# -- gangs -------------------------------------------------------------------------------
def test_a_gang_that_fits_binds_whole_and_is_scheduled() -> None:
    sim, result = simulate(nodes(2), [raw_member(f"g{i}", "pg", cpu="2") for i in range(4)], [raw_group("pg", 4)])
    assert sorted(p for p, _ in result.placements) == [f"default/g{i}" for i in range(4)]
    # g3 completed the gang: released first, then the members it found waiting, in arrival order
    assert cycles(sim) == [("default/pg", ["default/g3", "default/g0", "default/g1", "default/g2"])]
    pg = sim.scheduler.pod_groups.pod_group("default", "pg")
    assert pg is not None and pg.condition("PodGroupScheduled") is not None
    assert pg.condition("PodGroupScheduled").status == "True"  # type: ignore[union-attr]


def test_a_gang_that_does_not_fit_binds_nothing() -> None:
    # Room for two of three 3-cpu members, tried g2 (it completed the gang), g0, g1: the two
    # that fit wait for minCount, the third fits nowhere.
    sim, result = simulate(nodes(2), [raw_member(f"g{i}", "pg", cpu="3") for i in range(3)], [raw_group("pg", 3)])
    assert result.placements == []
    messages = {key: o.message for key, o in result.outcomes.items()}
    assert messages["default/g2"] == WAITING and messages["default/g0"] == WAITING
    assert messages["default/g1"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    condition = sim.scheduler.pod_groups.pod_group("default", "pg").condition("PodGroupScheduled")  # type: ignore[union-attr]
    assert condition is not None and (condition.status, condition.reason, condition.message) == (
        "False", "Unschedulable", "pod group is unschedulable")


def test_gang_members_wait_at_the_gate_until_min_count_are_known_then_go_completing_pod_first() -> None:
    pods = [raw_member("g0", "pg"), raw_member("solo", None), raw_member("g1", "pg"), raw_member("g2", "pg")]
    sim, result = simulate(nodes(2), pods, [raw_group("pg", 3)])
    assert cycles(sim) == [("default/pg", ["default/g2", "default/g0", "default/g1"])]
    assert len(result.placements) == 4


def test_a_gang_short_of_members_stays_gated() -> None:
    sim, result = simulate(nodes(2), [raw_member("g0", "pg"), raw_member("g1", "pg")], [raw_group("pg", 3)])
    assert result.placements == [] and cycles(sim) == []
    assert result.outcomes["default/g0"].gated
    assert result.outcomes["default/g0"].message == "waiting for minCount pods from a gang to appear in scheduling queue"


def test_a_basic_group_binds_the_pods_that_fit() -> None:
    sim, result = simulate(nodes(1, cpu="2"), [raw_member(f"b{i}", "pg") for i in range(3)], [raw_group("pg")])
    assert sorted(p for p, _ in result.placements) == ["default/b0", "default/b1"]
    assert result.outcomes["default/b2"].message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert sim.scheduler.pod_groups.pod_group("default", "pg").condition("PodGroupScheduled").status == "True"  # type: ignore[union-attr]


def test_with_generic_workload_alone_groups_are_scheduled_in_cycles_without_a_gate() -> None:
    sim, result = simulate(nodes(2), [raw_member("g0", "pg"), raw_member("g1", "pg")], [raw_group("pg", 3)],
                           gates={"GenericWorkload": True})
    assert cycles(sim) == [("default/pg", ["default/g0", "default/g1"])]
    assert len(result.placements) == 2  # no Permit waits for minCount either


def test_with_generic_workload_off_pods_of_a_group_are_scheduled_alone() -> None:
    sim, result = simulate(nodes(2), [raw_member("g0", "pg"), raw_member("g1", "pg")], [raw_group("pg", 3)], gates={})
    assert cycles(sim) == [] and len(result.placements) == 2
    assert len(sim.scheduler.cache.pod_groups) == 0


# -- placements --------------------------------------------------------------------------
ZONE = "topology.kubernetes.io/zone"


def test_a_constrained_gang_lands_in_one_zone() -> None:
    gates = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
    sim, result = simulate(nodes(6, cpu="2", zones=2), [raw_member(f"g{i}", "pg", cpu="2") for i in range(3)],
                           [raw_group("pg", 3, ZONE)], gates)
    zones = {sim.scheduler.cache.nodes[n].node.labels[ZONE] for _, n in result.placements}
    assert len(result.placements) == 3 and len(zones) == 1
    [record] = sim.scheduler.group_cycles
    assert sorted((t.name, t.nodes, t.feasible) for t in record.placements) == [("zone-0", 3, True), ("zone-1", 3, True)]
    assert record.placement in ("zone-0", "zone-1")


def test_equal_placements_go_to_the_first_domain_unless_the_tie_break_is_random() -> None:
    gates = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}

    def chosen(tie_break: str, seed: int | None = None) -> str | None:
        sim, _ = simulate(nodes(4, cpu="4", zones=2), [raw_member(f"g{i}", "pg") for i in range(2)],
                          [raw_group("pg", 2, ZONE)], gates, tie_break=tie_break, seed=seed)
        [record] = sim.scheduler.group_cycles
        assert [t.score for t in record.placements][0] == record.placements[1].score  # a tie
        return record.placement

    assert chosen("heap") == chosen("name") == "zone-0"
    assert {chosen("random", seed) for seed in range(12)} == {"zone-0", "zone-1"}


def test_a_constrained_gang_that_fits_no_zone_binds_nothing() -> None:
    gates = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
    sim, result = simulate(nodes(4, cpu="2", zones=2), [raw_member(f"g{i}", "pg", cpu="2") for i in range(3)],
                           [raw_group("pg", 3, ZONE)], gates)
    assert result.placements == []
    condition = sim.scheduler.pod_groups.pod_group("default", "pg").condition("PodGroupScheduled")  # type: ignore[union-attr]
    assert condition is not None and condition.message == (
        "0/2 placements are available, first placement status: pod group is unschedulable")


# -- SchedulerPopFromBackoffQ ------------------------------------------------------------
def test_a_failed_gang_is_retried_from_backoff_only_after_the_cluster_changed() -> None:
    # g2 fits nowhere, so the gang fails; "late", of lower priority, binds after it: the
    # gang is retried once from backoffQ (upstream would retry it back to back) and fails again.
    pods = [raw_member("g0", "pg", cpu="1", priority=10), raw_member("g1", "pg", cpu="1", priority=10),
            raw_member("g2", "pg", cpu="8", priority=10), raw_member("late", None, cpu="1")]
    sim, result = simulate(nodes(2), pods, [raw_group("pg", 3)])
    assert [p for p, _ in result.placements] == ["default/late"]
    assert result.group_backoff_retries == {"default/pg": 1}
    assert [c.from_backoff for c in sim.scheduler.group_cycles] == [False, True]
    assert not result.livelocked


def test_a_failed_gang_with_nothing_else_to_do_is_not_retried() -> None:
    pods = [raw_member("g0", "pg"), raw_member("g1", "pg", cpu="8")]
    sim, result = simulate(nodes(1), pods, [raw_group("pg", 2)])
    assert result.group_backoff_retries == {} and len(sim.scheduler.group_cycles) == 1
    assert sim.scheduler.queue.where("g0") == "backoffQ"
    [record] = sim.scheduler.group_cycles
    assert record.status == "pod group is unschedulable" and record.condition == (
        "False", "Unschedulable", "pod group is unschedulable")
