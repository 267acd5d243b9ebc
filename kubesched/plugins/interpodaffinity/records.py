"""The records the affinity index keeps: groups of placed pods, watched conditions, distinct terms.

* ``PodGroup``: placed pods sharing a namespace and a label set, which satisfy the same
  conditions, so a condition is evaluated once per group, not once per pod.
* ``Matcher``: a watched condition (what an incoming pod's terms ask of existing pods)
  with the number of pods satisfying it on every row.
* ``TermEntry``: one distinct ``(kind, term, weight)`` among placed pods' terms, with
  how many of them sit on every row; ``MatchedTerms`` remembers which entries one
  incoming ``(namespace, labels)`` matched.

Apart from ``AffinityIndex`` because they are plain data with their own small rules
(a group's inline row, a condition's anchor); the index decides when they change.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable, Mapping

from ...objects.affinity import AffinityTerm
from ...objects.selectors import LabelSelector
from .conditions import Condition, NamespaceLabels, condition_matches, condition_of, ns_dependent
from .row_counts import RowCounts

__all__ = [
    "NOTHING_ANCHOR",
    "Anchor",
    "GroupKey",
    "MatchedTerms",
    "Matcher",
    "PodGroup",
    "TermEntry",
    "anchor_of",
    "group_key",
]

GroupKey = tuple[str, ...]
Anchor = tuple[str, frozenset[str]]
NOTHING_ANCHOR: Anchor = ("", frozenset())  # the anchor of conditions no pod can satisfy (compared by identity)


class PodGroup:
    """Placed pods sharing a namespace and a label set.

    Kept small (a cluster may have one group per pod, e.g. StatefulSets): the labels are
    the first pod's own dict, one row is held inline until the group spreads over several,
    and ``matchers`` is a shared empty tuple until a watched condition selects it.
    """

    __slots__ = ("namespace", "labels", "row", "count", "rows", "matchers")

    def __init__(self, namespace: str, labels: Mapping[str, str]) -> None:
        self.namespace = namespace
        self.labels = labels
        self.row = -1
        self.count = 0
        self.rows: RowCounts | None = None
        self.matchers: tuple[Matcher, ...] = ()

    @property
    def total(self) -> int:
        return self.count if self.rows is None else self.rows.total

    def add(self, row: int, delta: int) -> None:
        if self.rows is None:
            if self.count == 0 or row == self.row:
                self.row = row
                self.count += delta
                return
            self.rows = RowCounts()
            self.rows.add(self.row, self.count)
        self.rows.add(row, delta)

    def add_to(self, counts: RowCounts) -> None:
        """Add this group's pods to ``counts``."""
        if self.rows is None:
            if self.count:
                counts.add(self.row, self.count)
        elif self.rows.total:
            counts.add_from(self.rows)


def group_key(namespace: str, labels: Mapping[str, str]) -> GroupKey:
    """``(namespace, key1, value1, key2, value2, ...)`` with keys sorted: smaller than a
    frozenset of items, and equal for equal label sets."""
    if not labels:
        return (namespace,)
    if len(labels) == 1:
        return (namespace, *next(iter(labels.items())))
    return (namespace, *chain.from_iterable(sorted(labels.items())))


def anchor_of(selectors: Iterable[LabelSelector]) -> Anchor | None:
    """One ``(key, values)`` that every pod satisfying all ``selectors`` has a pair of (an
    ``In`` / matchLabels requirement), ``NOTHING_ANCHOR`` when none can match, else None."""
    for selector in selectors:
        if selector.nothing:
            return NOTHING_ANCHOR
    for selector in selectors:
        for req in selector.requirements:
            if req.operator == "In":
                return (req.key, req.values)
    return None


class Matcher:
    """Existing pods satisfying every condition of ``conds``, counted per row."""

    __slots__ = ("conds", "counts", "used", "ns_dependent", "anchor", "groups")

    def __init__(self, conds: tuple[Condition, ...]) -> None:
        self.conds = conds
        self.counts = RowCounts()
        self.used = 0
        self.ns_dependent = any(ns_dependent(c) for c in conds)
        self.anchor: Anchor | None = anchor_of(tuple(c[0] for c in conds))
        self.groups: list[PodGroup] = []  # the groups it selects (to leave them when evicted)

    def matches(self, namespace: str, labels: Mapping[str, str], ns_labels: NamespaceLabels) -> bool:
        for cond in self.conds:
            if not condition_matches(cond, namespace, labels, ns_labels):
                return False
        return True


class TermEntry:
    """One distinct affinity term of placed pods, with how many of them sit on each row."""

    __slots__ = ("kind", "term", "weight", "cond", "counts")

    def __init__(self, kind: int, term: AffinityTerm, weight: int) -> None:
        self.kind = kind
        self.term = term
        self.weight = weight
        self.cond = condition_of(term)
        self.counts = RowCounts()


class MatchedTerms:
    """Which term entries matched one incoming (namespace, labels), up to ``upto``."""

    __slots__ = ("epoch", "upto", "lists")

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self.upto = 0
        self.lists: tuple[list[TermEntry], ...] = ([], [], [], [])
