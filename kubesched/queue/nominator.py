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

    __slots__ = ("_by_node", "_node_of", "_versions", "_next_version", "_log", "_log_base")

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}  # pod uid -> node name
        self._versions: dict[str, int] = {}  # node name -> version of its nominated pods
        self._next_version = 1
        # _log[i] is the node whose nominated pods changed at version _log_base + i.
        self._log: list[str] = []
        self._log_base = 1

    def add(self, pod: PodInfo, node_name: str | None = None) -> None:
        """Nominate ``pod`` to ``node_name`` (an override), or to its own
        ``nominatedNodeName`` when None; an empty name only removes it."""
        self.delete(pod)
        node = pod.nominated_node_name if node_name is None else node_name
        if not node:
            return
        self._node_of[pod.uid] = node
        self._by_node.setdefault(node, {})[pod.uid] = pod
        self._bump(node)

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
        self._bump(node)

    def _bump(self, node: str) -> None:
        self._versions[node] = self._next_version
        self._next_version += 1
        self._log.append(node)
        if len(self._log) > 4096:
            half = len(self._log) // 2
            del self._log[:half]
            self._log_base += half

    @property
    def version(self) -> int:
        """The version the next change will have: every change so far is below it."""
        return self._next_version

    def changed_since(self, version: int) -> list[str] | None:
        """Nodes whose nominated pods changed at ``version`` or later (repeats possible), or
        None when that is too long ago to tell."""
        if version < self._log_base:
            return None
        return self._log[version - self._log_base:]

    def node_version(self, node_name: str) -> int:
        """Changes whenever the pods nominated to the node change (0: never had any)."""
        return self._versions.get(node_name, 0)

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []

    def nominated_node_names(self) -> list[str]:
        return list(self._by_node)

    def __len__(self) -> int:
        return len(self._node_of)
