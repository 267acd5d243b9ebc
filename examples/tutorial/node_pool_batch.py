"""Steps 3 and 4 of docs/plugins.md: NodePool over the node table, with queueing hints.

The same rule as ``node_pool.py``: a pod labelled ``tutorial.kubesched.io/pool: <pool>``
runs only on nodes carrying the same label and value. The per-node ``filter`` stays as
the reference the batch form is checked against (``kubesched.testing``); the framework
calls ``filter_nodes``.
"""

from kubesched.framework import (
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeVerdicts,
    PluginSpec,
    QueueingHint,
    SnapshotView,
    Status,
)
from kubesched.objects import Node, NodeInfo, PodInfo, Requirement

POOL = "tutorial.kubesched.io/pool"
NOT_IN_POOL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) were not in the pod's pool")


class NodePool:
    name = "NodePool"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        pool = pod.labels.get(POOL)
        if pool is None or node.node.labels.get(POOL) == pool:
            return None
        return NOT_IN_POOL

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray
    ) -> NodeVerdicts:
        table = snapshot.table
        pool = pod.labels.get(POOL)
        if pool is None:
            return NodeVerdicts.all_pass(table.size)
        # One mask over every row, cached by the table until a node changes.
        in_pool = table.requirement_mask(Requirement(POOL, "In", frozenset([pool])))
        return NodeVerdicts.from_mask(in_pool, NOT_IN_POOL)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # A node joined, or a node's labels changed: worth a retry if it is in the pod's pool now.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                                 node_joined_pool),
            # The pod's own labels changed (its pool, say): always worth a retry (no hint).
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)),
        ]


def node_joined_pool(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """QUEUE when the node is in the pod's pool now and was not before; SKIP otherwise."""
    pool = pod.labels.get(POOL)
    if not isinstance(new, Node) or new.labels.get(POOL) != pool:
        return QueueingHint.SKIP
    if isinstance(old, Node) and old.labels.get(POOL) == pool:
        return QueueingHint.SKIP  # it was in the pool already: not what rejected the pod
    return QueueingHint.QUEUE


def new(args: None, handle: Handle) -> NodePool:
    return NodePool()


spec = PluginSpec("NodePool", new)
