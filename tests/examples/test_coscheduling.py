"""Coscheduling, specified by what a user sees: which pods bind, which do not and why,
and what the nodes hold afterwards.

The headline scenarios run ``kubesched simulate`` in a subprocess with the plugins
found through their entry points (``installed``); the others run the same simulation
in process, which is quicker and shows the scheduler's insides too (waiting pods,
Unreserve, changes to the cluster after a run). Scenarios from scheduler-plugins'
issue tracker name their issue.
"""

from __future__ import annotations

import pytest

from kubesched.framework import CycleState
from kubesched.framework.config import ConfigError
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod

from .support import Cli, config, cpu_node, gpu_node, member, plain, pod_group, simulate

TWO_NODES = [cpu_node("n0"), cpu_node("n1")]  # 4 cpu each
EARLY, LATE = "2025-01-01T00:00:00Z", "2025-01-01T01:00:00Z"


# -- a group binds whole, or not at all ------------------------------------------------


def test_a_complete_group_binds_together(installed: Cli):
    run = installed.simulate(TWO_NODES + [pod_group("a", 3)] + [member(f"a-{i}", "a") for i in range(3)], config())
    assert run.returncode == 0, run.stderr
    assert sorted(run.placements) == ["default/a-0", "default/a-1", "default/a-2"]
    assert "3 scheduled, 0 unschedulable" in run.summary


def test_members_wait_at_permit_until_the_group_has_its_quorum():
    run = simulate(TWO_NODES + [pod_group("a", 3)] + [member(f"a-{i}", "a") for i in range(3)])
    # Each member was placed while nothing of the group was bound; all three bound after the third.
    assert [(a.pod, a.bound_before) for a in run.attempts] == [("default/a-0", 0), ("default/a-1", 0), ("default/a-2", 0)]
    assert all(a.node is not None for a in run.attempts)
    assert len(run.sim.cluster.bindings) == 3
    assert len(run.sim.scheduler.waiting_pods) == 0


def test_a_partial_group_is_rejected_in_prefilter_with_upstreams_message(installed: Cli):
    run = installed.simulate(TWO_NODES + [pod_group("a", 3)] + [member(f"a-{i}", "a") for i in range(2)], config())
    assert run.returncode == 0, run.stderr
    assert run.placements == {}
    messages = run.unschedulable()
    assert sorted(messages) == ["default/a-0", "default/a-1"]
    for i in range(2):
        reason = f"pre-filter pod a-{i} cannot find enough sibling pods, current pods number: 2, minMember of group: 3"
        assert messages[f"default/a-{i}"].startswith(f"0/2 nodes are available: {reason}.")
        assert run.attempts[i]["preFilter"] == {"plugin": "Coscheduling", "code": "UnschedulableAndUnresolvable",
                                                "reasons": [reason]}


def test_a_group_that_cannot_complete_times_out_and_gives_its_nodes_back(installed: Cli):
    # scheduler-plugins#713: 9 of 10 members fit and wait, the 10th fits nowhere. A gap of one
    # member in ten (10%) is small enough for PostFilter to leave the nine waiting, so they hold
    # their nodes until the PodGroup's scheduleTimeoutSeconds (30s, on the virtual clock).
    nodes = [cpu_node(f"n{i}", cpu="3") for i in range(3)]
    run = installed.simulate(nodes + [pod_group("g", 10, timeout=30)] + [member(f"g-{i}", "g") for i in range(10)], config())
    assert run.returncode == 0, run.stderr
    assert run.placements == {}
    assert run.virtual_seconds == 30
    assert run.requested_cpu() == {"n0": "0", "n1": "0", "n2": "0"}


