"""SchedulingGates: a pod with ``spec.schedulingGates`` waits outside the active queue."""

from __future__ import annotations

from ..framework import ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource, Handle, Status
from ..objects.pod import PodInfo

NAME = "SchedulingGates"


class SchedulingGates:
    name = NAME

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.scheduling_gates:
            return None
        gates = " ".join(pod.scheduling_gates)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{gates}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED), None)]


def new(args: None, handle: Handle) -> SchedulingGates:
    return SchedulingGates()
