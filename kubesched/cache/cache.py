"""The scheduler cache: nodes, the pods on them, and pods assumed but not yet bound.

Follows upstream's ``backend/cache``: a pod is *assumed* onto a node as soon as
the scheduling cycle picks it, so the next cycle sees the node as used even while
the binding is still in flight; binding then either *finishes* (and the informer's
Add confirms it) or the pod is *forgotten*. Every change is applied to the
``NodeInfo`` objects and to the columnar ``NodeTable`` together, and announced to
registered ``PodObserver`` indexes (topology counts and the like), so that a cycle
never has to walk all pods.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, fields
from typing import Iterable

from ..framework.views import PodObserver
from ..objects.node import Node
from ..objects.compact import PodCompactor
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from .group_cycle_lists import GroupCycleLists
from .node_table import NodeTable
from .pod_groups import PodGroupStates
from .snapshot import PlacementNodes, Snapshot, SnapshotError

__all__ = ["Cache", "CacheError", "PlacementNodes", "PodObserver", "Snapshot", "SnapshotError"]

# Every PodInfo field but the raw document: what pod observers may read.
_OBSERVED = operator.attrgetter(*(f.name for f in fields(PodInfo) if f.name != "raw"))


class CacheError(RuntimeError):
    """An operation that contradicts the cache's state (assuming a pod twice, ...)."""


@dataclass(slots=True)
class _PodState:
    pod: PodInfo
    node_name: str
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None


