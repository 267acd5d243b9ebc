"""The incremental index InterPodAffinity reads instead of walking every pod each cycle.

The cache announces every placement (``pod_added`` / ``pod_removed``); the index keeps,
per node-table row, two kinds of counts:

* **watched conditions** (``Matcher``): what an incoming pod's terms ask of existing
  pods (a namespace condition and a label selector; for required affinity, the
  conjunction of all terms). For each, the number of existing pods on every row that
  satisfy it. A matcher is built from the label groups the first time a pod asks for
  it, then kept current on every placement; the least recently used are evicted.
* **existing pods' terms** (``TermEntry``): for every distinct ``(kind, term, weight)``
  among the placed pods' affinity terms, how many of them sit on every row. A cycle
  matches only the distinct terms against the incoming pod (and remembers the answer
  per distinct ``(namespace, labels)`` of incoming pods), never the pods.

Pods are grouped by ``(namespace, labels)``: all pods of a group satisfy the same
conditions, so a condition is evaluated once per group, not once per pod.

Counts are per *row*; a cycle projects them onto topology domains with the node
table's label columns (``accumulate``), so node label changes need no bookkeeping.

This module holds the index itself, what it does on a placement and how it answers;
the conditions are in ``conditions.py``, the per-row counts in ``row_counts.py``, the
records it keeps (groups, matchers, term entries) in ``records.py``.
"""

from __future__ import annotations

import weakref
from typing import Iterable, Mapping

from ...framework.handle import Handle
from ...framework.views import SnapshotView
from ...objects.affinity import NO_POD_AFFINITY, AffinityTerm
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .conditions import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    Condition,
    NamespaceLabels,
    condition_matches,
    condition_of,
)
from .records import NOTHING_ANCHOR, GroupKey, MatchedTerms, Matcher, PodGroup, TermEntry, group_key
from .row_counts import LabelIds, RowCounts

__all__ = [
    "REQUIRED_AFFINITY",
    "REQUIRED_ANTI_AFFINITY",
    "PREFERRED_AFFINITY",
    "PREFERRED_ANTI_AFFINITY",
    "Condition",
    "NamespaceLabels",
    "LabelIds",
    "condition_of",
    "condition_matches",
    "RowCounts",
    "Matcher",
    "TermEntry",
    "AffinityIndex",
    "index_for",
]


