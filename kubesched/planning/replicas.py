"""Placing new pods one at a time into a settled simulation, and why the last one did not fit.

``capacity`` asks the scheduler the question cluster-capacity asks: create a replica,
let the scheduler place it, create the next once it is bound, stop at the first one
that does not fit. ``ReplicaSimulation.place`` does that on one loaded cluster: the
snapshot is loaded once and each replica costs one scheduling attempt (plus those of
any pending pods its binding wakes), not a new simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cluster.simulated import PodOutcome, Simulation
from ..objects.pod import PodInfo
from ..objects.podgroup import PodGroup
from ..scheduler.fit_error import FitError

__all__ = ["ReplicaSimulation", "NodeReason", "node_reasons", "NOT_EVALUATED"]

NOT_EVALUATED = "not evaluated"  # nodes a failed attempt has no status for


class ReplicaSimulation(Simulation):
    """A ``Simulation`` that, once ``run()`` has settled the snapshot's own pending pods,
    takes further pods one at a time."""

    def place(self, pod: PodInfo) -> PodOutcome:
        """Add ``pod`` as a new pending pod and schedule until it is bound or has failed.

        Pods ahead of it in the queue (pending pods its predecessor's binding woke) are
        attempted first, as the scheduler would. A pod the loop cannot decide at once (it
        waits at Permit, or it preempted pods and was nominated to a node: it is retried
        once they are gone) is left to the virtual clock's full loop.
        """
        s = self.scheduler
        outcome = self.outcomes[pod.key] = PodOutcome(pod.key)
        s.on_pod_add(pod)
        gate = s.profiles[pod.scheduler_name].run_pre_enqueue(pod)
        if gate is not None:
            outcome.gated = True
            outcome.message = gate.message
            return outcome
        while not outcome.attempts and s.queue.num_active():
            s.schedule_one()
            self._deliver()
        if not outcome.node and (not outcome.attempts or s.waiting_pods.get(pod.uid) is not None
                                 or self._nominated(pod)):
            self.run()
        return outcome

    def _nominated(self, pod: PodInfo) -> bool:
        current = self.scheduler.pods.get(pod.uid)
        return current is not None and bool(current.nominated_node_name)

    def withdraw(self, pod: PodInfo) -> None:
        """Delete a pending pod (a replica that did not fit), so that no later binding
        wakes it and places it after the count stopped."""
        self.scheduler.on_pod_delete(pod)

    def place_group(self, group: PodGroup, pods: list[PodInfo]) -> list[PodOutcome]:
        """Add a PodGroup and its pods at once, as a controller creates them, and schedule
        until the queue settles (the group's cycle, its binding or its failure, and any
        pending pod the bindings wake); each pod's outcome, in ``pods``' order."""
        s = self.scheduler
        s.on_pod_group_add(group)
        outcomes = []
        for pod in pods:
            outcome = self.outcomes[pod.key] = PodOutcome(pod.key)
            outcomes.append(outcome)
            s.on_pod_add(pod)
        self.run()
        return outcomes

    def withdraw_group(self, group: PodGroup, pods: list[PodInfo]) -> None:
        """Delete a group that did not fit whole, its pods bound or not (a basic group may
        have bound some), so that the cluster holds whole groups only and nothing wakes it."""
        s = self.scheduler
        for pod in pods:
            outcome = self.outcomes.get(pod.key)
            if outcome is not None and outcome.node:
                s.on_pod_delete(pod.copy_with(node_name=outcome.node))
            elif pod.uid in s.pods:
                s.on_pod_delete(pod)
        s.on_pod_group_delete(group)


@dataclass(slots=True)
class NodeReason:
    """Nodes that rejected a pod for the same reason(s)."""

    reason: str
    nodes: list[str]


def node_reasons(error: FitError, node_names: list[str], all_nodes: list[str]) -> list[NodeReason]:
    """Which nodes failed a pod for which reason: the per-node view behind FitError's
    ``0/N nodes are available: ...`` counts. ``node_names`` maps table rows to names at
    the time of the attempt; nodes with no status of their own get the status of nodes
    PreFilter left out (or PreFilter's message when it rejected the pod outright)."""
    diagnosis = error.diagnosis
    groups: dict[str, list[str]] = {}
    statuses = diagnosis.node_statuses(node_names)
    for node, status in statuses.items():
        groups.setdefault(status.message or status.code.label, []).append(node)
    rest = [n for n in all_nodes if n not in statuses]
    if rest:
        if diagnosis.pre_filter_msg:
            reason = diagnosis.pre_filter_msg
        elif diagnosis.absent_status is not None:
            reason = diagnosis.absent_status.message or diagnosis.absent_status.code.label
        else:
            reason = NOT_EVALUATED
        groups.setdefault(reason, []).extend(rest)
    return sorted((NodeReason(reason, sorted(nodes)) for reason, nodes in groups.items()),
                  key=lambda g: (-len(g.nodes), g.reason))
