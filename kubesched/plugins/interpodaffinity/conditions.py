"""What an affinity term asks of an existing pod: a namespace condition and a label selector.

The index counts pods per condition and the plugin matches incoming pods against the
terms of placed ones; both decide "does this pod satisfy this term" the same way,
upstream's ``AffinityTerm.Matches``, defined once here.
"""

from __future__ import annotations

from typing import Callable, Mapping

from ...objects.affinity import AffinityTerm
from ...objects.selectors import LabelSelector

__all__ = [
    "PREFERRED_AFFINITY",
    "PREFERRED_ANTI_AFFINITY",
    "REQUIRED_AFFINITY",
    "REQUIRED_ANTI_AFFINITY",
    "Condition",
    "NamespaceLabels",
    "condition_matches",
    "condition_of",
    "ns_dependent",
]

REQUIRED_AFFINITY = 0
REQUIRED_ANTI_AFFINITY = 1
PREFERRED_AFFINITY = 2
PREFERRED_ANTI_AFFINITY = 3

# A term's condition on a pod: (label selector, explicit namespaces, namespace selector).
Condition = tuple[LabelSelector, frozenset[str], LabelSelector]
NamespaceLabels = Callable[[str], Mapping[str, str]]


def condition_of(term: AffinityTerm) -> Condition:
    return (term.selector, term.namespaces, term.namespace_selector)


def condition_matches(cond: Condition, namespace: str, labels: Mapping[str, str], ns_labels: NamespaceLabels) -> bool:
    """``fwk.AffinityTerm.Matches``: the pod's namespace is listed or selected, and its labels match.

    An empty namespace selector selects every namespace; an absent one (``NOTHING``) none.
    """
    selector, names, ns_selector = cond
    if namespace not in names:
        if ns_selector.nothing:
            return False
        if ns_selector.requirements and not ns_selector.matches(ns_labels(namespace)):
            return False
    return selector.matches(labels)


def ns_dependent(cond: Condition) -> bool:
    """Whether the condition reads namespace labels (which may change)."""
    ns_selector = cond[2]
    return not ns_selector.nothing and bool(ns_selector.requirements)
