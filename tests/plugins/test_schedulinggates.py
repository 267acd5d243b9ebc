"""SchedulingGates: a pod with ``spec.schedulingGates`` is held back at PreEnqueue."""

from __future__ import annotations

from kubesched.plugins import schedulinggates

from ..helpers import make_pod


def test_a_pod_without_gates_may_enter_the_queue():
    status = schedulinggates.new(None, None).pre_enqueue(make_pod("p"))
    assert status is None or status.is_success()


def test_a_gated_pod_waits_with_its_gates_listed():
    status = schedulinggates.new(None, None).pre_enqueue(make_pod("p", gates=["example.com/a", "example.com/b"]))
    assert status.code.label == "UnschedulableAndUnresolvable"
    assert status.reasons == ("waiting for scheduling gates: [example.com/a example.com/b]",)


def test_gated_pods_are_woken_by_the_removal_of_their_gates():
    (registration,) = schedulinggates.new(None, None).events_to_register()
    event = registration.event
    assert event.resource.value == "Pod"
    assert "UpdatePodSchedulingGatesEliminated" in str(event)
