"""NodeName: a pod that names a node fits only that node."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ..framework.interfaces import NodeVerdicts
from ..framework.status import Code, Status

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)


class NodeName:
    name = NAME

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        if pod.node_name and pod.node_name != node.name:
            return _STATUS
        return None

    def filter_nodes(self, state: Any, pod: Any, snapshot: Any, candidates: Any) -> NodeVerdicts:
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


def _hint_node_add(pod: Any, old: Any, new: Any) -> Any:
    """Only the node the pod names can help it."""
    if new is not None and (not pod.node_name or pod.node_name == new.name):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: Any, handle: Any) -> NodeName:
    return NodeName()
