"""NodeUnschedulable: ``spec.unschedulable`` nodes take only pods tolerating that taint."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..framework import (
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeTableView,
    NodeVerdicts,
    QueueingHint,
    SnapshotView,
    Status,
)
from ..framework.signing import TOLERATIONS_SIGNER, SignFragment, tolerations_signer
from ..objects.node import Node
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from ..objects.taints import NO_SCHEDULE, Taint

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)
_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)


def _tolerates(pod: PodInfo) -> bool:
    return any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations)


def _codes(table: NodeTableView) -> npt.NDArray[np.int32] | None:
    """1 for unschedulable nodes, 0 for the rest; None when no node is unschedulable."""
    unschedulable = table.unschedulable[: table.size]
    if not unschedulable.any():
        return None
    codes = unschedulable.astype(np.int32)
    codes.flags.writeable = False
    return codes


class NodeUnschedulable:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: Filter reads the tolerations only."""
        return [SignFragment(TOLERATIONS_SIGNER, tolerations_signer(pod))], None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.node.unschedulable and not _tolerates(pod):
            return _STATUS
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        table = snapshot.table
        codes = table.node_derived((NAME,), lambda: _codes(table))
        if codes is None or _tolerates(pod):
            return NodeVerdicts.all_pass(table.size)
        return NodeVerdicts(codes, [_STATUS])

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT), _hint_node_change)]


def _hint_node_change(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Queue when the node became schedulable (or the pod tolerates it being cordoned)."""
    if not isinstance(new, Node) or (new.unschedulable and not _tolerates(pod)):
        return QueueingHint.SKIP
    if isinstance(old, Node) and not old.unschedulable:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def new(args: None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
