"""DefaultBinder: binds through the cluster's binding call; a refusal is an error status."""

from __future__ import annotations

from kubesched.cache.cache import Cache
from kubesched.clock import VirtualClock
from kubesched.framework.cycle_state import CycleState
from kubesched.scheduler.handle import HandleHub
from kubesched.plugins import defaultbinder

from ..helpers import make_pod


class _Client:
    def __init__(self, bind):
        self.bind = bind

    def record_event(self, pod, event_type, reason, message):
        pass

    def update_pod_condition(self, pod, reason, message, nominated_node_name):
        pass


def binder_with(bind):
    return defaultbinder.new(None, HandleHub(Cache(), VirtualClock(), _Client(bind)).handle("default-scheduler"))


def test_binds_the_pod_to_the_node():
    calls = []
    status = binder_with(lambda pod, node: calls.append((pod.key, node))).bind(CycleState(), make_pod("p"), "n1")
    assert status is None or status.is_success()
    assert calls == [("default/p", "n1")]


def test_a_refused_binding_is_an_error_status():
    def refuse(pod, node):
        raise RuntimeError("pods \"p\" is forbidden")

    status = binder_with(refuse).bind(CycleState(), make_pod("p"), "n1")
    assert status.code.label == "Error"
    assert "forbidden" in status.message


def test_without_a_cluster_binding_is_an_error():
    status = binder_with(None).bind(CycleState(), make_pod("p"), "n1")
    assert status.code.label == "Error"
