"""The scheduler's event handlers: what informers report, fed to the cache and the queue.

Nodes, namespaces and pods added, updated or deleted: bound pods go to the cache, pending
pods of our profiles to the queue, and each change becomes the cluster event that moves
waiting pods (with the action an update amounts to: allocatable, labels, taints, a pod
scaled down). Its own module because feeding the core is one job and the scheduling and
binding cycles another; ``Scheduler`` inherits it.

Some changes that are not to bound pods or nodes still free room, and upstream turns
them into an ``AssignedPodDelete`` so that the pods waiting for room retry: a pending
pod's nomination moved or cleared, or a nominated pending pod deleted (pods of equal or
lower priority counted it as placed there), and an assumed pod deleted (it is forgotten
at once unless it waits at Permit, whose rejection frees it).
"""

from __future__ import annotations

from ..cache.cache import Cache
from typing import Callable

from ..framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
)
from ..framework.runtime import Framework
from ..objects.node import Node
from ..objects.pod import PodInfo
from ..framework.waiting_pods import WaitingPods
from ..queue.nominator import Nominator
from ..queue.pod_changes import pod_scheduling_properties_change
from ..queue.scheduling_queue import ACTIVE, SchedulingQueue
from .handle import HandleHub
from .podgroup_events import UNSCHEDULED_POD_ADD

__all__ = ["EventHandlers"]

_NO_ACTION = ActionType(0)  # made once: calling an enum costs a microsecond
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete")
# The message a waiting pod deleted from the cluster is rejected with (upstream's RejectWaitingPod).
_REMOVED = "removed"


def _priority_at_most(priority: int) -> Callable[[PodInfo], bool]:
    """Only pods of equal or lower priority counted a nominated pod as placed (getLEPriorityPreCheck)."""
    return lambda pod: pod.priority <= priority


class EventHandlers:
    """The informers' entry points of ``Scheduler``."""

    profiles: dict[str, Framework]
    cache: Cache
    queue: SchedulingQueue
    hub: HandleHub
    nominator: Nominator
    pods: dict[str, PodInfo]
    waiting_pods: WaitingPods
    gang_scheduling: bool

    def responsible_for(self, pod: PodInfo) -> bool:
        return pod.scheduler_name in self.profiles

    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def on_node_update(self, old: Node | None, new: Node) -> None:
        self.cache.update_node(new)
        action = _node_update_action(old, new)
        if action:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE, action), old, new)

    def on_node_delete(self, node: Node) -> None:
        self.queue.move_all_to_active_or_backoff(NODE_DELETE, node, None)  # PodTopologySpread's domains may shrink
        self.cache.remove_node(node.name)

    def on_namespace(self, name: str, labels: dict[str, str] | None) -> None:
        if labels is None:
            self.cache.remove_namespace(name)
            return
        self.cache.set_namespace(name, labels)
        self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NAMESPACE, ActionType.ADD | ActionType.UPDATE), None, name)

    def on_pod_add(self, pod: PodInfo) -> None:
        for handler in self.hub.pod_handlers:
            handler.on_pod_add(pod)
        if pod.node_name:
            self.cache.add_pod(pod)  # the cache keeps its own compact copy, without the raw document
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)
        elif self.responsible_for(pod):
            # A pod being deleted is queued too (and counts in its group): popped, it is
            # skipped with an event (upstream's skipPodSchedule); its deletion removes it.
            self.pods[pod.uid] = pod
            self.cache.add_pod_group_member(pod)  # a pod group's member counts from now on (GenericWorkload)
            if self.queue.add(pod) == ACTIVE and pod.nominated_node_name:
                # Nominated before we saw it (another replica, a restart): it holds its room, as
                # upstream's Add does for a pod that is not gated.
                self.nominator.add(pod)
            if self.gang_scheduling:  # it may complete a gang whose members wait at the gate
                self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, None, pod)

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None:
        for handler in self.hub.pod_handlers:
            handler.on_pod_update(old, new)
        if new.node_name:
            was_pending = self.pods.pop(new.uid, None)
            if was_pending is not None:
                self.queue.delete(was_pending)
                self.cache.remove_pod_group_member(was_pending)  # joins again as the cache's bound pod
            self.nominator.delete(new)
            self.cache.update_pod(new)  # the cache keeps its own compact copy, without the raw document
            if old is None or not old.node_name:  # the informer's view of our binding, or a pod bound elsewhere
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, new)
                return
            for event in pod_scheduling_properties_change(old, new, EventResource.ASSIGNED_POD):
                self.queue.move_all_to_active_or_backoff(event, old, new)
        elif self.responsible_for(new):
            previous = old if old is not None else self.pods.get(new.uid)
            if previous is not None:
                self.cache.update_pod_group_member(previous, new)
            if self.cache.is_assumed(new):
                # Being bound: not the queue's (upstream's updatePodInSchedulingQueue); a
                # deletion that starts now frees its room.
                if new.uid in self.pods:
                    self.pods[new.uid] = new
                if new.terminating and (old is None or not old.terminating):
                    self._assumed_pod_deleted(new)
                return
            self.pods[new.uid] = new
            self.nominator.update(old, new)
            self.queue.update(old, new)
            if old is not None and old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
                # It no longer holds room on its old node for pods of equal or lower priority.
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old, None, _priority_at_most(old.priority))

    def on_pod_delete(self, pod: PodInfo) -> None:
        for handler in self.hub.pod_handlers:
            handler.on_pod_delete(pod)
        if pod.node_name:
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)
            return
        known = self.pods.pop(pod.uid, None)  # None: not ours, or deleted already (deletionTimestamp first)
        self.cache.remove_pod_group_member(pod)
        self.nominator.delete(pod)
        self.queue.delete(pod)
        if self.cache.is_assumed(pod):
            self._assumed_pod_deleted(pod)
        elif known is not None and pod.nominated_node_name:
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None, _priority_at_most(pod.priority))

    def _assumed_pod_deleted(self, pod: PodInfo) -> None:
        """upstream's ``handleAssumedPodDeletion``: a pod waiting at Permit is rejected (its
        binding cycle forgets it); one further on is forgotten now, its binding left to fail."""
        assumed = self.cache.get_pod(pod.uid)
        if assumed is None:
            return
        waiting = self.waiting_pods.get(pod.uid)
        if waiting is not None:
            waiting.reject("", _REMOVED)
        else:
            self.cache.forget_pod(assumed)
        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None)


def _node_update_action(old: Node | None, new: Node) -> ActionType:
    if old is None:
        return ActionType.ADD
    action = _NO_ACTION
    if old.allocatable != new.allocatable:
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        action |= ActionType.UPDATE_NODE_LABEL
    if old.taints != new.taints or old.unschedulable != new.unschedulable:
        action |= ActionType.UPDATE_NODE_TAINT
    if old.declared_features != new.declared_features:
        action |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    if old.annotations != new.annotations:
        action |= ActionType.UPDATE_NODE_ANNOTATION
    return action

