"""The nominator: which pending pods are nominated to which node (upstream's ``nominator``).

A preemptor is nominated to the node where it evicted victims; until it is placed, the
room it will take there is held against pods of equal or lower priority (the first
pass of filtering with nominated pods). The scheduler keeps this in step with the
pods it sees: a failed attempt may nominate or clear, an update may move or drop the
nomination, a delete or a placement forgets the pod.
"""

from __future__ import annotations

from ..objects.pod import PodInfo

__all__ = ["Nominator"]


class Nominator:
    """Nominated pods by node, each node's in the order they were nominated."""

    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}  # pod uid -> node name

    def add(self, pod: PodInfo, node_name: str | None = None) -> None:
        """Nominate ``pod`` to ``node_name`` (an override), or to its own
        ``nominatedNodeName`` when None; an empty name only removes it."""
        self.delete(pod)
        node = pod.nominated_node_name if node_name is None else node_name
        if not node:
            return
        self._node_of[pod.uid] = node
        self._by_node.setdefault(node, {})[pod.uid] = pod

    def update(self, old: PodInfo | None, new: PodInfo) -> None:
        """upstream's ``UpdateNominatedPod``: a nomination the scheduler made and the pod
        does not carry yet (neither version has ``nominatedNodeName``) is kept; otherwise
        the new version's field decides."""
        node: str | None = None
        if (old is None or not old.nominated_node_name) and not new.nominated_node_name:
            node = self._node_of.get(new.uid)
        self.delete(old if old is not None else new)
        self.add(new, node)

    def delete(self, pod: PodInfo) -> None:
        node = self._node_of.pop(pod.uid, None)
        if node is None:
            return
        pods = self._by_node.get(node)
        if pods is not None:
            pods.pop(pod.uid, None)
            if not pods:
                del self._by_node[node]

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []

    def nominated_node_names(self) -> list[str]:
        return list(self._by_node)

    def __len__(self) -> int:
        return len(self._node_of)
