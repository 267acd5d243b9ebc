"""What preemption reads of the scheduler beyond the framework: the queue's nominator."""

from __future__ import annotations

from typing import Protocol

from ...objects.pod import PodInfo

__all__ = ["NominatedPods"]


class NominatedPods(Protocol):
    """The queue's nominator, as filtering reads it (upstream's ``PodNominator``)."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to the node, in the order they were nominated."""
        ...

    def nominated_node_names(self) -> list[str]:
        """Nodes with at least one nominated pod."""
        ...
