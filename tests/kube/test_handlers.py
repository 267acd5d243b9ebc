"""Informer handlers: each change reaches the scheduler and is timed under upstream's event
label; a handler that fails is logged with the object's name and the stream goes on."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubesched.cluster.kube.handlers import NamespaceInfo, NamespaceEvents, NodeEvents, PodEvents
from kubesched.cluster.kube.informer import DeletedFinalStateUnknown
from kubesched.objects.node import parse_node
from kubesched.objects.pod import PodInfo, parse_pod


class Metrics:
    def __init__(self) -> None:
        self.labels: list[str] = []

    def event_handling(self, event: str, seconds: float) -> None:
        self.labels.append(event)


class Scheduler:
    def __init__(self, fail: bool = False) -> None:
        self.metrics = Metrics()
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.fail = fail

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> None:
            self.calls.append((name, args))
            if self.fail:
                raise RuntimeError("boom")
        return call


def _pod(node: str = "") -> PodInfo:
    return parse_pod({"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
                      "spec": {"containers": [], **({"nodeName": node} if node else {})}})


PENDING, BOUND = _pod(), _pod("n1")


@pytest.mark.parametrize(("change", "label", "call"), [
    (lambda h: h.on_add(PENDING, False), "UnschedulablePodAdd", "on_pod_add"),
    (lambda h: h.on_add(BOUND, False), "AssignedPodAdd", "on_pod_add"),
    (lambda h: h.on_update(PENDING, PENDING), "UnschedulablePodUpdate", "on_pod_update"),
    (lambda h: h.on_update(PENDING, BOUND), "AssignedPodAdd", "on_pod_update"),  # addAssignedPodToCache
    (lambda h: h.on_update(BOUND, BOUND), "AssignedPodUpdate", "on_pod_update"),
    (lambda h: h.on_delete(PENDING), "UnschedulablePodDelete", "on_pod_delete"),
    (lambda h: h.on_delete(DeletedFinalStateUnknown("ns/p", BOUND)), "AssignedPodDelete", "on_pod_delete"),
])
def test_pod_changes_reach_the_scheduler_under_upstreams_event_label(change: Any, label: str, call: str) -> None:
    scheduler, woken = Scheduler(), []
    change(PodEvents(scheduler, lambda: woken.append(1)))  # type: ignore[arg-type]
    assert [name for name, _ in scheduler.calls] == [call]
    assert scheduler.metrics.labels == [label]
    assert woken == [1]


def test_node_and_namespace_changes_are_labelled_by_kind_and_action() -> None:
    scheduler = Scheduler()
    node = parse_node({"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}})
    nodes = NodeEvents(scheduler, lambda: None)  # type: ignore[arg-type]
    nodes.on_add(node, True)
    nodes.on_update(node, node)
    nodes.on_delete(node)
    namespaces = NamespaceEvents(scheduler, lambda: None)  # type: ignore[arg-type]
    namespaces.on_add(NamespaceInfo("a", {}), True)
    namespaces.on_update(NamespaceInfo("a", {}), NamespaceInfo("a", {"x": "y"}))
    namespaces.on_delete(NamespaceInfo("a", {"x": "y"}))
    assert scheduler.metrics.labels == ["NodeAdd", "NodeUpdate", "NodeDelete",
                                        "NamespaceAdd", "NamespaceUpdate", "NamespaceDelete"]
    assert scheduler.calls[-1] == ("on_namespace", ("a", None))


def test_a_failing_handler_is_logged_with_the_objects_name_and_the_next_change_is_handled(
        caplog: pytest.LogCaptureFixture) -> None:
    scheduler, woken = Scheduler(fail=True), []
    pods = PodEvents(scheduler, lambda: woken.append(1))  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR):
        pods.on_add(PENDING, False)
        pods.on_update(PENDING, BOUND)
    assert [r.getMessage() for r in caplog.records] == ["handling add of Pod ns/p failed",
                                                         "handling update of Pod ns/p failed"]
    assert len(scheduler.calls) == 2 and woken == [1, 1]
