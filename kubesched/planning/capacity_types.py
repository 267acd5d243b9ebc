"""What ``capacity`` reports about one kind of thing it counts (replicas of a pod, whole
pod groups): the termination types and record, and a pod's requirements. Their own
module so that the replica counter (``capacity.py``) and the gang counter
(``gang_capacity.py``) share them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

from ..objects.pod import PodInfo

__all__ = ["PodRequirements", "Termination", "requirements_of", "UNSCHEDULABLE", "LIMIT_REACHED", "SCHEDULING_GATED",
           "FAILED"]

# Termination types, as cluster-capacity names its ``FailType``.
UNSCHEDULABLE = "Unschedulable"
LIMIT_REACHED = "LimitReached"
SCHEDULING_GATED = "SchedulingGated"
FAILED = "Error"  # the attempt ended with an error other than "no node fits"


@dataclass(slots=True)
class PodRequirements:
    """What one replica asks for (cluster-capacity's "pod requirements")."""

    cpu_millis: int
    memory_bytes: int
    ephemeral_storage_bytes: int
    extended: dict[str, int]
    node_selector: dict[str, str]
    priority: int
    scheduler_name: str


@dataclass(slots=True)
class Termination:
    """Why counting stopped: ``type`` is Unschedulable, LimitReached, SchedulingGated or Error."""

    type: str
    message: str

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


def requirements_of(pod: PodInfo) -> PodRequirements:
    r = pod.requests.requests
    return PodRequirements(r.milli_cpu, r.memory, r.ephemeral_storage, dict(sorted(r.scalar.items())),
                           dict(pod.node_selector), pod.priority, pod.scheduler_name)
