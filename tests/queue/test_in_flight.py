"""InFlight: the events each in-flight pod has seen, kept only while someone needs them."""

from __future__ import annotations

from kubesched.framework.events import NODE_ADD
from kubesched.queue.in_flight import InFlight


def test_a_pod_sees_the_events_recorded_since_it_was_popped() -> None:
    flight = InFlight()
    flight.popped("a")
    flight.record(NODE_ADD, None, "n1")
    flight.popped("b")
    flight.record(NODE_ADD, None, "n2")
    assert [new for _, _, new in flight.seen_by("a") or []] == ["n1", "n2"]
    assert [new for _, _, new in flight.seen_by("b") or []] == ["n2"]


def test_a_pod_not_in_flight_has_seen_nothing() -> None:
    assert InFlight().seen_by("x") is None


def test_events_go_when_no_pod_is_in_flight() -> None:
    flight = InFlight()
    flight.popped("a")
    flight.record(NODE_ADD, None, "n1")
    assert flight.done("a")
    flight.popped("b")
    assert flight.seen_by("b") == []


def test_done_out_of_pop_order_keeps_what_the_oldest_pod_still_needs() -> None:
    flight = InFlight()
    flight.popped("a")
    flight.record(NODE_ADD, None, "n1")
    flight.popped("b")
    flight.record(NODE_ADD, None, "n2")
    flight.popped("c")
    assert flight.done("b")
    assert [new for _, _, new in flight.seen_by("a") or []] == ["n1", "n2"]
    assert flight.done("a")
    assert flight.seen_by("c") == []
    assert not flight.done("a")


def test_a_pod_popped_again_sees_only_events_after_its_second_pop() -> None:
    flight = InFlight()
    flight.popped("a")
    flight.record(NODE_ADD, None, "n1")
    flight.popped("b")
    flight.popped("a")
    flight.record(NODE_ADD, None, "n2")
    assert [new for _, _, new in flight.seen_by("a") or []] == ["n2"]
    assert flight.done("b")
    assert [new for _, _, new in flight.seen_by("a") or []] == ["n2"]


def test_the_log_stays_bounded_by_what_in_flight_pods_need_over_a_long_stream() -> None:
    # Pods popped and done one after another, each seeing one event, while one pod stays
    # in flight for a while: the log never holds more than twice what is needed.
    flight = InFlight()
    for i in range(10_000):
        flight.popped(f"p{i}")
        flight.record(NODE_ADD, None, i)
        if i >= 3:
            flight.done(f"p{i - 3}")
        assert len(flight._events) <= 2 * 4 + 1
