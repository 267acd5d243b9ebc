"""The simulator's "settled" test without listing backoffQ: it follows the queue's
backoffQ membership and agrees, at every step of a run with pods coming and going,
with its definition (no pod backing off, or every one failed since the last change)."""

from __future__ import annotations

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import default_config
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.queue.scheduling_queue import BACKOFF

from ..helpers import node, pod


def walked_settled(sim: Simulation) -> bool:
    backing_off = sim.scheduler.queue.pending_pods()[BACKOFF]
    return all(sim._failed_at.get(i.uid, -1) >= sim._changes for i in backing_off)


def test_settled_agrees_with_its_definition_while_pods_wait_and_are_deleted():
    registry = in_tree_registry()
    bound = [pod(f"b{i}", cpu="1", node_name="n0") for i in range(3)]
    pending = [pod(f"p{i}", cpu="1") for i in range(8)]
    snapshot = snapshot_from_objects([("t", o) for o in [node("n0", cpu="4")] + bound + pending])
    sim = Simulation(snapshot, default_config(registry, UPSTREAM_ONLY), registry, tie_break="name")
    checked = []

    def step(scheduled: int, total: int) -> None:
        assert sim._settled() == walked_settled(sim)
        checked.append(sim._settled())
        if len(checked) in (3, 6, 9):  # a bound pod goes: the waiting pods move to backoffQ
            sim.scheduler.on_pod_delete(parse_pod(bound[len(checked) // 3 - 1]))

    result = sim.run(progress=step)
    assert len(result.scheduled) == 4  # one free cpu, then the three the deletions freed
    assert False in checked  # the run did see pods backing off after a change
    assert sim._settled() == walked_settled(sim)
