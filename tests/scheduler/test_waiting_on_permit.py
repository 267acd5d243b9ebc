"""Permit's Wait: pods held assumed on their node until allowed, rejected, or timed out.

The plugin under test is a small gang ("co-scheduling") policy, written as a user
would: wait until every member of the group is waiting, then let them all bind.
"""

from __future__ import annotations

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.status import Code, Status
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

GROUP_LABEL = "gang.example.com/group"
SIZE_LABEL = "gang.example.com/size"


class Gang:
    name = "Gang"

    def __init__(self, handle, timeout: float) -> None:
        self.handle = handle
        self.timeout = timeout

    def permit(self, state, pod, node_name):
        group = pod.labels.get(GROUP_LABEL)
        if group is None:
            return None, 0.0
        members = [w for w in self.handle.iterate_over_waiting_pods() if w.pod.labels.get(GROUP_LABEL) == group]
        if len(members) + 1 < int(pod.labels[SIZE_LABEL]):
            return Status(Code.WAIT), self.timeout
        for member in members:
            member.allow(self.name)
        return None, 0.0


def simulate(pods: list[dict], timeout: float = 30.0, cpu: str = "4"):
    registry = in_tree_registry()
    registry.add("Gang", lambda args, handle: Gang(handle, timeout))
    config = parse_config(
        {"apiVersion": API_VERSION, "kind": KIND,
         "profiles": [{"schedulerName": "default-scheduler", "plugins": {"permit": {"enabled": [{"name": "Gang"}]}}}]},
        registry, UPSTREAM_ONLY,
    )
    nodes = [{"kind": "Node", "metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}
             for i in range(2)]
    snapshot = snapshot_from_objects([("test", obj) for obj in nodes + pods])
    sim = Simulation(snapshot, config, registry, tie_break="name")
    return sim, sim.run()


def member(name: str, group: str, size: int, cpu: str = "1") -> dict:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name,
                                        "labels": {GROUP_LABEL: group, SIZE_LABEL: str(size)}},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


def test_a_complete_gang_binds_together():
    sim, result = simulate([member(f"g{i}", "a", 3) for i in range(3)])
    assert sorted(pod for pod, _ in result.placements) == ["default/g0", "default/g1", "default/g2"]
    assert len(sim.scheduler.waiting_pods) == 0


def test_waiting_pods_hold_their_resources():
    # The first two members wait assumed on the nodes; the third fits only beside them.
    # Two nodes of 4 cpu hold two waiting 3-cpu members; the third cannot fit beside
    # them, so the gang never completes and nobody binds.
    sim, result = simulate([member(f"g{i}", "a", 3, cpu="3") for i in range(3)], cpu="4")
    assert result.placements == []
    first_failure = next(e for e in sim.cluster.events if e[0] == "default/g2" and e[2] == "FailedScheduling")
    assert "Insufficient cpu" in first_failure[3]
    # Once the waiting members time out and free their room, g2 is tried again and waits in
    # turn: this naive gang plugin has its members wake each other forever (upstream would
    # too); the simulation notices and stops.
    assert "rejected due to timeout after waiting 30s at plugin Gang" in result.outcomes["default/g2"].message
    assert result.livelocked


def test_an_incomplete_gang_times_out_and_returns_to_the_queue():
    sim, result = simulate([member("g0", "b", 2)], timeout=30.0)
    assert result.placements == []
    assert result.virtual_seconds >= 30.0
    outcome = result.outcomes["default/g0"]
    assert outcome.node is None
    assert ("default/g0", "Warning", "FailedScheduling",
            "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Gang.") in sim.cluster.events
    assert sim.scheduler.cache.table.req_cpu[: sim.scheduler.cache.table.size].sum() == 0  # forgotten
    assert sim.scheduler.queue.where("g0") != ""  # back in the queue, not lost
