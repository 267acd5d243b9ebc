"""DefaultPreemption's executor (upstream's ``preemption.Executor``, ``executor_test.go``): what
an asynchronous preemption does (SchedulerAsyncPreemption, upstream's ``prepareCandidateAsync``)
and a synchronous one (``prepareCandidate``): which victims get an API call, when lower-priority
nominations are cleared, when the preemptor is held back and let in (``IsPodRunningPreemption``
with its last victim), when it is activated, and the events."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pytest

from kubesched.framework.status import Code
from kubesched.objects.pod import PodInfo
from kubesched.objects.podgroup import PodGroup
from kubesched.plugins.defaultpreemption.executor import Executor, group_preemptor_of, pod_preemptor_of

from ..helpers import make_pod

Done = Callable[[bool], None]


@dataclass
class Evictor:
    """A cluster client whose evictions finish when the test says (``finish``), or at once."""

    at_once: bool | None = None  # True/False: finish each eviction at once with that outcome
    calls: list[tuple[str, str]] = field(default_factory=list)  # (victim, preemptor kind)
    pending: list[Done] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)

    def preempt_pod(self, victim: PodInfo, preemptor: PodInfo, node_name: str, done: Done | None = None) -> None:
        self._evict(victim, "pod", done)

    def preempt_pod_for_group(self, victim: PodInfo, group: PodGroup, scheduler_name: str, done: Done | None = None) -> None:
        self._evict(victim, "podgroup", done)

    def _evict(self, victim: PodInfo, kind: str, done: Done | None) -> None:
        self.calls.append((victim.name, kind))
        assert done is not None
        if self.at_once is None:
            self.pending.append(done)
        else:
            done(self.at_once)

    def clear_nominated_node_name(self, pod: PodInfo) -> None:
        self.cleared.append(pod.name)

    def record_event(self, pod: PodInfo, event_type: str, reason: str, message: str) -> None:
        pass


@dataclass
class Nominator:
    by_node: dict[str, list[PodInfo]] = field(default_factory=dict)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, []))


@dataclass
class Events:
    lines: list[tuple[str, str]] = field(default_factory=list)

    def record_event(self, pod: PodInfo, event_type: str, reason: str, message: str) -> None:
        self.lines.append((pod.name, message))


@dataclass
class FakeHandle:
    client: Evictor
    waiting: set[str] = field(default_factory=set)
    activated: list[list[str]] = field(default_factory=list)
    event_recorder: Events = field(default_factory=Events)

    def reject_waiting_pod(self, uid: str, plugin: str, message: str) -> bool:
        if uid in self.waiting:
            self.waiting.discard(uid)
            return True
        return False

    def activate(self, pods: Iterable[PodInfo]) -> None:
        self.activated.append([p.name for p in pods])


def victim(name: str, terminating: bool = False) -> PodInfo:
    return make_pod(name, uid=name, node_name="n1", priority=0).copy_with(terminating=terminating)


PREEMPTOR = make_pod("p", uid="uid-p", priority=100)


def executor(asynchronous: bool = True, at_once: bool | None = None, nominated: Iterable[PodInfo] = ()
             ) -> tuple[Executor, FakeHandle]:
    handle = FakeHandle(Evictor(at_once))
    ex = Executor(handle, "DefaultPreemption", asynchronous)  # type: ignore[arg-type]
    ex.nominator = Nominator({"n1": list(nominated)})
    return ex, handle


def nominated_pods() -> list[PodInfo]:
    return [make_pod("lower", uid="lower", priority=50), make_pod("higher", uid="higher", priority=500)]


# -- asynchronous ----------------------------------------------------------------------
def test_async_nothing_is_done_when_every_victim_is_already_terminating() -> None:
    ex, handle = executor(nominated=nominated_pods())
    assert ex.actuate("n1", [victim("a", True), victim("b", True)], pod_preemptor_of(PREEMPTOR)) is None
    assert (handle.client.calls, handle.client.cleared) == ([], [])  # nominations kept: no victim deleted
    assert not ex.is_running_preemption("uid-p")


def test_async_clears_lower_priority_nominations_on_the_node_and_evicts_the_others() -> None:
    ex, handle = executor(nominated=nominated_pods())
    ex.actuate("n1", [victim("a", True), victim("b")], pod_preemptor_of(PREEMPTOR))
    assert handle.client.cleared == ["lower"]
    assert handle.client.calls == [("b", "pod")]  # a's graceful deletion is under way: no call


def test_async_evicts_the_last_victim_only_once_the_others_are_done() -> None:
    ex, handle = executor()
    ex.actuate("n1", [victim("a"), victim("b"), victim("c")], pod_preemptor_of(PREEMPTOR))
    assert [name for name, _ in handle.client.calls] == ["a", "b"]
    assert ex.is_running_preemption("uid-p")
    handle.client.pending[0](True)
    assert [name for name, _ in handle.client.calls] == ["a", "b"]
    handle.client.pending[1](True)
    assert [name for name, _ in handle.client.calls] == ["a", "b", "c"] and ex.last_victims == {"uid-p": "c"}
    handle.client.pending[2](True)
    assert not ex.is_running_preemption("uid-p")
    assert handle.activated == []  # the victims' deletions requeue it, as upstream's


def test_async_a_failed_eviction_skips_the_last_victim_and_activates_the_preemptor() -> None:
    ex, handle = executor()
    ex.actuate("n1", [victim("a"), victim("b"), victim("c")], pod_preemptor_of(PREEMPTOR))
    handle.client.pending[0](False)
    handle.client.pending[1](True)
    assert [name for name, _ in handle.client.calls] == ["a", "b"]
    assert not ex.is_running_preemption("uid-p") and handle.activated == [["p"]]


def test_async_a_failed_last_eviction_activates_the_preemptor() -> None:
    ex, handle = executor(at_once=False)
    ex.actuate("n1", [victim("a")], pod_preemptor_of(PREEMPTOR))
    assert handle.activated == [["p"]]


def test_async_evictions_finished_at_once_leave_nothing_running_and_activate_nothing() -> None:
    ex, handle = executor(at_once=True)
    ex.actuate("n1", [victim("a"), victim("b")], pod_preemptor_of(PREEMPTOR))
    assert not ex.is_running_preemption("uid-p") and handle.activated == []


@pytest.mark.parametrize("seen", ["deleted", "terminating", "added terminating"])
def test_async_the_preemptor_is_let_in_once_its_last_victim_is_seen_going(seen: str) -> None:
    ex, handle = executor()
    ex.actuate("n1", [victim("a"), victim("b")], pod_preemptor_of(PREEMPTOR))
    handle.client.pending[0](True)
    assert ex.is_running_preemption("uid-p")  # b's eviction under way
    going = victim("b", terminating=True)
    if seen == "deleted":
        ex.on_pod_delete(victim("b"))
    elif seen == "terminating":
        ex.on_pod_update(victim("b"), going)
    else:
        ex.on_pod_add(going)
    assert not ex.is_running_preemption("uid-p")


def test_async_the_deletion_of_a_victim_that_is_not_the_last_does_not_let_it_in() -> None:
    ex, handle = executor()
    ex.actuate("n1", [victim("a"), victim("b")], pod_preemptor_of(PREEMPTOR))
    ex.on_pod_delete(victim("a"))
    assert ex.is_running_preemption("uid-p")


def test_a_waiting_victim_is_rejected_in_memory_with_no_api_call() -> None:
    ex, handle = executor(at_once=True)
    handle.waiting.add("a")
    ex.actuate("n1", [victim("a"), victim("b")], pod_preemptor_of(PREEMPTOR))
    assert handle.client.calls == [("b", "pod")]
    assert handle.event_recorder.lines == [
        ("a", "Preempted by pod uid-p on node n1 (in kube-scheduler memory)."),
        ("b", "Preempted by pod uid-p on node n1"),
    ]


def test_a_pod_group_preempts_on_the_cluster_through_the_group_eviction() -> None:
    ex, handle = executor(at_once=True)
    group = PodGroup("default", "train", "uid-train", 1, "1", 2, priority=100)
    members = [make_pod("m0", uid="m0", priority=100)]
    ex.actuate("cluster", [victim("a")], group_preemptor_of(group, members, 100))
    assert handle.client.calls == [("a", "podgroup")]
    assert handle.event_recorder.lines == [("a", "Preempted by podgroup uid-train on node cluster")]


# -- synchronous -----------------------------------------------------------------------
def test_sync_clears_nominations_even_when_every_victim_is_terminating() -> None:
    ex, handle = executor(asynchronous=False, nominated=nominated_pods())
    assert ex.actuate("n1", [victim("a", True)], pod_preemptor_of(PREEMPTOR)) is None
    assert (handle.client.calls, handle.client.cleared) == ([], ["lower"])
    assert not ex.is_running_preemption("uid-p")


def test_sync_never_holds_the_preemptor_back() -> None:
    ex, handle = executor(asynchronous=False)
    ex.actuate("n1", [victim("a")], pod_preemptor_of(PREEMPTOR))
    assert handle.client.calls == [("a", "pod")] and not ex.is_running_preemption("uid-p")


def test_sync_a_failure_seen_in_the_cycle_is_an_error_and_nominations_stay() -> None:
    ex, handle = executor(asynchronous=False, at_once=False, nominated=nominated_pods())
    status = ex.actuate("n1", [victim("a")], pod_preemptor_of(PREEMPTOR))
    assert status is not None and status.code == Code.ERROR and handle.client.cleared == []
