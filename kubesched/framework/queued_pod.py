"""``QueuedPodInfo``: a pod as the scheduling queue tracks it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..objects.pod import PodInfo

__all__ = ["QueuedPodInfo"]


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod: PodInfo
    timestamp: float  # when the pod was (re-)added to the queue; PrioritySort's tie-break
    seq: int = 0  # arrival order, the last tie-break (snapshot order in the simulator)
    attempts: int = 0
    initial_attempt_timestamp: float | None = None  # when the pod first entered activeQ
    # The order pods first entered activeQ: a pod group orders its members by
    # ``initial_attempt_timestamp``, and a virtual clock gives many pods one instant.
    initial_attempt_order: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    backoff_expiry: float = 0.0

    @property
    def uid(self) -> str:
        return self.pod.uid

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)
