"""schedule_one: the scheduling and binding cycles, and the one error path: whatever fails,
the pod goes back to the queue, the cache forgets it, and the failure is reported."""

from __future__ import annotations

import pytest

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.framework.config import parse_config
from kubesched.framework.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE
from kubesched.scheduler.factory import new_scheduler

from ..helpers import config, node, pod


class Bad:
    """A plugin that fails at one extension point, by status or by raising."""

    name = "Bad"

    def __init__(self, point, outcome, calls):
        self.point, self.outcome, self.calls = point, outcome, calls

    def _at(self, point, ok=None):
        self.calls.append(point)
        if point != self.point:
            return ok
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome

    def pre_filter(self, state, pod, snapshot):
        if getattr(self, "hook", None) is not None:
            self.hook()
        return None, self._at("pre_filter")

    def filter(self, state, pod, node):
        return self._at("filter")

    def pre_score(self, state, pod, snapshot, rows):
        return self._at("pre_score")

    def score(self, state, pod, node):
        return self._at("score", 0) if self.point == "score" else 0

    def reserve(self, state, pod, node_name):
        return self._at("reserve")

    def unreserve(self, state, pod, node_name):
        self.calls.append("unreserve")

    def permit(self, state, pod, node_name):
        if self.point == "permit":
            return self._at("permit"), 0.0
        return None, 0.0

    def pre_bind(self, state, pod, node_name):
        return self._at("pre_bind")

    def post_bind(self, state, pod, node_name):
        self._at("post_bind")


def setup(point=None, outcome=None, nodes=2, cpu="1", refuse_binding=False):
    calls: list[str] = []
    registry = in_tree_registry().merged(Registry())
    registry.add("Bad", lambda args, handle: Bad(point, outcome, calls))
    profile = {"plugins": {"multiPoint": {"enabled": [{"name": "Bad"}]}}}
    cfg = parse_config(config(profile), registry, UPSTREAM_ONLY)
    clock = VirtualClock()
    client = SimulatedCluster(clock)
    if refuse_binding:
        def refuse(p, n):
            raise RuntimeError("the API server said no")
        client.bind_hook = refuse
    sched = new_scheduler(cfg, client, clock, registry, tie_break="name")
    for i in range(nodes):
        sched.on_node_add(parse_node(node(f"n{i}", cpu="2")))
    p = parse_pod(pod("p", cpu=cpu))
    sched.on_pod_add(p)
    return sched, client, p, calls


def assert_returned(sched, client, p, where, reason):
    assert sched.queue.where(p.uid) == where
    assert not sched.cache.is_assumed(p)
    assert sched.cache.get_pod(p.uid) is None
    assert all(len(info.pods) == 0 for info in sched.cache.nodes.values())
    assert [e[2] for e in client.events if e[0] == p.key] == ["FailedScheduling"]
    assert client.conditions[p.key][0] == reason
    assert not client.bindings


def test_a_pod_that_fits_is_bound_and_leaves_the_queue():
    sched, client, p, calls = setup()
    assert sched.schedule_one()
    assert [(b.key, n) for b, n in client.bindings] == [(p.key, "n0")]
    assert sched.cache.is_assumed(p)
    assert sched.queue.where(p.uid) == ""
    assert calls.count("reserve") == 1 and calls.count("post_bind") == 1
    assert client.events[-1][2:] == ("Scheduled", "Successfully assigned default/p to n0")


def test_no_pod_no_attempt():
    sched, client, p, _ = setup()
    sched.schedule_one()
    assert sched.schedule_one() is False


