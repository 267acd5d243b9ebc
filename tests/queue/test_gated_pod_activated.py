"""Activating a pod a PreEnqueue plugin still gates leaves it filed as it was.

Upstream's ``activate`` (``Activate``, and ``PopSpecificPod`` for a pod group's members) hands
a pod from unschedulablePods to ``moveToActiveQ``, which runs PreEnqueue again; a pod still
gated goes back through ``unschedulablePods.addOrUpdate``, which for an entry already there
only replaces it: no ``scheduler_queue_incoming_pods_total{queue="unschedulable"}`` count, and
nothing else moves.
"""

from __future__ import annotations

import pytest

from kubesched.queue.scheduling_queue import SchedulingQueue

from .test_pod_group_members import member, queue


def counted(q: SchedulingQueue) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    q.on_incoming = lambda where, event: seen.append((where, event))
    return seen


@pytest.mark.parametrize("how", ["activate", "pop_specific_pod"])
def test_a_still_gated_pod_is_not_counted_again_nor_refiled_last(how: str) -> None:
    q = queue(gated={"a", "b"})
    a, b = member("a"), member("b")
    q.add(a)
    q.add(b)
    seen = counted(q)
    if how == "activate":
        q.activate([a])
    else:
        assert q.pop_specific_pod(a) is None
    assert seen == []
    assert [info.pod.name for info in q.pending_pods()["unschedulablePods"]] == ["a", "b"]
