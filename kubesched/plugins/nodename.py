"""NodeName: a pod that names a node fits only that node."""

from __future__ import annotations

import numpy as np

from ..framework import (
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeVerdicts,
    QueueingHint,
    SnapshotView,
    Status,
)
from ..framework.signing import NODE_NAME_SIGNER, SignFragment
from ..objects.node import Node
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)


class NodeName:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: Filter reads ``spec.nodeName`` only."""
        return [SignFragment(NODE_NAME_SIGNER, pod.node_name)], None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.node_name and pod.node_name != node.name:
            return _STATUS
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        table = snapshot.table
        if not pod.node_name:
            return NodeVerdicts.all_pass(table.size)
        passed = np.zeros(table.size, dtype=bool)
        row = table.name_rows().get(pod.node_name)
        if row is not None:
            passed[row] = True
        return NodeVerdicts.from_mask(passed, _STATUS)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), _hint_node_add)]


def _hint_node_add(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Only the node the pod names can help it."""
    if isinstance(new, Node) and (not pod.node_name or pod.node_name == new.name):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: None, handle: Handle) -> NodeName:
    return NodeName()