def test_every_waiting_member_is_rejected_and_unreserved_at_the_timeout():
    nodes = [cpu_node(f"n{i}", cpu="3") for i in range(3)]
    run = simulate(nodes + [pod_group("g", 10, timeout=30)] + [member(f"g-{i}", "g") for i in range(10)])
    rejections = {pod: message for pod, kind, reason, message in run.sim.cluster.events if kind == "Warning"}
    assert rejections["default/g-0"] == "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Coscheduling."
    for i in range(1, 9):
        assert rejections[f"default/g-{i}"] == "0/1 nodes are available: 1 rejection in Unreserve."
    assert run.sim.cluster.bindings == []
    assert len(run.sim.scheduler.waiting_pods) == 0
    assert run.held_cpu() == 0


def test_the_permit_timeout_defaults_to_the_plugins_argument():
    nodes = [cpu_node(f"n{i}", cpu="3") for i in range(3)]
    run = simulate(nodes + [pod_group("g", 10)] + [member(f"g-{i}", "g") for i in range(10)],
                   config(coscheduling={"permitWaitingTimeSeconds": 45}))
    assert run.placements == {}
    assert run.result.virtual_seconds == 45


# -- groups competing for the same room ---------------------------------------------------


def test_two_groups_competing_for_room_for_one_bind_one_whole_and_nothing_of_the_other(installed: Cli):
    # Two nodes with room for two 3-cpu pods; both groups need two. The older group goes first.
    objects = TWO_NODES + [pod_group("b", 2, created=LATE), pod_group("a", 2, created=EARLY)]
    objects += [member(f"b-{i}", "b", cpu="3") for i in range(2)] + [member(f"a-{i}", "a", cpu="3") for i in range(2)]
    run = installed.simulate(objects, config())
    assert run.returncode == 0, run.stderr
    assert sorted(run.placements) == ["default/a-0", "default/a-1"]
    assert set(run.unschedulable()) == {"default/b-0", "default/b-1"}
    assert run.requested_cpu() == {"n0": "3", "n1": "3"}
    assert len(run.attempts) <= 6  # settled: no group retried in a loop


def test_groups_whose_members_interleave_in_the_queue_do_not_deadlock(installed: Cli):
    # scheduler-plugins#117: a-0 and b-0 (high priority) take both nodes and wait for a-1 and
    # b-1, which fit nowhere. PostFilter rejects the waiting member of the first group to
    # fail, its node goes to the other group, which completes.
    objects = TWO_NODES + [pod_group("a", 2, created=EARLY), pod_group("b", 2, created=LATE)]
    objects += [member("a-0", "a", cpu="3", priority=10), member("b-0", "b", cpu="3", priority=10),
                member("a-1", "a", cpu="3"), member("b-1", "b", cpu="3")]
    run = installed.simulate(objects, config())
    assert run.returncode == 0, run.stderr
    # Interleaved: a-0 and b-0 each took a node and waited at Permit at the same time. (Records
    # are written when an attempt's binding cycle ends, so the file's order is not the queue's.)
    first = {a["pod"]: a for a in run.attempts if a["attempt"] == 1}
    assert {first["default/a-0"]["chosen"], first["default/b-0"]["chosen"]} == {"n0", "n1"}
    assert first["default/a-0"]["permit"]["code"] == first["default/b-0"]["permit"]["code"] == "Wait"
    assert sorted(run.placements) in (["default/a-0", "default/a-1"], ["default/b-0", "default/b-1"])
    assert run.requested_cpu() == {"n0": "3", "n1": "3"}


def test_a_group_fragmented_over_the_nodes_is_not_retried_forever(installed: Cli):
    # scheduler-plugins#429: 12 GPUs free in all (minResources passes), but only one node has 4
    # free. Upstream places a member, rejects it when the next fits nowhere, activates the
    # siblings, and so on forever; here the group waits for the cluster to change.
    nodes = [gpu_node("g0", 6), gpu_node("g1", 2), gpu_node("g2", 2), gpu_node("g3", 2)]
    objects = nodes + [pod_group("t", 3, min_resources={"nvidia.com/gpu": "12"})] + [member(f"t-{i}", "t", gpu=4) for i in range(3)]
    run = installed.simulate(objects, config())
    assert run.returncode == 0, run.stderr
    assert run.placements == {}
    assert len(run.attempts) <= 6
    assert run.unschedulable()["default/t-2"].startswith(
        "0/4 nodes are available: podGroup default/t failed and nothing it could use has changed since."
    )


