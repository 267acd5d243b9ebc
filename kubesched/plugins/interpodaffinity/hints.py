"""InterPodAffinity's queueing hints: which cluster events may make a rejected pod fit.

Upstream's ``EventsToRegister`` with ``isSchedulableAfterPodChange`` and
``isSchedulableAfterNodeChange``. They read only the pod's terms and the event's
objects, never the cycle state or the index, so they live apart from Filter and Score;
the plugin hands them its namespaces' labels.
"""

from __future__ import annotations

from ...framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, QueueingHintFn
from ...objects.affinity import AffinityTerm
from ...objects.node import Node
from ...objects.pod import PodInfo
from .index import NamespaceLabels, condition_matches, condition_of
from .names import NAME

__all__ = ["affinity_events", "assigned_pod_change_hint", "node_change_hint"]


def affinity_events(after_assigned_pod_change: QueueingHintFn, after_node_change: QueueingHintFn) -> list[ClusterEventWithHint]:
    """``EventsToRegister``: assigned pods and nodes with the two hints, and pod label updates."""
    pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
    return [
        ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, pod_actions), after_assigned_pod_change),
        ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), after_node_change
        ),
        ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL), None),
    ]


def assigned_pod_change_hint(pod: PodInfo, old_obj: object | None, new_obj: object | None,
                             ns_labels: NamespaceLabels) -> QueueingHint:
    """Upstream's ``isSchedulableAfterPodChange``, a little wider where upstream can
    strand a pod: anti-affinity counts as matched when *any* term matches (the
    filter fails on any), and a deleted pod whose own required anti-affinity selects
    ``pod``, or that matched all of ``pod``'s affinity terms (the self-affinity
    rule may then apply), also queues."""
    old, new = _pod_or_none(old_obj), _pod_or_none(new_obj)
    if (new is not None and not new.node_name) or (old is not None and not old.node_name):
        return QueueingHint.SKIP
    aff = pod.pod_affinity
    required, anti = aff.required_affinity, aff.required_anti_affinity

    def matches(term: AffinityTerm, other: PodInfo) -> bool:
        return condition_matches(condition_of(term), other.namespace, other.labels, ns_labels)

    def all_affinity(other: PodInfo) -> bool:
        return bool(required) and all(matches(t, other) for t in required)

    def any_anti(other: PodInfo) -> bool:
        return any(matches(t, other) for t in anti)

    if old is not None and new is not None:
        if all_affinity(new) and not all_affinity(old):
            return QueueingHint.QUEUE
        if any_anti(old) and not any_anti(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if new is not None:
        return QueueingHint.QUEUE if all_affinity(new) else QueueingHint.SKIP
    if old is None:
        return QueueingHint.QUEUE
    if any_anti(old) or all_affinity(old):
        return QueueingHint.QUEUE
    if any(matches(t, pod) for t in old.pod_affinity.required_anti_affinity):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def node_change_hint(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Upstream's ``isSchedulableAfterNodeChange``: a node carrying a topology key of
    the pod's required terms. A pod with no required term was rejected by placed pods'
    anti-affinity, which any new or relabelled node may escape: queue it."""
    if new is None:
        return QueueingHint.SKIP
    if not isinstance(new, Node):
        raise TypeError(f"{NAME}: a node event carries a {type(new).__name__}, not a Node")
    aff = pod.pod_affinity
    terms = aff.required_affinity + aff.required_anti_affinity
    if not terms:
        return QueueingHint.QUEUE
    labels = new.labels
    for term in terms:
        if term.topology_key in labels:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _pod_or_none(obj: object | None) -> PodInfo | None:
    """A pod event's object; anything else raises (a hint that raises counts as QUEUE)."""
    if obj is None or isinstance(obj, PodInfo):
        return obj
    raise TypeError(f"{NAME}: a pod event carries a {type(obj).__name__}, not a PodInfo")
