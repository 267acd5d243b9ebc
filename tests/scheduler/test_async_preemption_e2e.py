"""Upstream's e2e test "validates various priority Pods preempt expectedly with the async
preemption" (test/e2e/scheduling/preemption.go), in process, with the API server's answers
arriving as a watch reports them (``live_like.py``).

Four nodes with 10 of the extended resource ``scheduling.k8s.io/foo`` each are filled by 40
low-priority pods. 40 medium-priority pods preempt them all (the victims keep terminating,
as their preStop hook holds them), then 20 high-priority pods preempt too and are
nominated. The test deletes the low-priority pods: every high-priority pod and exactly 20
medium-priority ones must be bound, long before the unschedulable pods' 5-minute flush.

The deletions, the bindings' echoes and the status patches' echoes reach the scheduler
between its cycles in an order a seeded random source picks (a few cycles, then a few
watch events): kubesched once left medium-priority pods nominated to nodes they no longer
fitted after their preemption found no victims (the nomination was not cleared), and did
not wake the pods waiting for room when a nomination was cleared, so they waited for the
flush.
"""

from __future__ import annotations

import random

import pytest

from tests.helpers import node, pod
from tests.scheduler.live_like import LiveLike

FOO = "scheduling.k8s.io/foo"
NODES = 4


def _e2e(seed: int | None) -> tuple[LiveLike, list[str], list[str]]:
    """The e2e test's steps up to the deletions, then the deletions reported as ``seed`` orders
    them against the scheduler's cycles (None: all at once); the high and medium pods' uids."""
    sim = LiveLike([node(f"node-{i}", extended={FOO: 10}) for i in range(NODES)])
    lows = [sim.add(pod(f"pod{i}-{j}-low", requests={FOO: "1"}, priority=1, node_name=f"node-{i}"))
            for i in range(NODES) for j in range(10)]
    sim.deliver()
    mediums = [sim.add(pod(f"pod{i}-{j}-medium", requests={FOO: "1"}, priority=100))
               for i in range(NODES) for j in range(10)]
    sim.run(5)
    assert all(sim.api.pods[p.uid].terminating for p in lows), "every low-priority pod is being preempted"
    highs = [sim.add(pod(f"pod{i}-{j}-high", requests={FOO: "1"}, priority=1000))
             for i in range(NODES) for j in range(5)]
    sim.run(5)
    assert all(sim.api.pods[p.uid].nominated_node_name for p in highs), "every high-priority pod is nominated"
    for p in lows:
        sim.api.delete(p.uid)
    if seed is not None:
        rng = random.Random(seed)
        queue = sim.scheduler.queue
        while sim.api.watch or queue.has_ready():
            queue.run_due_flushes()
            sim.cycles(rng.randint(0, 3))
            sim.deliver(rng.randint(0, 3))
    return sim, [p.uid for p in highs], [p.uid for p in mediums]


@pytest.mark.parametrize("seed", [None, 3, 8, 15, 34])
def test_every_high_and_exactly_twenty_medium_priority_pods_are_bound_within_seconds(seed: int | None) -> None:
    sim, highs, mediums = _e2e(seed)
    sim.run(10)  # seconds of virtual time: a backoff or two, far from the 300 s flush
    assert sum(1 for uid in highs if sim.node_of(uid)) == 5 * NODES
    assert sum(1 for uid in mediums if sim.node_of(uid)) == 5 * NODES
    waiting = [uid for uid in mediums if not sim.node_of(uid)]
    assert all(not sim.api.pods[uid].nominated_node_name for uid in waiting), \
        "a pod no node can take holds no nomination"
