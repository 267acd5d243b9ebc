"""What an unscheduled pod's update changed that scheduling reads (upstream's
``PodSchedulingPropertiesChange``).

An update of a pod waiting in the queue becomes one event per kind of change:
labels, a request scaled down or removed, its last scheduling gate removed, a
toleration added. Anything else (the scheduler's own ``PodScheduled`` condition, a
``nominatedNodeName``, an annotation) is the generic ``Update``, which only a plugin
registered for the generic update hears. That is what keeps kubesched's own status
patch from sending the pod it reported unschedulable straight back to be tried again.
(An update carrying the resourceVersion already known, which upstream's handler also
ignores, never reaches the queue: the informer makes no call for it.)
"""

from __future__ import annotations

from ..framework.events import ActionType, ClusterEvent, EventResource
from ..objects.pod import PodInfo
from ..objects.resources import Resource

__all__ = ["UNSCHEDULED_POD_UPDATE_EVENT", "ASSIGNED_POD_UPDATE_EVENT", "pod_scheduling_properties_change"]

#: The generic update of a pending pod (``framework.EventUnscheduledPodUpdate``).
UNSCHEDULED_POD_UPDATE_EVENT = ClusterEvent(EventResource.POD, ActionType.UPDATE, "UpdatePod")

#: The generic update of a bound pod (``framework.EventAssignedPodUpdate``).
ASSIGNED_POD_UPDATE_EVENT = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)

_KINDS = (ActionType.UPDATE_POD_LABEL, ActionType.UPDATE_POD_SCALE_DOWN,
          ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, ActionType.UPDATE_POD_TOLERATIONS)
# One event per kind of change, per resource: a pending pod's (Pod) and a bound pod's (AssignedPod).
_EVENTS = {resource: {kind: ClusterEvent(resource, kind) for kind in _KINDS}
           for resource in (EventResource.POD, EventResource.ASSIGNED_POD)}
_GENERIC = {EventResource.POD: UNSCHEDULED_POD_UPDATE_EVENT, EventResource.ASSIGNED_POD: ASSIGNED_POD_UPDATE_EVENT}


def _scaled_down(old: Resource, new: Resource) -> bool:
    """Some request of ``old`` is lower in ``new`` or gone (extractPodScaleDown)."""
    if new.milli_cpu < old.milli_cpu or new.memory < old.memory or new.ephemeral_storage < old.ephemeral_storage:
        return True
    return any(new.scalar.get(name, 0) < amount for name, amount in old.scalar.items())


def pod_scheduling_properties_change(old: PodInfo | None, new: PodInfo,
                                     resource: EventResource = EventResource.POD) -> list[ClusterEvent]:
    """The events an update of a pod amounts to, in upstream's order; the generic update
    when none of the specific kinds changed. ``resource`` is ``POD`` for a pending pod,
    ``ASSIGNED_POD`` for a bound one (whose requests may shrink by an in-place resize)."""
    generic = _GENERIC[resource]
    if old is None:
        return [generic]
    kinds = _EVENTS[resource]
    events: list[ClusterEvent] = []
    if old.labels != new.labels:
        events.append(kinds[ActionType.UPDATE_POD_LABEL])
    if _scaled_down(old.requests.requests, new.requests.requests):
        events.append(kinds[ActionType.UPDATE_POD_SCALE_DOWN])
    if old.scheduling_gates and not new.scheduling_gates:
        events.append(kinds[ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED])
    if len(old.tolerations) != len(new.tolerations):  # tolerations can only be added
        events.append(kinds[ActionType.UPDATE_POD_TOLERATIONS])
    return events or [generic]