def test_a_failed_group_is_tried_again_when_room_frees_up():
    objects = TWO_NODES + [pod_group("a", 2, created=EARLY), pod_group("b", 2, created=LATE)]
    objects += [member(f"a-{i}", "a", cpu="3") for i in range(2)] + [member(f"b-{i}", "b", cpu="3") for i in range(2)]
    run = simulate(objects)
    assert sorted(run.placements) == ["default/a-0", "default/a-1"]
    for bound, _ in list(run.sim.cluster.bindings):  # group a finishes: its pods are deleted
        run.sim.scheduler.on_pod_delete(bound)
    run.schedule_ready()
    assert sorted(run.placements) == ["default/a-0", "default/a-1", "default/b-0", "default/b-1"]


def test_a_failed_group_is_tried_again_when_a_node_is_added():
    objects = TWO_NODES + [pod_group("a", 2, created=EARLY), pod_group("b", 2, created=LATE)]
    objects += [member(f"a-{i}", "a", cpu="3") for i in range(2)] + [member(f"b-{i}", "b", cpu="3") for i in range(2)]
    run = simulate(objects)
    assert sorted(run.placements) == ["default/a-0", "default/a-1"]
    run.sim.scheduler.on_node_add(parse_node(cpu_node("n2", cpu="8")))
    run.schedule_ready()
    assert run.placements["default/b-0"] == run.placements["default/b-1"] == "n2"


def test_pod_group_backoff_rejects_a_failed_group_in_prefilter():
    objects = TWO_NODES + [pod_group("a", 2, created=EARLY), pod_group("b", 2, created=LATE)]
    objects += [member(f"a-{i}", "a", cpu="3") for i in range(2)] + [member(f"b-{i}", "b", cpu="3") for i in range(2)]
    run = simulate(objects, config(coscheduling={"podGroupBackoffSeconds": 20}))
    assert run.result.outcomes["default/b-1"].message.startswith("0/2 nodes are available: podGroup default/b failed recently.")


# -- QueueSort ---------------------------------------------------------------------------------


def test_queue_sort_keeps_each_groups_members_together(installed: Cli):
    # Listed interleaved; ordered by priority, then the PodGroup's (or a plain pod's) creation
    # time, then the group's name, then the pod's.
    objects = [cpu_node("n0", cpu="16"), pod_group("a", 3, created="2025-01-01T00:00:00Z"),
               pod_group("b", 2, created="2025-01-01T01:00:00Z")]
    objects += [member("b-1", "b"), member("a-2", "a"), plain("x", created="2025-01-01T00:30:00Z"), member("b-0", "b"),
                member("a-0", "a"), member("a-1", "a"), plain("urgent", created="2025-01-01T02:00:00Z")]
    objects[-1]["spec"]["priority"] = 100
    run = installed.simulate(objects, config())
    assert run.returncode == 0, run.stderr
    assert run.order() == ["default/urgent", "default/a-0", "default/a-1", "default/a-2", "default/x",
                           "default/b-0", "default/b-1"]
    assert len(run.placements) == 7


# -- the PodGroup ---------------------------------------------------------------------------------


def test_a_pod_whose_pod_group_does_not_exist_is_rejected_in_prefilter(installed: Cli):
    run = installed.simulate(TWO_NODES + [member("a-0", "ghost"), plain("p")], config())
    assert run.returncode == 0, run.stderr
    assert run.placements == {"default/p": "n0"}
    assert list(run.unschedulable()) == ["default/a-0"]
    assert run.unschedulable()["default/a-0"].startswith("0/2 nodes are available: PodGroup default/ghost not found.")
    assert run.attempts[0]["preFilter"] == {"plugin": "Coscheduling", "code": "UnschedulableAndUnresolvable",
                                           "reasons": ["PodGroup default/ghost not found"]}


