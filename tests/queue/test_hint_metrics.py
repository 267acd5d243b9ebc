"""Each queueing hint run is reported (scheduler_queueing_hint_execution_duration_seconds):
the plugin, upstream's event label, and Queue, QueueSkip or Error."""

from __future__ import annotations

from kubesched.framework.events import NODE_ADD, QueueingHint

from ..helpers import make_node, make_pod
from .test_scheduling_queue import fail, queue


def _raises(pod: object, old: object, new: object) -> QueueingHint:
    raise RuntimeError("broken hint")


def test_every_hint_run_is_observed_with_its_outcome() -> None:
    seen: list[tuple[str, str, str, float]] = []
    q = queue(hints=[(NODE_ADD, "Skips", lambda pod, old, new: QueueingHint.SKIP),
                     (NODE_ADD, "Queues", lambda pod, old, new: QueueingHint.QUEUE),
                     (NODE_ADD, "Breaks", _raises)])
    q.observe_hints(lambda *run: seen.append(run))
    q.add(make_pod("p"))
    fail(q, "p", plugins=("Skips", "Queues", "Breaks"))
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n1"))
    assert sorted((plugin, event, outcome) for plugin, event, outcome, _ in seen) == [
        ("Breaks", "NodeAdd", "Error"), ("Queues", "NodeAdd", "Queue"), ("Skips", "NodeAdd", "QueueSkip")]
    assert all(seconds >= 0 for *_, seconds in seen)


def test_a_hint_not_run_is_not_observed() -> None:
    seen: list[tuple[str, str, str, float]] = []
    q = queue(hints=[(NODE_ADD, "Other", lambda pod, old, new: QueueingHint.QUEUE)])
    q.observe_hints(lambda *run: seen.append(run))
    q.add(make_pod("p"))
    fail(q, "p", plugins=("P",))  # rejected by a plugin that registered nothing
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n1"))
    assert seen == []
