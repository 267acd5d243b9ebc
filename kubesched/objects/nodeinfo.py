"""``NodeInfo``: a node with the pods on it and their running totals (upstream's ``framework.NodeInfo``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .node import Node
from .pod import HostPort, PodInfo
from .resources import Resource

__all__ = ["NodeInfo", "HostPortInfo"]

ALL_IPS = "0.0.0.0"


class HostPortInfo:
    """Host ports in use on a node: ip -> {(protocol, port)}, as ``framework.HostPortInfo``."""

    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, dict[tuple[str, int], int]] = {}

    def add(self, port: HostPort) -> None:
        self._by_ip.setdefault(port.ip, {})[(port.protocol, port.port)] = 1

    def remove(self, port: HostPort) -> None:
        """As upstream's set: the port is free again even if another pod declared it too."""
        pairs = self._by_ip.get(port.ip)
        if not pairs:
            return
        pairs.pop((port.protocol, port.port), None)
        if not pairs:
            del self._by_ip[port.ip]

    def conflicts(self, port: HostPort) -> bool:
        """``CheckConflict``: 0.0.0.0 on either side conflicts with every IP."""
        if port.port <= 0:
            return False
        key = (port.protocol, port.port)
        if port.ip == ALL_IPS:
            return any(key in pairs for pairs in self._by_ip.values())
        for ip in (ALL_IPS, port.ip):
            pairs = self._by_ip.get(ip)
            if pairs and key in pairs:
                return True
        return False

    def __len__(self) -> int:
        return sum(len(p) for p in self._by_ip.values())


@dataclass(slots=True, eq=False)
class NodeInfo:
    """A node, its pods and the sums the filters and scores read.

    ``row`` is the node's row in the node table, so per-node and batch plugins
    see the same node.
    """

    node: Node
    row: int
    pods: dict[str, PodInfo] = field(default_factory=dict)  # by uid, in arrival order
    requested: Resource = field(default_factory=Resource)
    non_zero_requested: Resource = field(default_factory=Resource)
    used_ports: HostPortInfo = field(default_factory=HostPortInfo)
    pods_with_affinity: dict[str, PodInfo] = field(default_factory=dict)
    pods_with_required_anti_affinity: dict[str, PodInfo] = field(default_factory=dict)
    generation: int = 0

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def allocatable(self) -> Resource:
        return self.node.allocatable

    def add_pod(self, pod: PodInfo) -> None:
        self._account(pod, 1)
        self.pods[pod.uid] = pod

    def replace_pod(self, old: PodInfo, new: PodInfo) -> None:
        """``remove_pod(old)`` then ``add_pod(new)`` for two versions of one pod that count the
        same (requests, host ports, pod affinity): the sums stay, the records move."""
        self._take_out(old.uid)
        self.pods[new.uid] = new
        for by_uid in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if by_uid.pop(old.uid, None) is not None:
                by_uid[new.uid] = new
        self.generation += 2

    def remove_pod(self, pod: PodInfo) -> bool:
        found = self._take_out(pod.uid)
        if found is None:
            return False
        self._account(found, -1)
        return True

    def _take_out(self, uid: str) -> PodInfo | None:
        """Remove a pod as upstream's ``RemovePod`` does from its slice: the last pod takes
        its place. The order of a node's pods is upstream's, since preemption's sort of
        equally important victims depends on it."""
        pods = self.pods
        found = pods.get(uid)
        if found is None:
            return None
        last = next(reversed(pods))
        if last == uid:
            pods.popitem()
            return found
        moved = pods.pop(last)
        self.pods = {(last if k == uid else k): (moved if k == uid else v) for k, v in pods.items()}
        return found

    def _account(self, pod: PodInfo, sign: int) -> None:
        self.requested.add(pod.requests.requests, sign)
        self.non_zero_requested.milli_cpu += sign * pod.requests.non_zero_milli_cpu
        self.non_zero_requested.memory += sign * pod.requests.non_zero_memory
        for port in pod.host_ports:
            if sign > 0:
                self.used_ports.add(port)
            else:
                self.used_ports.remove(port)
        aff = pod.pod_affinity
        if aff.required_affinity or aff.preferred_affinity or aff.required_anti_affinity or aff.preferred_anti_affinity:
            if sign > 0:
                self.pods_with_affinity[pod.uid] = pod
            else:
                self.pods_with_affinity.pop(pod.uid, None)
        if aff.required_anti_affinity:
            if sign > 0:
                self.pods_with_required_anti_affinity[pod.uid] = pod
            else:
                self.pods_with_required_anti_affinity.pop(pod.uid, None)
        self.generation += 1
