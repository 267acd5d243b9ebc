"""Cluster events and queueing hints: what may make an unschedulable pod schedulable.

Mirrors upstream's ``fwk.ClusterEvent``: a resource, an action type (bit flags,
with the fine-grained update kinds), and plugins' hints that answer ``QUEUE`` or
``SKIP`` for a given pod and object change.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntFlag
from typing import Any, Callable

__all__ = ["ActionType", "EventResource", "ClusterEvent", "QueueingHint", "HintFn", "label_of"]


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
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
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
    WILDCARD = "*"


@dataclass(slots=True, frozen=True)
class ClusterEvent:
    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, other: "ClusterEvent") -> bool:
        """Whether a registered interest (``self``) covers an event that happened (``other``)."""
        if self.resource == EventResource.WILDCARD and self.action == ActionType.ALL:
            return True
        if self.resource != EventResource.WILDCARD and self.resource != other.resource:
            return False
        return bool(self.action & other.action)

    def __str__(self) -> str:
        return self.label or f"{self.resource.value}{_action_name(self.action)}"


def _action_name(action: ActionType) -> str:
    if action == ActionType.ALL:
        return "*"
    return "|".join(a.name.title().replace("_", "") for a in ActionType if a in action and a.bit_count() == 1) or "None"


class QueueingHint(Enum):
    SKIP = 0
    QUEUE = 1


HintFn = Callable[[Any, Any, Any], QueueingHint]


def label_of(event: ClusterEvent) -> str:
    return str(event)


# Events the scheduler itself raises.
WILDCARD_EVENT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "WildCardEvent")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")

__all__ += ["WILDCARD_EVENT", "UNSCHEDULABLE_TIMEOUT", "FORCE_ACTIVATE", "NODE_ADD", "ASSIGNED_POD_DELETE", "ASSIGNED_POD_ADD"]
