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

    def node_of(self, uid: str) -> str | None:
        """The node the pod is nominated to, if any."""
        ...

    def node_version(self, node_name: str) -> int:
        """A number that changes whenever the pods nominated to the node change."""
        ...

    @property
    def version(self) -> int:
        """Grows with every change of any node's nominated pods."""
        ...

    def changed_since(self, version: int) -> list[str] | None:
        """Nodes whose nominated pods changed since ``version`` (None: too long ago to tell)."""
        ...