def test_a_pod_waiting_for_its_pod_group_is_tried_again_when_it_appears():
    run = simulate(TWO_NODES + [member(f"a-{i}", "a") for i in range(2)])
    assert run.placements == {}
    store = run.sim.scheduler.hub.object_stores.find("scheduling.x-k8s.io/v1alpha1", "PodGroup")
    assert store is not None
    store.upsert(pod_group("a", 2))
    run.schedule_ready()
    assert sorted(run.placements) == ["default/a-0", "default/a-1"]


def test_a_new_member_completes_a_partial_group():
    run = simulate(TWO_NODES + [pod_group("a", 3)] + [member(f"a-{i}", "a") for i in range(2)])
    assert run.placements == {}
    run.sim.scheduler.on_pod_add(parse_pod(member("a-2", "a")))
    run.schedule_ready()
    assert sorted(run.placements) == ["default/a-0", "default/a-1", "default/a-2"]


def test_min_resources_the_cluster_cannot_hold_are_rejected_in_prefilter():
    objects = TWO_NODES + [pod_group("a", 2, min_resources={"cpu": "10"})] + [member(f"a-{i}", "a") for i in range(2)]
    run = simulate(objects)
    assert run.placements == {}
    assert run.result.outcomes["default/a-0"].message.startswith("0/2 nodes are available: resource gap: cpu: 2000m.")


def test_min_resources_count_the_room_the_groups_own_pods_hold_as_free():
    # permitWaitingTimeSeconds 0: the check is not cached, so a-1's PreFilter checks again while
    # a-0 holds 4 of the 8 cpu; that room is the group's own, so it counts as free.
    objects = TWO_NODES + [pod_group("a", 2, timeout=30, min_resources={"cpu": "8"})]
    objects += [member(f"a-{i}", "a", cpu="4") for i in range(2)]
    run = simulate(objects, config(coscheduling={"permitWaitingTimeSeconds": 0}))
    assert sorted(run.placements) == ["default/a-0", "default/a-1"]


# -- the plugin's contract ---------------------------------------------------------------------------


def test_unreserve_sends_the_whole_waiting_group_away_once_however_often_it_runs():
    nodes = [cpu_node(f"n{i}", cpu="3") for i in range(3)]
    run = simulate(nodes + [pod_group("g", 10, timeout=30)] + [member(f"g-{i}", "g") for i in range(10)], max_attempts=3)
    waiting = run.sim.scheduler.waiting_pods
    assert sorted(w.pod.name for w in waiting.all()) == ["g-0", "g-1", "g-2"]  # each holds a node
    first = waiting.get("g-0")
    assert first is not None
    events = []
    for _ in range(2):
        run.plugin.unreserve(CycleState(), first.pod, first.node_name)
        events.append(list(run.sim.cluster.events))
    assert events[0] == events[1]  # the second Unreserve changed nothing
    assert len(waiting) == 0
    assert run.held_cpu() == 0
    rejected = [pod for pod, _, _, message in events[0] if "rejection in Unreserve" in message]
    assert sorted(rejected) == ["default/g-0", "default/g-1", "default/g-2"]


def test_pods_of_no_group_are_left_alone():
    run = simulate(TWO_NODES + [plain(f"p-{i}") for i in range(3)])
    assert len(run.placements) == 3


def test_negative_args_are_a_config_error(installed: Cli):
    run = installed.simulate(TWO_NODES, config(coscheduling={"podGroupBackoffSeconds": -1}))
    assert run.returncode == 2
    assert run.stderr.strip().endswith(
        "KubeSchedulerConfiguration profiles[0].pluginConfig[0].args.podGroupBackoffSeconds: must not be negative"
    )


@pytest.mark.parametrize("field", ["permitWaitingTime", "deniedPGExpirationTimeSeconds"])
def test_unknown_args_are_a_config_error(field: str):
    with pytest.raises(ConfigError) as err:
        simulate(TWO_NODES, config(coscheduling={field: 3}))
    assert err.value.problems == [(f"profiles[0].pluginConfig[0].args.{field}", f'unknown field "{field}"')]
