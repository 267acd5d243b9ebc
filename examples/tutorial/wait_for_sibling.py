"""Step 5 of docs/plugins.md: a Permit plugin that holds pods until a sibling arrives.

Pods labelled ``tutorial.kubesched.io/pair: <name>`` (in one namespace) are bound in
pairs: the first waits at Permit, assumed on its node, until the second reaches Permit
and allows it. A pod whose wait times out goes back to the queue; when its sibling
turns up and waits in turn, it wakes it (``PODS_TO_ACTIVATE``) so the two meet.

For whole gangs with a minimum size, PodGroup objects and a PreFilter that rejects
early, see the Coscheduling plugin in ``examples/plugins``.
"""

from kubesched.framework import (
    PODS_TO_ACTIVATE,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    PluginSpec,
    Status,
)
from kubesched.objects import PodInfo

PAIR = "tutorial.kubesched.io/pair"
WAIT_SECONDS = 60.0


def pair_of(pod: PodInfo) -> tuple[str, str] | None:
    name = pod.labels.get(PAIR)
    return (pod.namespace, name) if name is not None else None


class WaitForSibling:
    name = "WaitForSibling"

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.parked: dict[tuple[str, str], dict[str, PodInfo]] = {}  # pair -> pods back in the queue, by uid

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        pair = pair_of(pod)
        if pair is None:
            return None, 0.0
        siblings = [w for w in self.handle.iterate_over_waiting_pods()
                    if pair_of(w.pod) == pair and w.pod.uid != pod.uid]
        if siblings:
            for waiting in siblings:
                waiting.allow(self.name)  # it binds now; so does this pod
            return None, 0.0
        # Nobody to pair with yet: wait, and wake a sibling an earlier timeout sent back.
        state.read(PODS_TO_ACTIVATE).update(self.parked.pop(pair, {}))
        return Status(Code.WAIT, "waiting for a sibling"), WAIT_SECONDS

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """The pod goes back to the queue (its wait timed out, or a later step failed):
        remember it so its sibling can wake it. Idempotent: parking twice parks once."""
        pair = pair_of(pod)
        if pair is not None:
            self.parked.setdefault(pair, {})[pod.uid] = pod

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # No cluster event can help a pod this plugin sent back: only its sibling can,
        # and the sibling wakes it. (Without this method every event would retry it.)
        return []


def new(args: None, handle: Handle) -> WaitForSibling:
    return WaitForSibling(handle)


spec = PluginSpec("WaitForSibling", new)