class AffinityIndex:
    """A cache observer; see the module docstring. One per cache (``index_for``)."""

    MAX_MATCHERS = 512
    MAX_MATCH_CACHE = 4096

    def __init__(self, snapshot: SnapshotView) -> None:
        # A weak proxy: ``_INDEXES`` maps the snapshot to this index weakly, which only
        # works if the index does not keep its own key alive.
        self._snapshot: SnapshotView = weakref.proxy(snapshot)
        self._ns_generation = snapshot.namespace_generation
        self._groups: dict[GroupKey, PodGroup] = {}
        self._empty_groups = 0
        self._matchers: dict[tuple[Condition, ...], Matcher] = {}
        # Matchers by the pairs of their anchor, so a new group meets only those it may satisfy.
        self._matcher_buckets: dict[tuple[str, str], list[Matcher]] = {}
        self._matcher_unindexed: list[Matcher] = []
        # Groups by the value of a label key some matcher's anchor uses, built on demand.
        self._key_index: dict[str, dict[str, list[PodGroup]]] = {}
        self._tick = 0
        self._entries: dict[tuple[int, AffinityTerm, int], TermEntry] = {}
        self._entry_list: list[TermEntry] = []
        # Entries by one (key, value) their selector requires (an ``In`` / matchLabels
        # requirement): a pod can only match those under one of its own label pairs.
        self._entry_buckets: dict[tuple[str, str], list[TermEntry]] = {}
        self._entry_unindexed: list[TermEntry] = []
        self._empty_entries = 0
        self._epoch = 0
        self._matched: dict[GroupKey, MatchedTerms] = {}

    # -- namespace labels ---------------------------------------------------
    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return self._snapshot.namespace_labels(namespace)

    def _sync_namespaces(self) -> None:
        generation = self._snapshot.namespace_generation
        if generation == self._ns_generation:
            return
        self._ns_generation = generation
        stale = [key for key, m in self._matchers.items() if m.ns_dependent]
        for key in stale:
            self._drop_matcher(key)
        self._epoch += 1
        self._matched.clear()

    # -- the cache's observer calls ------------------------------------------
    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None:
        self._account(pod, node.row, 1)

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None:
        self._account(pod, node.row, -1)

    def nodes_changed(self) -> None:
        """Counts are per row and rows of removed nodes are emptied first: nothing to do."""

    def _account(self, pod: PodInfo, row: int, sign: int) -> None:
        key = group_key(pod.namespace, pod.labels)
        group = self._groups.get(key)
        if group is None:
            group = self._new_group(key, pod)
        group.add(row, sign)
        for matcher in group.matchers:
            matcher.counts.add(row, sign)
        if group.total == 0:
            self._empty_groups += 1
            if self._empty_groups > 256 and self._empty_groups * 2 > len(self._groups):
                self._sweep_groups()
        aff = pod.pod_affinity
        if aff is NO_POD_AFFINITY:
            return
        for term in aff.required_anti_affinity:
            self._count_term(REQUIRED_ANTI_AFFINITY, term, 0, row, sign)
        for term in aff.required_affinity:
            self._count_term(REQUIRED_AFFINITY, term, 0, row, sign)
        for weighted in aff.preferred_affinity:
            self._count_term(PREFERRED_AFFINITY, weighted.term, weighted.weight, row, sign)
        for weighted in aff.preferred_anti_affinity:
            self._count_term(PREFERRED_ANTI_AFFINITY, weighted.term, weighted.weight, row, sign)

    def _new_group(self, key: GroupKey, pod: PodInfo) -> PodGroup:
        labels = pod.labels
        group = PodGroup(pod.namespace, labels)
        if self._matchers:
            self._sync_namespaces()
            candidates = list(self._matcher_unindexed)
            buckets = self._matcher_buckets
            for pair in labels.items():
                found = buckets.get(pair)
                if found:
                    candidates.extend(found)
            if candidates:
                ns_labels = self.namespace_labels
                selected = tuple(m for m in candidates if m.matches(group.namespace, labels, ns_labels))
                group.matchers = selected
                for matcher in selected:
                    matcher.groups.append(group)
        for label_key, by_value in self._key_index.items():
            value = labels.get(label_key)
            if value is not None:
                by_value.setdefault(value, []).append(group)
        self._groups[key] = group
        return group

    def _sweep_groups(self) -> None:
        self._groups = {k: g for k, g in self._groups.items() if g.total != 0}
        self._empty_groups = 0
        self._key_index.clear()  # rebuilt on demand
        for matcher in self._matchers.values():
            matcher.groups = [g for g in matcher.groups if g.total != 0]

    def _groups_with(self, label_key: str, values: Iterable[str]) -> list[PodGroup]:
        by_value = self._key_index.get(label_key)
        if by_value is None:
            by_value = {}
            for group in self._groups.values():
                value = group.labels.get(label_key)
                if value is not None:
                    by_value.setdefault(value, []).append(group)
            self._key_index[label_key] = by_value
        out: list[PodGroup] = []
        for value in values:
            found = by_value.get(value)
            if found:
                out.extend(found)
        return out

    def _count_term(self, kind: int, term: AffinityTerm, weight: int, row: int, sign: int) -> None:
        key = (kind, term, weight)
        entry = self._entries.get(key)
        if entry is None:
            entry = TermEntry(kind, term, weight)
            self._entries[key] = entry
            self._entry_list.append(entry)
            self._index_entry(entry)
        counts = entry.counts
        counts.add(row, sign)
        if counts.total == 0:
            self._empty_entries += 1
            if self._empty_entries > 256 and self._empty_entries * 2 > len(self._entries):
                self._sweep_entries()

    def _sweep_entries(self) -> None:
        self._entries = {k: e for k, e in self._entries.items() if e.counts.total != 0}
        self._entry_list = list(self._entries.values())
        self._entry_buckets = {}
        self._entry_unindexed = []
        for entry in self._entry_list:
            self._index_entry(entry)
        self._empty_entries = 0
        self._epoch += 1
        self._matched.clear()

    def _index_entry(self, entry: TermEntry) -> None:
        selector = entry.term.selector
        if selector.nothing:
            return  # selects no pod
        for req in selector.requirements:
            if req.operator == "In":
                for value in req.values:
                    self._entry_buckets.setdefault((req.key, value), []).append(entry)
                return
        self._entry_unindexed.append(entry)

    # -- queries --------------------------------------------------------------
    def has_terms(self) -> bool:
        """Whether any placed pod declares a term (an entry may have lost its pods since):
        when none does, no placed pod's terms can select a pod, and PreFilter and PreScore
        need not look them up."""
        return bool(self._entry_list)

    def matcher(self, conds: tuple[Condition, ...]) -> Matcher:
        """Counts of placed pods satisfying all ``conds``, built on first use."""
        self._sync_namespaces()
        self._tick += 1
        found = self._matchers.get(conds)
        if found is None:
            found = Matcher(conds)
            anchor = found.anchor
            if anchor is NOTHING_ANCHOR:
                candidates: Iterable[PodGroup] = ()
            elif anchor is None:
                candidates = self._groups.values()
                self._matcher_unindexed.append(found)
            else:
                candidates = self._groups_with(*anchor)
                for value in anchor[1]:
                    self._matcher_buckets.setdefault((anchor[0], value), []).append(found)
            ns_labels = self.namespace_labels
            for group in candidates:
                if found.matches(group.namespace, group.labels, ns_labels):
                    group.matchers += (found,)
                    found.groups.append(group)
                    group.add_to(found.counts)
            self._matchers[conds] = found
            if len(self._matchers) > self.MAX_MATCHERS:
                self._evict_matcher()
        found.used = self._tick
        return found

    def _evict_matcher(self) -> None:
        oldest = min(self._matchers.items(), key=lambda kv: kv[1].used)[0]
        self._drop_matcher(oldest)

    def _drop_matcher(self, key: tuple[Condition, ...]) -> None:
        matcher = self._matchers.pop(key)
        for group in matcher.groups:
            group.matchers = tuple(m for m in group.matchers if m is not matcher)
        anchor = matcher.anchor
        if anchor is None:
            self._matcher_unindexed.remove(matcher)
        elif anchor is not NOTHING_ANCHOR:
            for value in anchor[1]:
                bucket = self._matcher_buckets[(anchor[0], value)]
                bucket.remove(matcher)
                if not bucket:
                    del self._matcher_buckets[(anchor[0], value)]

    def matching_terms(self, kind: int, namespace: str, labels: Mapping[str, str]) -> list[TermEntry]:
        """Distinct placed terms of ``kind`` that select a pod with this namespace and labels
        (the namespace selector read with the pod's namespace labels). Entries may hold no
        pod any more; their counts are then zero."""
        self._sync_namespaces()
        signature = group_key(namespace, labels)
        matched = self._matched.get(signature)
        if matched is None or matched.epoch != self._epoch:
            if len(self._matched) >= self.MAX_MATCH_CACHE:
                self._matched.clear()
            matched = MatchedTerms(self._epoch)
            self._matched[signature] = matched
        entries = self._entry_list
        if matched.upto < len(entries):
            ns_labels = self.namespace_labels
            lists = matched.lists
            if matched.upto == 0:  # first look: only the entries this pod's labels can satisfy
                buckets = self._entry_buckets
                candidates = list(self._entry_unindexed)
                for pair in labels.items():
                    found = buckets.get(pair)
                    if found:
                        candidates.extend(found)
            else:  # entries created since the last look
                candidates = entries[matched.upto :]
            for entry in candidates:
                if condition_matches(entry.cond, namespace, labels, ns_labels):
                    lists[entry.kind].append(entry)
            matched.upto = len(entries)
        return matched.lists[kind]

    # -- introspection (tests, debugging) ------------------------------------
    def stats(self) -> dict[str, int]:
        return {
            "groups": len(self._groups),
            "matchers": len(self._matchers),
            "term_entries": len(self._entries),
            "match_cache": len(self._matched),
        }


_INDEXES: "weakref.WeakKeyDictionary[SnapshotView, AffinityIndex]" = weakref.WeakKeyDictionary()


def index_for(handle: Handle) -> AffinityIndex:
    """The affinity index of the handle's cluster, created and registered as a pod
    observer on first use (profiles of one scheduler share their snapshot, so one index)."""
    snapshot = handle.snapshot()
    found = _INDEXES.get(snapshot)
    if found is None:
        found = AffinityIndex(snapshot)
        handle.add_pod_observer(found)
        _INDEXES[snapshot] = found
    return found
