"""Step 2 of docs/plugins.md: a Filter plugin, node by node.

A pod labelled ``tutorial.kubesched.io/pool: <pool>`` runs only on nodes carrying the
same label and value; pods without the label run anywhere.
"""

from kubesched.framework import Code, CycleState, Handle, PluginSpec, Status
from kubesched.objects import NodeInfo, PodInfo

POOL = "tutorial.kubesched.io/pool"
NOT_IN_POOL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) were not in the pod's pool")


class NodePool:
    name = "NodePool"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        pool = pod.labels.get(POOL)
        if pool is None or node.node.labels.get(POOL) == pool:
            return None
        return NOT_IN_POOL


def new(args: None, handle: Handle) -> NodePool:
    return NodePool()


spec = PluginSpec("NodePool", new)
