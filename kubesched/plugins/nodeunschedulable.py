"""NodeUnschedulable: ``spec.unschedulable`` nodes take only pods tolerating that taint."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ..framework.interfaces import NodeVerdicts
from ..framework.status import Code, Status
from ..objects.taints import NO_SCHEDULE, Taint

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)
_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)


def _tolerates(pod: Any) -> bool:
    return any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations)


def _codes(table: Any) -> np.ndarray | None:
    """1 for unschedulable nodes, 0 for the rest; None when no node is unschedulable."""
    unschedulable = table.unschedulable[: table.size]
    if not unschedulable.any():
        return None
    codes = unschedulable.astype(np.int32)
    codes.flags.writeable = False
    return codes


class NodeUnschedulable:
    name = NAME

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        if node.node.unschedulable and not _tolerates(pod):
            return _STATUS
        return None

    def filter_nodes(self, state: Any, pod: Any, snapshot: Any, candidates: Any) -> NodeVerdicts:
        table = snapshot.table
        codes = table.node_derived((NAME,), lambda: _codes(table))
        if codes is None or _tolerates(pod):
            return NodeVerdicts.all_pass(table.size)
        return NodeVerdicts(codes, [_STATUS])

    def events_to_register(self) -> list[ClusterEventWithHint]:

        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT), _hint_node_change)]


def _hint_node_change(pod: Any, old: Any, new: Any) -> Any:
    """Queue when the node became schedulable (or the pod tolerates it being cordoned)."""
    if new is None or (new.unschedulable and not _tolerates(pod)):
        return QueueingHint.SKIP
    if old is not None and not old.unschedulable:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def new(args: Any, handle: Any) -> NodeUnschedulable:
    return NodeUnschedulable()