class Cache:
    """``keep_raw_objects``: bound pods keep their documents (``PodInfo.raw``), for plugins
    whose spec says ``needs_raw``; by default the cache drops them, to hold a large cluster."""

    def __init__(self, assumed_pod_ttl: float = 0.0, keep_raw_objects: bool = False) -> None:
        self.table = NodeTable()
        self.nodes: dict[str, NodeInfo] = {}
        self.by_row: list[NodeInfo | None] = []
        self.namespaces: dict[str, dict[str, str]] = {}
        self.namespace_generation = 0  # bumps whenever a namespace's labels change (for indexes that cache them)
        self._pods: dict[str, _PodState] = {}  # by uid
        self._orphans: dict[str, dict[str, PodInfo]] = {}  # node name -> pods bound to a node not yet seen
        self._observers: list[PodObserver] = []
        self.assumed_pod_ttl = assumed_pod_ttl  # 0: assumed pods never expire (upstream's default)
        self._snapshot = Snapshot(self)
        self._compactor = PodCompactor(keep_raw=keep_raw_objects)  # bound pods share their common parts
        # Pod groups' members (GenericWorkload): the scheduler turns this on with the gate;
        # off, pods naming a group are plain pods to the cache, as upstream's.
        self.pod_groups = PodGroupStates()
        self.generic_workload = False
        # While a pod-group cycle runs: what upstream's per-cycle snapshot lists leave as they were.
        self.group_cycle: GroupCycleLists | None = None

    # -- observers ----------------------------------------------------------
    def add_observer(self, observer: PodObserver) -> None:
        """Register an incremental index; it is first told of every pod already placed."""
        self._observers.append(observer)
        for info in self.nodes.values():
            for pod in info.pods.values():
                observer.pod_added(pod, info)

    # -- namespaces ---------------------------------------------------------
    def set_namespace(self, name: str, labels: dict[str, str]) -> None:
        self.namespaces[name] = dict(labels)
        self.namespace_generation += 1

    def remove_namespace(self, name: str) -> None:
        if self.namespaces.pop(name, None) is not None:
            self.namespace_generation += 1

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        """A namespace's labels; one not seen has only ``kubernetes.io/metadata.name``."""
        found = self.namespaces.get(namespace)
        if found is None:
            return {"kubernetes.io/metadata.name": namespace}
        return found

    # -- nodes --------------------------------------------------------------
    def add_node(self, node: Node) -> NodeInfo:
        existing = self.nodes.get(node.name)
        if existing is not None:
            return self.update_node(node)
        row = self.table.add_node(node)
        info = NodeInfo(node=node, row=row)
        while len(self.by_row) <= row:
            self.by_row.append(None)
        self.by_row[row] = info
        self.nodes[node.name] = info
        for pod in self._orphans.pop(node.name, {}).values():
            self._place(pod, info)
        self._nodes_changed()
        return info

    def update_node(self, node: Node) -> NodeInfo:
        info = self.nodes.get(node.name)
        if info is None:
            return self.add_node(node)
        info.node = node
        info.generation += 1
        if self.table.update_node(info.row, node):
            self._nodes_changed()
        return info

    def remove_node(self, name: str) -> None:
        info = self.nodes.pop(name, None)
        if info is None:
            return
        for pod in list(info.pods.values()):
            self._unplace(pod, info)
            self._orphans.setdefault(name, {})[pod.uid] = pod
        self.table.remove_node(info.row)
        self.by_row[info.row] = None
        self._nodes_changed()

    def _nodes_changed(self) -> None:
        for observer in self._observers:
            observer.nodes_changed()

    # -- pod-group cycles ---------------------------------------------------
    def begin_pod_group_cycle(self) -> None:
        """A pod-group cycle starts: from now until ``end_pod_group_cycle`` the snapshot's
        ``pod_group_cycle_lists`` answers for upstream's snapshot of this cycle, whose lists
        are not refreshed as members are assumed (``group_cycle_lists``)."""
        self.group_cycle = GroupCycleLists()

    def end_pod_group_cycle(self) -> None:
        self.group_cycle = None

    # -- placing pods -------------------------------------------------------
    def _place(self, pod: PodInfo, info: NodeInfo) -> None:
        if self.group_cycle is not None:
            self.group_cycle.placing(pod, info)
        info.add_pod(pod)
        self.table.account_pod(info.row, pod, 1)
        for observer in self._observers:
            observer.pod_added(pod, info)

    def _unplace(self, pod: PodInfo, info: NodeInfo) -> None:
        if self.group_cycle is not None:
            placed = info.pods.get(pod.uid)
            if placed is not None:
                self.group_cycle.removing(placed, info)
        if info.remove_pod(pod):
            self.table.account_pod(info.row, pod, -1)
            for observer in self._observers:
                observer.pod_removed(pod, info)

    def _attach(self, pod: PodInfo, node_name: str) -> None:
        info = self.nodes.get(node_name)
        if info is None:
            self._orphans.setdefault(node_name, {})[pod.uid] = pod
        else:
            self._place(pod, info)

    def _detach(self, pod: PodInfo, node_name: str) -> None:
        info = self.nodes.get(node_name)
        if info is None:
            self._orphans.get(node_name, {}).pop(pod.uid, None)
        else:
            self._unplace(pod, info)

    # -- pod lifecycle ------------------------------------------------------
    def assume_pod(self, pod: PodInfo, node_name: str) -> None:
        """Account ``pod`` on ``node_name`` before it is bound."""
        if pod.uid in self._pods:
            raise CacheError(f"pod {pod.key} is in the cache, so can't be assumed")
        self._pods[pod.uid] = _PodState(pod, node_name, assumed=True)
        self._attach(pod, node_name)
        if pod.pod_group_name is not None and self.generic_workload:
            self.pod_groups.assume_member(pod)

    def finish_binding(self, pod: PodInfo, now: float) -> None:
        state = self._pods.get(pod.uid)
        if state is not None and state.assumed:
            state.binding_finished = True
            if self.assumed_pod_ttl > 0:
                state.deadline = now + self.assumed_pod_ttl

    def forget_pod(self, pod: PodInfo) -> None:
        """Undo ``assume_pod`` after a failed binding or an unreserve."""
        state = self._pods.get(pod.uid)
        if state is None:
            return
        if not state.assumed:
            raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
        self._detach(state.pod, state.node_name)
        del self._pods[pod.uid]
        if state.pod.pod_group_name is not None and self.generic_workload:
            self.pod_groups.forget_member(state.pod)

    def is_assumed(self, pod: PodInfo) -> bool:
        state = self._pods.get(pod.uid)
        return state is not None and state.assumed

    def add_pod(self, pod: PodInfo) -> None:
        """A bound pod seen by the informer; confirms an assumed one."""
        state = self._pods.get(pod.uid)
        if state is not None and state.assumed and state.pod is pod:
            # The informer hands back the very object that was assumed (the simulator's
            # binding): nothing can differ but the raw document the compact copy drops.
            info = self.nodes.get(state.node_name)
            if info is not None and info.pods.get(pod.uid) is pod:
                compact = self._compactor.compact(pod)
                info.replace_pod(pod, compact)
                state.pod, state.assumed, state.binding_finished, state.deadline = compact, False, False, None
                if pod.pod_group_name is not None and self.generic_workload:
                    self._rejoin_group(pod, compact)
                return
        pod = self._compactor.compact(pod)
        if state is not None:
            if state.assumed:
                if state.node_name != pod.node_name:
                    self._detach(state.pod, state.node_name)
                    self._attach(pod, pod.node_name)
                else:
                    self._swap(state.pod, pod, state.node_name)
                self._pods[pod.uid] = _PodState(pod, pod.node_name)
                if self.generic_workload and (pod.pod_group_name is not None or state.pod.pod_group_name is not None):
                    self._rejoin_group(state.pod, pod)
                return
            self.update_pod(pod)
            return
        self._pods[pod.uid] = _PodState(pod, pod.node_name)
        self._attach(pod, pod.node_name)
        if pod.pod_group_name is not None and self.generic_workload:
            self.pod_groups.add_member(pod)

    def _rejoin_group(self, old: PodInfo, new: PodInfo) -> None:
        """A group member's cache entry replaced (its binding confirmed, a bound pod
        updated): upstream removes the old pod from its group and adds the new one."""
        if old.pod_group_name is not None:
            self.pod_groups.remove_member(old)
        if new.pod_group_name is not None:
            self.pod_groups.add_member(new)

    def _swap(self, old: PodInfo, new: PodInfo, node_name: str) -> None:
        info = self.nodes.get(node_name)
        if (
            info is not None
            and info.pods.get(old.uid) is old
            and old.requests == new.requests
            and old.host_ports == new.host_ports
            and old.pod_affinity == new.pod_affinity
        ):
            # The usual confirmation of an assumed pod: the same pod, bound. The node's sums
            # and the table do not move; observers see it leave and return unless nothing
            # but the raw document differs (then it is the same placement to them).
            info.replace_pod(old, new)
            if _OBSERVED(old) == _OBSERVED(new):
                return
            for observer in self._observers:
                observer.pod_removed(old, info)
            for observer in self._observers:
                observer.pod_added(new, info)
            return
        self._detach(old, node_name)
        self._attach(new, node_name)

    def update_pod(self, pod: PodInfo) -> None:
        state = self._pods.get(pod.uid)
        if state is None or state.assumed:
            self.add_pod(pod)
            return
        pod = self._compactor.compact(pod)
        self._detach(state.pod, state.node_name)
        self._attach(pod, pod.node_name)
        if self.generic_workload and (pod.pod_group_name is not None or state.pod.pod_group_name is not None):
            self._rejoin_group(state.pod, pod)
        state.pod, state.node_name = pod, pod.node_name

    def remove_pod(self, pod: PodInfo) -> None:
        state = self._pods.pop(pod.uid, None)
        if state is not None:
            self._detach(state.pod, state.node_name)
            if state.pod.pod_group_name is not None and self.generic_workload:
                self.pod_groups.remove_member(state.pod)

    # -- pending pod-group members (upstream's {Add,Update,Remove}PodGroupMember) -----
    def add_pod_group_member(self, pod: PodInfo) -> None:
        """A pending pod of a group: it counts towards its group's members from now on."""
        if pod.pod_group_name is not None and self.generic_workload:
            self.pod_groups.add_member(pod)

    def update_pod_group_member(self, old: PodInfo, new: PodInfo) -> None:
        if new.pod_group_name is not None and self.generic_workload:
            self.pod_groups.update_member(old, new)

    def remove_pod_group_member(self, pod: PodInfo) -> None:
        if pod.pod_group_name is not None and self.generic_workload:
            self.pod_groups.remove_member(pod)

    def get_pod(self, uid: str) -> PodInfo | None:
        state = self._pods.get(uid)
        return state.pod if state else None

    def cleanup_assumed_pods(self, now: float) -> list[PodInfo]:
        """Expire assumed pods whose binding finished more than the TTL ago."""
        expired = [
            s.pod
            for s in self._pods.values()
            if s.assumed and s.binding_finished and s.deadline is not None and now >= s.deadline
        ]
        for pod in expired:
            self.forget_pod(pod)
        return expired

    # -- reading ------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def pods(self) -> Iterable[PodInfo]:
        return (s.pod for s in self._pods.values())

    @property
    def pod_count(self) -> int:
        return len(self._pods)

    def node_names(self) -> list[str]:
        return [self.by_row[r].name for r in self.table.order]