def test_a_pod_fitting_no_node_waits_among_the_unschedulable_pods():
    sched, client, p, _ = setup(cpu="3")
    sched.schedule_one()
    assert_returned(sched, client, p, UNSCHEDULABLE, "Unschedulable")
    assert client.conditions[p.key][1] == (  # 3 cpu on nodes of 2: preemption would not help either
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling.")


def test_no_nodes_at_all_sends_the_pod_to_backoff():
    sched, client, p, _ = setup(nodes=0)
    sched.schedule_one()
    assert_returned(sched, client, p, BACKOFF, "Unschedulable")
    assert client.conditions[p.key][1] == "no nodes available to schedule pods"


REJECT = Status(Code.UNSCHEDULABLE, "not today")
ERROR = Status(Code.ERROR, "internal trouble")


@pytest.mark.parametrize(
    "point, outcome, where, reason",
    [
        pytest.param("pre_filter", REJECT, UNSCHEDULABLE, "Unschedulable", id="PreFilter rejects"),
        pytest.param("pre_filter", ERROR, BACKOFF, "SchedulerError", id="PreFilter errors"),
        pytest.param("pre_filter", RuntimeError("bug"), BACKOFF, "SchedulerError", id="PreFilter raises"),
        pytest.param("filter", REJECT, UNSCHEDULABLE, "Unschedulable", id="Filter rejects"),
        pytest.param("filter", ERROR, BACKOFF, "SchedulerError", id="Filter errors"),
        pytest.param("filter", RuntimeError("bug"), BACKOFF, "SchedulerError", id="Filter raises"),
        pytest.param("pre_score", ERROR, BACKOFF, "SchedulerError", id="PreScore errors"),
        pytest.param("pre_score", RuntimeError("bug"), BACKOFF, "SchedulerError", id="PreScore raises"),
        pytest.param("score", 1000, BACKOFF, "SchedulerError", id="Score out of range"),
        pytest.param("score", RuntimeError("bug"), BACKOFF, "SchedulerError", id="Score raises"),
        pytest.param("reserve", REJECT, UNSCHEDULABLE, "Unschedulable", id="Reserve rejects"),
        pytest.param("reserve", ERROR, BACKOFF, "SchedulerError", id="Reserve errors"),
        pytest.param("reserve", RuntimeError("bug"), BACKOFF, "SchedulerError", id="Reserve raises"),
        pytest.param("permit", REJECT, UNSCHEDULABLE, "Unschedulable", id="Permit rejects"),
        pytest.param("permit", ERROR, BACKOFF, "SchedulerError", id="Permit errors"),
        pytest.param("permit", RuntimeError("bug"), BACKOFF, "SchedulerError", id="Permit raises"),
        pytest.param("pre_bind", REJECT, UNSCHEDULABLE, "Unschedulable", id="PreBind rejects"),
        pytest.param("pre_bind", ERROR, BACKOFF, "SchedulerError", id="PreBind errors"),
        pytest.param("pre_bind", RuntimeError("bug"), BACKOFF, "SchedulerError", id="PreBind raises"),
    ],
)
def test_every_failure_returns_the_pod_to_the_queue(point, outcome, where, reason):
    sched, client, p, calls = setup(point, outcome)
    sched.schedule_one()
    assert_returned(sched, client, p, where, reason)
    if point in ("reserve", "permit", "pre_bind"):
        assert "unreserve" in calls


@pytest.mark.parametrize("point", ["reserve", "permit", "pre_bind"])
def test_a_rejection_after_filtering_is_reported_like_a_fit_error_on_one_node(point):
    sched, client, p, _ = setup(point, REJECT)
    sched.schedule_one()
    assert client.conditions[p.key][1] == "0/1 nodes are available: 1 not today."


def test_a_refused_binding_returns_the_pod_to_backoff():
    sched, client, p, calls = setup(refuse_binding=True)
    sched.schedule_one()
    assert sched.queue.where(p.uid) == BACKOFF
    assert not sched.cache.is_assumed(p) and "unreserve" in calls
    assert "the API server said no" in client.conditions[p.key][1]


def test_a_failing_post_bind_does_not_unbind_the_pod():
    sched, client, p, _ = setup("post_bind", RuntimeError("bug"))
    sched.schedule_one()
    assert [(b.key, n) for b, n in client.bindings] == [(p.key, "n0")]
    assert sched.queue.where(p.uid) == ""
    assert sched.schedule_one() is False


def test_a_returned_pod_is_scheduled_once_the_cluster_changes():
    sched, client, p, _ = setup(cpu="3")
    sched.schedule_one()
    assert sched.queue.where(p.uid) == UNSCHEDULABLE
    sched.on_node_add(parse_node(node("big", cpu="8")))
    assert sched.queue.where(p.uid) in (ACTIVE, BACKOFF)
    assert sched.schedule_one()
    assert [n for _, n in client.bindings] == ["big"]


def test_pods_of_other_schedulers_are_not_queued():
    sched, client, _, _ = setup()
    other = parse_pod(pod("x", scheduler_name="someone-else"))
    sched.on_pod_add(other)
    assert sched.queue.where(other.uid) == ""


def test_a_pod_updated_during_its_attempt_is_requeued_with_its_latest_spec():
    sched, client, p, _ = setup(cpu="3")
    newer = parse_pod(pod("p", cpu="1", uid=p.uid))

    def informer_update():  # the update arrives while the pod is being scheduled
        if sched.pods[p.uid] is p:
            sched.on_pod_update(p, newer)

    sched.profiles["default-scheduler"].plugin("Bad").hook = informer_update
    sched.schedule_one()  # fails with the old spec (3 cpu)
    assert sched.queue.where(p.uid) in (UNSCHEDULABLE, BACKOFF)
    [queued] = [i for q in sched.queue.pending_pods().values() for i in q]
    assert queued.pod is newer
    sched.queue.activate([newer])
    sched.schedule_one()
    assert [(b.key, n) for b, n in client.bindings] == [(p.key, "n0")]
