"""Step 1 of docs/plugins.md: a Score plugin, node by node: prefer nodes running fewer pods."""

from kubesched.framework import CycleState, Handle, PluginSpec
from kubesched.objects import NodeInfo, PodInfo


class FewestPods:
    name = "FewestPods"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return max(0, 100 - len(node.pods))


def new(args: None, handle: Handle) -> FewestPods:
    return FewestPods()


spec = PluginSpec("FewestPods", new)
