"""Upstream's names for the queue's incoming-pod metric (``scheduler_queue_incoming_pods_total``).

The metric counts every pod entering a sub-queue, labelled ``queue`` (``active``,
``backoff``, ``unschedulable``; gated pods wait among the unschedulable ones upstream
and are counted there) and ``event``: a fixed name for the queue's own moves, or the
``ClusterEvent.Label()`` of the event that moved the pod: its custom label if it has
one, else the resource followed by the action (``NodeAdd``, ``AssignedPodDelete``,
``NodeUpdateNodeLabel``, ``UnschedulablePodUpdate``).
"""

from __future__ import annotations

from ..framework.events import ActionType, ClusterEvent, EventResource
from ..objects.pod import PodInfo

__all__ = [
    "ACTIVE_Q",
    "BACKOFF_Q",
    "UNSCHEDULABLE_Q",
    "SCHEDULE_ATTEMPT_FAILURE",
    "BACKOFF_COMPLETE",
    "POP_FROM_BACKOFF_Q",
    "FORCE_ACTIVATE",
    "UNSCHEDULABLE_TIMEOUT",
    "UNSCHEDULED_POD_ADD",
    "UNSCHEDULED_POD_UPDATE",
    "event_label",
    "pod_update_label",
]

ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_Q = "active", "backoff", "unschedulable"

SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
# framework.EventUnscheduledPodAdd / EventUnscheduledPodUpdate: resource "UnschedulablePod"
UNSCHEDULED_POD_ADD = "UnschedulablePodAdd"
UNSCHEDULED_POD_UPDATE = "UnschedulablePodUpdate"

# Upstream names an unscheduled pod's resource "UnschedulablePod"; kubesched's enum says "UnscheduledPod".
_RESOURCE_NAMES = {EventResource.UNSCHEDULED_POD.value: "UnschedulablePod"}

# ActionType.String(): one name per bit, "Update" and "All" for the unions, "" for any other union.
_ACTION_NAMES = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATIONS: "UpdatePodTolerations",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.UPDATE: "Update",
    ActionType.ALL: "All",
}

# Upstream splits a node or pod update into one event per kind of change, in this order
# (NodeSchedulingPropertiesChange, PodSchedulingPropertiesChange), and the first one
# that moves the pod names the move. kubesched sends one event with the kinds or-ed.
_SPLIT_ORDER = (
    ActionType.UPDATE_NODE_TAINT,  # spec.unschedulable cleared comes first, as a taint change
    ActionType.UPDATE_NODE_ALLOCATABLE,
    ActionType.UPDATE_NODE_LABEL,
    ActionType.UPDATE_NODE_CONDITION,
    ActionType.UPDATE_NODE_ANNOTATION,
    ActionType.UPDATE_NODE_DECLARED_FEATURE,
    ActionType.UPDATE_POD_LABEL,
    ActionType.UPDATE_POD_SCALE_DOWN,
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
    ActionType.UPDATE_POD_TOLERATIONS,
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM,
)

_cache: dict[tuple[str, str, int], str] = {}


def event_label(event: ClusterEvent) -> str:
    """``ClusterEvent.Label()`` as upstream gives it to the metric."""
    key = (event.label, str(event.resource), int(event.action))
    found = _cache.get(key)
    if found is None:
        found = _cache[key] = _label(event)
    return found


def _label(event: ClusterEvent) -> str:
    resource = event.resource.value if isinstance(event.resource, EventResource) else str(event.resource)
    if event.label and event.label != resource + _ACTION_NAMES.get(event.action, ""):
        return event.label  # a custom label (UnschedulableTimeout, ForceActivate, NodeAdd, ...)
    resource = _RESOURCE_NAMES.get(resource, resource)
    action = _ACTION_NAMES.get(event.action)
    if action is None:  # an or-ed update: named after its first kind, as upstream's split events
        action = next((_ACTION_NAMES[a] for a in _SPLIT_ORDER if a & event.action), "")
    return resource + action


def pod_update_label(old: PodInfo | None, new: PodInfo) -> str:
    """The label of the first event upstream's PodSchedulingPropertiesChange extracts
    from an unscheduled pod's update (labels, scale down, gates removed, tolerations)."""
    if old is None:
        return UNSCHEDULED_POD_UPDATE
    if old.labels != new.labels:
        return "UnschedulablePodUpdatePodLabel"
    a, b = old.requests.requests, new.requests.requests
    if b.milli_cpu < a.milli_cpu or b.memory < a.memory or b.ephemeral_storage < a.ephemeral_storage:
        return "UnschedulablePodUpdatePodScaleDown"
    if old.scheduling_gates and not new.scheduling_gates:
        return "UnschedulablePodUpdatePodSchedulingGatesEliminated"
    if len(old.tolerations) != len(new.tolerations):
        return "UnschedulablePodUpdatePodTolerations"
    return UNSCHEDULED_POD_UPDATE

