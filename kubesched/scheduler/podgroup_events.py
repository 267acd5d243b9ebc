"""PodGroups as informers report them (GenericWorkload), and the events they raise.

The scheduler keeps every ``scheduling.k8s.io/v1alpha2`` PodGroup in its directory (the
lister GangScheduling, the placement generator and the condition update read), and each
change is the cluster event ``PodGroup/Add`` (or Update, Delete) for the queueing hints:
GangScheduling wakes a gated member when its group appears. With GenericWorkload off the
scheduler watches no PodGroup, as upstream registers no informer for them.
"""

from __future__ import annotations

from ..cache.pod_groups import PodGroupDirectory
from ..framework.events import ActionType, ClusterEvent, EventResource
from ..objects.podgroup import PodGroup
from ..queue.scheduling_queue import SchedulingQueue

__all__ = ["PodGroupEvents", "POD_GROUP_ADD", "POD_GROUP_UPDATE", "POD_GROUP_DELETE", "UNSCHEDULED_POD_ADD"]

# A pending pod added (upstream's EventUnscheduledPodAdd): with GangScheduling, the pod-add
# handler raises it so gated members of the pod's group take another look.
UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD, "UnscheduledPodAdd")

POD_GROUP_ADD = ClusterEvent(EventResource.POD_GROUP, ActionType.ADD, "PodGroupAdd")
POD_GROUP_UPDATE = ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE, "PodGroupUpdate")
POD_GROUP_DELETE = ClusterEvent(EventResource.POD_GROUP, ActionType.DELETE, "PodGroupDelete")


class PodGroupEvents:
    """``Scheduler``'s PodGroup informer handlers."""

    queue: SchedulingQueue
    pod_groups: PodGroupDirectory
    generic_workload: bool

    def on_pod_group_add(self, group: PodGroup) -> None:
        if not self.generic_workload:
            return
        old = self.pod_groups.upsert(group)
        if old is not None:  # a relist's replay of a known group
            self.queue.move_all_to_active_or_backoff(POD_GROUP_UPDATE, old, group)
            return
        self.queue.move_all_to_active_or_backoff(POD_GROUP_ADD, None, group)

    def on_pod_group_update(self, old: PodGroup | None, new: PodGroup) -> None:
        if not self.generic_workload:
            return
        previous = self.pod_groups.upsert(new)
        self.queue.move_all_to_active_or_backoff(POD_GROUP_UPDATE, old if old is not None else previous, new)

    def on_pod_group_delete(self, group: PodGroup) -> None:
        if not self.generic_workload:
            return
        if self.pod_groups.remove(group.namespace, group.name) is not None:
            self.queue.move_all_to_active_or_backoff(POD_GROUP_DELETE, group, None)
