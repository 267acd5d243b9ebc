"""PodTopologySpread's queueing hints: which cluster events may make a rejected pod fit.

Upstream's ``EventsToRegister`` with ``isSchedulableAfterPodChange`` and
``isSchedulableAfterNodeChange``. They read only the pod's DoNotSchedule constraints
and the event's objects, never the cycle state, so they live apart from Filter and
Score; the plugin hands them its way of working out a pod's constraints.
"""

from __future__ import annotations

from collections.abc import Callable

from ...framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, QueueingHintFn
from ...objects.node import Node
from ...objects.pod import PodInfo
from .common import Constraint, node_has_all_keys
from .names import NAME

__all__ = ["ConstraintsOf", "node_change_hint", "pod_change_hint", "spread_events"]

ConstraintsOf = Callable[[PodInfo], tuple[Constraint, ...]]
"""A pod's DoNotSchedule constraints (``getConstraints``), its own or the defaults."""


def spread_events(after_pod_change: QueueingHintFn, after_node_change: QueueingHintFn) -> list[ClusterEventWithHint]:
    """``EventsToRegister``: pod and node events, with the plugin's two hints."""
    pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
    return [
        ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, pod_actions), after_pod_change),
        ClusterEventWithHint(
            ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATIONS),
            after_pod_change,
        ),
        ClusterEventWithHint(
            ClusterEvent(
                EventResource.NODE,
                ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
            ),
            after_node_change,
        ),
    ]


def pod_change_hint(
    pod: PodInfo, old_obj: object | None, new_obj: object | None, constraints_of: ConstraintsOf
) -> QueueingHint:
    """``isSchedulableAfterPodChange``."""
    old, new = _pod_or_none(old_obj), _pod_or_none(new_obj)

    def involved(other: PodInfo) -> bool:
        return other.uid == pod.uid or (bool(other.node_name) and other.namespace == pod.namespace)

    if (new is not None and not involved(new)) or (old is not None and not involved(old)):
        return QueueingHint.SKIP
    constraints = constraints_of(pod)
    if new is not None and old is not None:
        if (
            new.uid == pod.uid
            and new.tolerations != old.tolerations
            and any(c.honor_node_taints for c in constraints)
        ):
            return QueueingHint.QUEUE
        if new.labels == old.labels:
            return QueueingHint.SKIP
        for c in constraints:
            if c.selector.matches(old.labels) != c.selector.matches(new.labels):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP
    changed = new if new is not None else old
    if changed is not None and any(c.selector.matches(changed.labels) for c in constraints):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def node_change_hint(
    pod: PodInfo, old_obj: object | None, new_obj: object | None, constraints_of: ConstraintsOf
) -> QueueingHint:
    """``isSchedulableAfterNodeChange``."""
    old, new = _node_or_none(old_obj), _node_or_none(new_obj)
    constraints = constraints_of(pod)
    old_ok = old is not None and node_has_all_keys(old.labels, constraints)
    new_ok = new is not None and node_has_all_keys(new.labels, constraints)
    if old is not None and new is not None:
        if old_ok != new_ok:
            return QueueingHint.QUEUE
        if new_ok and (
            any(old.labels.get(c.topology_key) != new.labels.get(c.topology_key) for c in constraints)
            or old.taints != new.taints
        ):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if new is not None:
        return QueueingHint.QUEUE if new_ok else QueueingHint.SKIP
    if old is not None:
        return QueueingHint.QUEUE if old_ok else QueueingHint.SKIP
    return QueueingHint.SKIP


def _pod_or_none(obj: object | None) -> PodInfo | None:
    """A pod event's object; anything else raises (a hint that raises counts as QUEUE)."""
    if obj is None or isinstance(obj, PodInfo):
        return obj
    raise TypeError(f"{NAME}: a pod event carries a {type(obj).__name__}, not a PodInfo")


def _node_or_none(obj: object | None) -> Node | None:
    """A node event's object; anything else raises (a hint that raises counts as QUEUE)."""
    if obj is None or isinstance(obj, Node):
        return obj
    raise TypeError(f"{NAME}: a node event carries a {type(obj).__name__}, not a Node")
