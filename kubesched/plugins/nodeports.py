"""NodePorts: a node must have the host ports the pod asks for free."""

from __future__ import annotations

import numpy as np

from ..framework import (
    SKIP,
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeVerdicts,
    PreFilterResult,
    QueueingHint,
    SnapshotView,
    StateKey,
    Status,
)
from ..framework.signing import HOST_PORT_ADDRESSES, HOST_PORTS_SIGNER, SignFragment, host_ports_signer
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import HostPort, PodInfo

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_STATUS = Status(Code.UNSCHEDULABLE, ERR_REASON)
_STATE_KEY: StateKey[tuple[HostPort, ...]] = StateKey("PreFilter" + NAME)
ALL_IPS = "0.0.0.0"


class NodePorts:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: PreFilter and Filter read the host ports only; upstream signs
        their numbers (of every container), not their IPs and protocols."""
        return [SignFragment(HOST_PORTS_SIGNER, host_ports_signer(pod))], None

    upstream_unsigned_reads = (HOST_PORT_ADDRESSES,)

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, SKIP
        state.write(_STATE_KEY, pod.host_ports)
        return None, None

    def _wanted(self, state: CycleState, pod: PodInfo) -> tuple[HostPort, ...]:
        found = state.get(_STATE_KEY)
        return found if found is not None else pod.host_ports

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        for port in self._wanted(state, pod):
            if node.used_ports.conflicts(port):
                return _STATUS
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        table = snapshot.table
        codes = np.zeros(table.size, dtype=np.int32)
        for port in self._wanted(state, pod):
            users = table.ports.get((port.protocol, port.port))
            if not users:
                continue
            for row, ips in users.items():
                if port.ip == ALL_IPS or ALL_IPS in ips or port.ip in ips:
                    codes[row] = 1
        return NodeVerdicts(codes, [_STATUS])

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), _hint_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), None),
        ]


def _hint_pod_deleted(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Queue only when the deleted pod held a host port this pod wants."""
    if not isinstance(old, PodInfo) or not old.host_ports:
        return QueueingHint.SKIP
    held = {(p.protocol, p.port) for p in old.host_ports}
    if any((p.protocol, p.port) in held for p in pod.host_ports):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: None, handle: Handle) -> NodePorts:
    return NodePorts()
