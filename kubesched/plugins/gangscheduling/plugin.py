"""GangScheduling: "all or nothing" for the pods of a PodGroup with the gang policy (``minCount``).

Two gates, as upstream's plugin (GangScheduling gate, on top of GenericWorkload):

* PreEnqueue holds a gang member out of the active queue until the scheduler knows
  ``minCount`` pods of its group (unscheduled, assumed or bound), and until the PodGroup
  itself exists;
* Permit holds each member that found a node (Wait, five minutes) until ``minCount``
  members are assumed or bound, asking the queue to activate the group's unscheduled pods
  meanwhile; the member that completes the quorum allows every assumed member waiting.

Inside a pod-group cycle the quorum is read from the pod-group state with the cycle's
assumed pods in it, so a gang that cannot reach ``minCount`` in one cycle binds nothing.
Pods of groups with the basic policy, and pods of no group, pass both gates. Upstream's
plugin has no Reserve or Unreserve: a rejected waiting pod is forgotten by the scheduler,
which takes it out of the group's assumed pods.
"""

from __future__ import annotations

from ...framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    PodGroupState,
    QueueingHint,
    Status,
)
from ...framework.args import go_quote
from ...framework.podgroups import pod_group_state_not_found
from ...objects.pod import PodInfo
from ...objects.podgroup import PodGroup
from ..helper import matching_scheduling_group

__all__ = ["NAME", "PERMIT_TIMEOUT_SECONDS", "WAITING_AT_PERMIT", "WAITING_AT_PRE_ENQUEUE", "GangScheduling", "new"]

NAME = "GangScheduling"
PERMIT_TIMEOUT_SECONDS = 5 * 60.0
"""How long a gang member waits at Permit for the quorum before it is rejected."""
WAITING_AT_PRE_ENQUEUE = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"


def lister_not_found(name: str) -> str:
    """The PodGroup informer lister's not-found error, as client-go words it."""
    return f'podgroup.scheduling.k8s.io "{name}" not found'


class GangScheduling:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    # -- queueing ---------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A new pod may be the one that completes a gang (a pod's group never changes, so
        # updates do not matter); a new PodGroup may let its waiting pods in (PodGroups are
        # immutable, so updates do not matter either).
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD), self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD),
                                 self.is_schedulable_after_pod_group_added),
        ]

    def is_schedulable_after_pod_added(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        if not isinstance(new, PodInfo):
            return QueueingHint.QUEUE  # unreadable: retry rather than strand the pod
        return QueueingHint.QUEUE if matching_scheduling_group(pod, new) else QueueingHint.SKIP

    def is_schedulable_after_pod_group_added(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        if not isinstance(new, PodGroup):
            return QueueingHint.QUEUE
        if pod.pod_group_name is None or pod.namespace != new.namespace or pod.pod_group_name != new.name:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    # -- PreEnqueue -------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Held until the PodGroup exists and, for a gang, ``minCount`` of its pods are known."""
        group_name = pod.pod_group_name
        if group_name is None:
            return None
        manager = self._handle.pod_group_manager
        group = manager.pod_group(pod.namespace, group_name)
        if group is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f"waiting for pods's pod group {go_quote(group_name)} to appear in scheduling queue")
        if group.min_count is None:
            return None
        state = manager.pod_group_states().get(pod.namespace, group_name)
        if state is None:
            return Status(Code.ERROR, pod_group_state_not_found(pod.namespace, group_name))
        if state.all_pods_count() < group.min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_AT_PRE_ENQUEUE)
        return None

    # -- Permit -----------------------------------------------------------------------
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """Wait until ``minCount`` members are assumed or bound; the member that completes the
        quorum allows the others."""
        group_name = pod.pod_group_name
        if group_name is None:
            return None, 0.0
        manager = self._handle.pod_group_manager
        group = manager.pod_group(pod.namespace, group_name)
        if group is None:  # deleted meanwhile: an error, retried when the group is added again
            return Status(Code.ERROR, f"failed to get podGroup {pod.namespace}/{group_name}: "
                                      f"{lister_not_found(group_name)}"), 0.0
        if group.min_count is None:
            return None, 0.0
        # One lister serves both of upstream's: in a pod-group cycle the cache holds the
        # cycle's assumed pods (its snapshot), otherwise the scheduler's runtime state.
        group_state = manager.pod_group_states().get(pod.namespace, group_name)
        if group_state is None:
            return Status(Code.ERROR, pod_group_state_not_found(pod.namespace, group_name)), 0.0
        if group_state.scheduled_pods_count() < group.min_count:
            # The pods still unscheduled may have been waiting for this one: let them try.
            self._handle.activate(group_state.unscheduled_pods())
            return Status(Code.WAIT, WAITING_AT_PERMIT), PERMIT_TIMEOUT_SECONDS
        self._allow_waiting(group_state)
        return None, 0.0

    def _allow_waiting(self, group_state: PodGroupState) -> None:
        """Allow every assumed member waiting at Permit (upstream looks each assumed pod up, so the
        cost is the group's, not every waiting pod's), in the order they began to wait.

        Upstream ranges over ``AssumedPods()``, a set, so its order is random; the order
        changes no decision, status or message, which is why kubesched keeps the waiting
        order (deterministic) rather than imitating a random one:

        * the same pods are allowed whatever the order (every assumed member found waiting),
          and allowing one neither rejects another nor changes the quorum the others need:
          they are allowed already, and each binds on the node it was assumed on;
        * an allowed pod only leaves WaitOnPermit; upstream then binds each in its own
          goroutine, so the order of the binds, of their Scheduled events and of the informer
          confirming them (the AssignedPodAdd events that may wake other pods) is the API
          server's, not this loop's. kubesched's simulator binds an allowed pod at once, so
          there these come in waiting order (the group cycle's member order), which is one of
          the orders upstream can produce; the member completing the quorum binds after them,
          as its own binding cycle starts only when its Permit returns.
        """
        for uid in list(group_state.assumed_pods()):  # in assume order, which is the waiting order
            waiting = self._handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(NAME)


def new(args: None, handle: Handle) -> GangScheduling:
    return GangScheduling(handle)
