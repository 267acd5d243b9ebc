"""Every way room or a domain is freed reaches the pods waiting for it, as upstream's event
handlers send it (pkg/scheduler/eventhandlers.go), so that no pod waits for the
unschedulable pods' 5-minute flush after an event upstream's queueing hints act on.

Each case puts pod ``w`` among the unschedulable pods, rejected by NodeResourcesFit (or
PodTopologySpread), then makes one change, and says whether ``w`` leaves them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from kubesched.framework import Code, CycleState, PluginSpec, PostFilterResult, Status
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.interfaces import NodeToStatusReader
from kubesched.objects.node import parse_node
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.queue.scheduling_queue import UNSCHEDULABLE
from kubesched.scheduler.factory import new_scheduler
from kubesched.clock import VirtualClock
from tests.helpers import node, pod
from tests.scheduler.live_like import LiveLike

FOO = "scheduling.k8s.io/foo"


def _full_node() -> LiveLike:
    """n0 with one unit of foo, taken by a bound pod of priority 1000 nobody may preempt."""
    sim = LiveLike([node("n0", extended={FOO: 1})])
    sim.add(pod("big", requests={FOO: "1"}, priority=1000, node_name="n0"))
    sim.deliver()
    return sim


def _waiting(sim: LiveLike, priority: int = 10, name: str = "w") -> PodInfo:
    w = sim.add(pod(name, requests={FOO: "1"}, priority=priority))
    sim.deliver()
    sim.cycles()
    sim.deliver()
    assert sim.where(w.uid) == UNSCHEDULABLE
    return w


def _nominated(sim: LiveLike, priority: int, to: str = "n0") -> PodInfo:
    """A pending pod nominated to ``to``, held back by a scheduling gate."""
    raw = pod("nominee", requests={FOO: "1"}, priority=priority, gates=["hold"])
    raw["status"] = {"nominatedNodeName": to}
    n = sim.add(raw)
    sim.deliver()
    return n


@dataclass(frozen=True)
class Case:
    name: str
    waiting_priority: int
    nominee_priority: int
    change: Callable[[LiveLike, PodInfo], None]
    wakes: bool


def _clear(sim: LiveLike, n: PodInfo) -> None:
    sim.api.clear_nominated_node_name(n)


def _move(sim: LiveLike, n: PodInfo) -> None:
    sim.api.modify(n.uid, "nominated elsewhere", nominated_node_name="n9")


def _relabel(sim: LiveLike, n: PodInfo) -> None:
    sim.api.modify(n.uid, "relabelled", labels={"a": "b"})


def _delete(sim: LiveLike, n: PodInfo) -> None:
    sim.api.delete(n.uid)


NOMINATION_CASES = [
    Case("nomination cleared: a pod of lower priority wakes", 5, 10, _clear, True),
    Case("nomination cleared: a pod of equal priority wakes", 10, 10, _clear, True),
    Case("nomination cleared: a pod of higher priority never counted it", 50, 10, _clear, False),
    Case("nomination moved to another node", 5, 10, _move, True),
    Case("an update that keeps the nomination", 5, 10, _relabel, False),
    Case("the nominated pod deleted", 5, 10, _delete, True),
    Case("the nominated pod deleted: a pod of higher priority never counted it", 50, 10, _delete, False),
]


@pytest.mark.parametrize("case", NOMINATION_CASES, ids=lambda c: c.name)
def test_a_nomination_given_up_frees_room_for_pods_of_equal_or_lower_priority(case: Case) -> None:
    sim = _full_node()
    n = _nominated(sim, case.nominee_priority)
    w = _waiting(sim, case.waiting_priority)
    case.change(sim, n)
    sim.deliver()
    assert (sim.where(w.uid) != UNSCHEDULABLE) is case.wakes


def test_a_pending_pod_deleted_without_a_nomination_frees_nothing() -> None:
    sim = _full_node()
    other = sim.add(pod("other", requests={FOO: "1"}, priority=10, gates=["hold"]))
    sim.deliver()
    w = _waiting(sim, 5)
    sim.api.delete(other.uid)
    sim.deliver()
    assert sim.where(w.uid) == UNSCHEDULABLE


def test_a_pod_added_with_a_nomination_holds_its_room() -> None:
    """upstream's Add nominates a pod that is not gated to its status' node (another
    replica or an earlier run nominated it)."""
    sim = LiveLike([node("n0", extended={FOO: 1})])
    raw = pod("nominee", requests={FOO: "1"}, priority=100)
    raw["status"] = {"nominatedNodeName": "n0"}
    n = sim.add(raw)
    sim.deliver()
    assert sim.scheduler.nominator.node_of(n.uid) == "n0"


def test_a_failed_preemption_clears_the_pods_nomination() -> None:
    """Preemption that finds no victim answers "" with its rejection: the nomination goes,
    in the nominator at once and through the status patch."""
    sim = _full_node()
    raw = pod("was-nominated", requests={FOO: "1"}, priority=10)
    raw["status"] = {"nominatedNodeName": "n0"}
    p = sim.add(raw)
    sim.deliver()
    sim.cycles()
    assert sim.where(p.uid) == UNSCHEDULABLE
    assert sim.scheduler.nominator.node_of(p.uid) is None
    assert sim.api.pods[p.uid].nominated_node_name == ""


class Rejects:
    """A PostFilter plugin that rejects with a result (or None) of its choosing."""

    def __init__(self, name: str, result: PostFilterResult | None) -> None:
        self.name = name
        self.result = result

    def post_filter(self, state: CycleState, pod: PodInfo,
                    filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status | None]:
        return self.result, Status(Code.UNSCHEDULABLE, f"{self.name} cannot help")


@pytest.mark.parametrize("results, kept", [
    ((PostFilterResult(""), None), ""),
    ((None, PostFilterResult("n1")), "n1"),
    ((PostFilterResult("n1"), PostFilterResult("")), ""),
    ((None, None), None),
], ids=["first gives one", "second gives one", "the last given wins", "none given"])
def test_post_filter_keeps_the_last_result_a_rejecting_plugin_gave(
        results: tuple[PostFilterResult | None, PostFilterResult | None], kept: str | None) -> None:
    registry = in_tree_registry()
    for name, result in zip(("A", "B"), results):
        registry.register(PluginSpec(name, lambda args, handle, r=result, n=name: Rejects(n, r)))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"postFilter": {
            "enabled": [{"name": "A"}, {"name": "B"}], "disabled": [{"name": "*"}]}}}]}, registry)
    clock = VirtualClock()
    sched = new_scheduler(config, LiveLike([]).api, clock, registry)
    fwk = sched.profiles["default-scheduler"]
    result, status = fwk.run_post_filter(CycleState(), parse_pod(pod("p")), _NoNodes())
    assert status.code == Code.UNSCHEDULABLE
    assert (None if result is None else result.nominated_node_name) == kept


class _NoNodes:
    def status_of(self, node_name: str) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def node_names_with(self, code: Code) -> list[str]:
        return []


# -- assumed pods -------------------------------------------------------------------
class ParkedBindings:
    """A binding runner that keeps each binding cycle until the test finishes it."""

    def __init__(self) -> None:
        self.parked: list[tuple[Callable[[], Status | None], Callable[[Status | None], None]]] = []

    def __call__(self, work: Callable[[], Status | None], done: Callable[[Status | None], None]) -> None:
        self.parked.append((work, done))


def test_a_pod_deleted_while_being_bound_frees_its_room_at_once() -> None:
    """upstream's handleAssumedPodDeletion: an assumed pod past Permit is forgotten when it is
    deleted, and the pods waiting for room hear an AssignedPodDelete; its binding then fails
    and changes nothing more."""
    bindings = ParkedBindings()
    sim = LiveLike([node("n0", extended={FOO: 1})], run_binding=bindings)
    a = sim.add(pod("a", requests={FOO: "1"}, priority=10))
    sim.deliver()
    sim.cycles()
    assert sim.scheduler.cache.is_assumed(a) and len(bindings.parked) == 1
    w = _waiting(sim, 10)
    sim.api.delete(a.uid)
    sim.deliver()
    assert sim.scheduler.cache.get_pod(a.uid) is None
    assert sim.where(w.uid) != UNSCHEDULABLE
    _, done = bindings.parked.pop()
    done(Status(Code.ERROR, 'pods "a" not found'))
    assert sim.where(a.uid) == "" and sim.scheduler.cache.get_pod(a.uid) is None
    sim.run(2)
    assert sim.scheduler.cache.is_assumed(w)


def test_a_late_echo_of_an_update_does_not_requeue_a_pod_being_bound() -> None:
    """upstream's updatePodInSchedulingQueue leaves an assumed pod alone: an update made
    before its binding, reported after it, must not send it back to be scheduled again."""
    sim = LiveLike([node("n0", extended={FOO: 2})])
    p = sim.add(pod("p", requests={FOO: "1"}, priority=10))
    sim.deliver()
    sim.api.modify(p.uid, "relabelled", labels={"x": "y"})
    sim.cycles()  # assumed and bound; the label's echo and the binding's still to come
    sim.deliver(1)
    assert sim.where(p.uid) == ""
    assert not sim.scheduler.queue.has_ready()


# -- nodes and bound pods --------------------------------------------------------------
def test_a_node_deleted_wakes_the_pods_its_topology_domain_kept_out() -> None:
    """PodTopologySpread registers Node/Delete: a zone that goes takes its skew with it."""
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "x"}}}]
    sim = LiveLike([node("in-a", extended={FOO: 10}, zone="a"), node("in-b", zone="b")])
    sim.add(pod("m", labels={"app": "x"}, node_name="in-a"))
    sim.deliver()
    raw = pod("w", labels={"app": "x"}, requests={FOO: "1"})
    raw["spec"]["topologySpreadConstraints"] = spread
    w = sim.add(raw)
    sim.deliver()
    sim.cycles()
    assert sim.where(w.uid) == UNSCHEDULABLE
    sim.remove_node("in-b")
    assert sim.where(w.uid) != UNSCHEDULABLE
    sim.run(2)
    assert sim.node_of(w.uid) == "in-a"


@pytest.mark.parametrize("change, wakes", [
    ({"requests": {FOO: "1"}}, True),  # an extended resource scaled down (in-place resize)
    ({"requests": {}}, True),  # a request removed
    ({"requests": {FOO: "2"}, "labels": {"a": "b"}}, False),  # relabelled: nothing freed
], ids=["extended resource scaled down", "request removed", "relabelled"])
def test_a_bound_pods_update_wakes_the_pods_waiting_for_what_it_freed(change: dict[str, object], wakes: bool) -> None:
    sim = LiveLike([node("n0", extended={FOO: 2})])
    big = sim.add(pod("big", requests={FOO: "2"}, priority=1000, node_name="n0"))
    sim.deliver()
    w = _waiting(sim, 10)
    sim.api.replace(parse_pod(pod("big", priority=1000, node_name="n0", uid=big.uid, **change)))  # type: ignore[arg-type]
    sim.deliver()
    assert (sim.where(w.uid) != UNSCHEDULABLE) is wakes
