"""Cluster events and queueing hints: what may make an unschedulable pod schedulable.

Mirrors upstream's ``fwk.ClusterEvent``: a resource, an action type (bit flags,
with the fine-grained update kinds), and plugins' hints that answer ``QUEUE`` or
``SKIP`` for a given pod and object change. They live in the framework, not in the
queue, because plugins declare them (``EnqueueExtensions``) and the queue only
evaluates them.

A resource is a string: the well-known ones are ``EventResource`` members (a
``str`` enum, so they compare equal to their names); a plugin that watches its own
objects (a PodGroup, say) names their resource as upstream does,
``"<plural>.<version>.<group>"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntFlag
from typing import Callable

from ..objects.pod import PodInfo

__all__ = [
    "ActionType",
    "EventResource",
    "ClusterEvent",
    "QueueingHint",
    "QueueingHintFn",
    "ClusterEventWithHint",
    "label_of",
    "WILDCARD_EVENT",
    "UNSCHEDULABLE_TIMEOUT",
    "FORCE_ACTIVATE",
    "NODE_ADD",
    "ASSIGNED_POD_DELETE",
    "ASSIGNED_POD_ADD",
]


class ActionType(IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATIONS = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE_NODE_DECLARED_FEATURE = 4096
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_NODE_DECLARED_FEATURE
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATIONS
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
    )
    ALL = ADD | DELETE | UPDATE


class EventResource(str, Enum):
    POD = "Pod"  # the unscheduled pod itself
    ASSIGNED_POD = "AssignedPod"  # pods bound to nodes
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    NAMESPACE = "Namespace"
    SERVICE = "Service"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    POD_GROUP = "scheduling.k8s.io/PodGroup"  # hints get ``objects.podgroup.PodGroup`` records
    WILDCARD = "*"


_POD_KINDS = frozenset({EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD})


@dataclass(slots=True, frozen=True)
class ClusterEvent:
    """Something that happened to (or, registered by a plugin, may happen to) a resource."""

    resource: str
    action: ActionType
    label: str = ""

    def matches(self, other: "ClusterEvent") -> bool:
        """Whether a registered interest (``self``) covers an event that happened (``other``)."""
        if self.resource == EventResource.WILDCARD and self.action == ActionType.ALL:
            return True
        if self.resource != EventResource.WILDCARD and self.resource != other.resource and not (
                # upstream's matchEventResources: an interest in Pod covers assigned and unscheduled pods' events
                self.resource == EventResource.POD and other.resource in _POD_KINDS):
            return False
        if other.action & ActionType.UPDATE == ActionType.UPDATE and self.action & ActionType.UPDATE != ActionType.UPDATE:
            # The generic Update means "no specific kind of update": only an interest in the
            # generic Update hears it (upstream's MatchClusterEvents: incoming <= registered).
            return False
        return bool(self.action & other.action)

    def __str__(self) -> str:
        resource = self.resource.value if isinstance(self.resource, EventResource) else self.resource
        return self.label or f"{resource}{_action_name(self.action)}"


def _action_name(action: ActionType) -> str:
    if action == ActionType.ALL:
        return "*"
    names = [a.name for a in ActionType if a & action and a.bit_count() == 1 and a.name]
    return "|".join(n.title().replace("_", "") for n in names) or "None"


class QueueingHint(Enum):
    """A hint's answer: whether the event may make the pod schedulable."""

    SKIP = 0
    QUEUE = 1


QueueingHintFn = Callable[[PodInfo, object | None, object | None], QueueingHint]
"""``hint(pod, old, new)``: ``pod`` was rejected by the plugin; ``old``/``new`` are the
changed object before and after (``None`` on add / delete). Its type follows the
event's resource: ``Node`` for nodes, ``PodInfo`` for pods, the raw object (a
``Mapping``) for resources the scheduler does not model. A hint that raises counts
as QUEUE, so a buggy hint costs a retry, never a stranded pod."""


@dataclass(slots=True, frozen=True)
class ClusterEventWithHint:
    """One registration of ``EnqueueExtensions.events_to_register``; no hint means always QUEUE."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None


def label_of(event: ClusterEvent) -> str:
    return str(event)


# Events the scheduler itself raises.
WILDCARD_EVENT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "WildCardEvent")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
