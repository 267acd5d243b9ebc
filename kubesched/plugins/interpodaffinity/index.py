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
"""

from __future__ import annotations

import weakref
from itertools import chain
from typing import Callable, Iterable, Mapping

import numpy as np
import numpy.typing as npt

from ...framework.handle import Handle
from ...framework.views import IntArray, SnapshotView
from ...objects.affinity import NO_POD_AFFINITY, AffinityTerm
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ...objects.selectors import LabelSelector

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

REQUIRED_AFFINITY = 0
REQUIRED_ANTI_AFFINITY = 1
PREFERRED_AFFINITY = 2
PREFERRED_ANTI_AFFINITY = 3
_KINDS = (REQUIRED_AFFINITY, REQUIRED_ANTI_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY)

# A term's condition on a pod: (label selector, explicit namespaces, namespace selector).
Condition = tuple[LabelSelector, frozenset[str], LabelSelector]
NamespaceLabels = Callable[[str], Mapping[str, str]]
LabelIds = npt.NDArray[np.int32]
"""A label column of the node table: per row, the id of the node's value (-1 where absent)."""
GroupKey = tuple[str, ...]


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


def _ns_dependent(cond: Condition) -> bool:
    """Whether the condition reads namespace labels (which may change)."""
    ns_selector = cond[2]
    return not ns_selector.nothing and bool(ns_selector.requirements)


class _Projection:
    """Counts summed per value id of one label column, kept current by ``RowCounts.add``."""

    __slots__ = ("ids", "sums", "labeled")

    def __init__(self, ids: LabelIds, sums: IntArray, labeled: int) -> None:
        self.ids = ids  # the label column it was built against (the table replaces it on node changes)
        self.sums = sums  # per value id, plus the zero pad
        self.labeled = labeled  # counts on rows that have the label


class RowCounts:
    """Non-negative counts per node-table row: a dict while few rows have any, then an array.

    An array also keeps, per topology key asked about, the counts summed per value of
    that key (``_Projection``), updated on every ``add``: a cycle then reads a domain's
    count without going over the rows again.
    """

    __slots__ = ("total", "_map", "_arr", "_proj")
    DENSE_AT = 48

    def __init__(self) -> None:
        self.total = 0
        self._map: dict[int, int] = {}  # the counts while ``_arr`` is None, then ``_DENSE``
        self._arr: IntArray | None = None
        self._proj: dict[str, _Projection] | None = None

    def add(self, row: int, delta: int) -> None:
        self.total += delta
        arr = self._arr
        if arr is None:
            m = self._map
            left = m.get(row, 0) + delta
            if left:
                m[row] = left
                if len(m) > self.DENSE_AT:
                    self._densify(row + 1)
            else:
                m.pop(row, None)
            return
        if row >= len(arr):
            arr = self._densify(row + 1)
        arr[row] += delta
        if self._proj:
            for proj in self._proj.values():
                ids = proj.ids
                if row < len(ids):  # else the column is stale and will be rebuilt
                    value = ids[row]
                    if value >= 0:
                        proj.sums[value] += delta
                        proj.labeled += delta

    def _densify(self, size: int) -> IntArray:
        """Switch to (or grow) the array form, at least ``size`` rows long; the array."""
        arr = self._arr
        current = len(arr) if arr is not None else 0
        if self._map:
            size = max(size, max(self._map) + 1)
        if arr is not None and size <= current:
            return arr
        length = max(64, current)
        while length < size:
            length *= 2
        out = np.zeros(length, dtype=np.int64)
        if arr is not None:
            out[:current] = arr
        else:
            for row, count in self._map.items():
                out[row] = count
            self._map = _DENSE
        self._arr = out
        return out

    def add_from(self, other: "RowCounts") -> None:
        theirs = other._arr
        if theirs is None:
            for row, count in other._map.items():
                self.add(row, count)
            return
        arr = self._densify(len(theirs))
        arr[: len(theirs)] += theirs
        self.total += other.total
        self._proj = None

    def get(self, row: int) -> int:
        if self._arr is None:
            return self._map.get(row, 0)
        return int(self._arr[row]) if row < len(self._arr) else 0

    def items(self) -> Iterable[tuple[int, int]]:
        """(row, count) for every row with a count."""
        if self._arr is None:
            return list(self._map.items())
        rows = np.flatnonzero(self._arr)
        return list(zip(rows.tolist(), self._arr[rows].tolist()))

    def accumulate(self, key: str, ids: LabelIds, out: IntArray, weight: int = 1) -> bool:
        """``out[ids[row]] += weight * count`` for each row with a count and a value of the
        topology ``key`` (``ids``: its label column; ``out``: one slot per value id plus the
        pad). True when any row contributed, as upstream's maps then get an entry."""
        if self.total == 0:
            return False
        arr = self._arr
        if arr is None:
            hit = False
            n = len(ids)
            for row, count in self._map.items():
                if row < n:
                    value = ids[row]
                    if value >= 0:
                        out[value] += weight * count
                        hit = True
            return hit
        proj = self._proj.get(key) if self._proj is not None else None
        if proj is None or proj.ids is not ids or len(proj.sums) != len(out):
            proj = self._project(arr, ids, len(out))
            if self._proj is None:
                self._proj = {}
            self._proj[key] = proj
        if proj.labeled == 0:
            return False
        if weight == 1:
            out += proj.sums
        else:
            out += weight * proj.sums
        return True

    @staticmethod
    def _project(counts: IntArray, ids: LabelIds, slots: int) -> _Projection:
        arr = counts[: len(ids)]
        values = ids[: len(arr)]
        sel = (arr != 0) & (values >= 0)
        sums = np.bincount(values[sel], weights=arr[sel], minlength=slots).astype(np.int64)
        return _Projection(ids, sums, int(sums.sum()))


_DENSE: dict[int, int] = {}  # ``RowCounts._map`` in the array form: never written


class _Group:
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

    def add_to(self, counts: "RowCounts") -> None:
        """Add this group's pods to ``counts``."""
        if self.rows is None:
            if self.count:
                counts.add(self.row, self.count)
        elif self.rows.total:
            counts.add_from(self.rows)


Anchor = tuple[str, frozenset[str]]
_NOTHING: Anchor = ("", frozenset())  # the anchor of conditions no pod can satisfy (compared by identity)


def _anchor(selectors: Iterable[LabelSelector]) -> Anchor | None:
    """One ``(key, values)`` that every pod satisfying all ``selectors`` has a pair of (an
    ``In`` / matchLabels requirement), ``_NOTHING`` when none can match, else None."""
    for selector in selectors:
        if selector.nothing:
            return _NOTHING
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
        self.ns_dependent = any(_ns_dependent(c) for c in conds)
        self.anchor: Anchor | None = _anchor(tuple(c[0] for c in conds))
        self.groups: list[_Group] = []  # the groups it selects (to leave them when evicted)

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


class _Matched:
    """Which term entries matched one incoming (namespace, labels), up to ``upto``."""

    __slots__ = ("epoch", "upto", "lists")

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self.upto = 0
        self.lists: tuple[list[TermEntry], ...] = ([], [], [], [])


def _group_key(namespace: str, labels: Mapping[str, str]) -> GroupKey:
    """``(namespace, key1, value1, key2, value2, ...)`` with keys sorted: smaller than a
    frozenset of items, and equal for equal label sets."""
    if not labels:
        return (namespace,)
    if len(labels) == 1:
        return (namespace, *next(iter(labels.items())))
    return (namespace, *chain.from_iterable(sorted(labels.items())))


class AffinityIndex:
    """A cache observer; see the module docstring. One per cache (``index_for``)."""

    MAX_MATCHERS = 512
    MAX_MATCH_CACHE = 4096

    def __init__(self, snapshot: SnapshotView) -> None:
        # A weak proxy: ``_INDEXES`` maps the snapshot to this index weakly, which only
        # works if the index does not keep its own key alive.
        self._snapshot: SnapshotView = weakref.proxy(snapshot)
        self._ns_generation = snapshot.namespace_generation
        self._groups: dict[GroupKey, _Group] = {}
        self._empty_groups = 0
        self._matchers: dict[tuple[Condition, ...], Matcher] = {}
        # Matchers by the pairs of their anchor, so a new group meets only those it may satisfy.
        self._matcher_buckets: dict[tuple[str, str], list[Matcher]] = {}
        self._matcher_unindexed: list[Matcher] = []
        # Groups by the value of a label key some matcher's anchor uses, built on demand.
        self._key_index: dict[str, dict[str, list[_Group]]] = {}
        self._tick = 0
        self._entries: dict[tuple[int, AffinityTerm, int], TermEntry] = {}
        self._entry_list: list[TermEntry] = []
        # Entries by one (key, value) their selector requires (an ``In`` / matchLabels
        # requirement): a pod can only match those under one of its own label pairs.
        self._entry_buckets: dict[tuple[str, str], list[TermEntry]] = {}
        self._entry_unindexed: list[TermEntry] = []
        self._empty_entries = 0
        self._epoch = 0
        self._matched: dict[GroupKey, _Matched] = {}

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
        key = _group_key(pod.namespace, pod.labels)
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

    def _new_group(self, key: GroupKey, pod: PodInfo) -> _Group:
        labels = pod.labels
        group = _Group(pod.namespace, labels)
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

    def _groups_with(self, label_key: str, values: Iterable[str]) -> list[_Group]:
        by_value = self._key_index.get(label_key)
        if by_value is None:
            by_value = {}
            for group in self._groups.values():
                value = group.labels.get(label_key)
                if value is not None:
                    by_value.setdefault(value, []).append(group)
            self._key_index[label_key] = by_value
        out: list[_Group] = []
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
    def matcher(self, conds: tuple[Condition, ...]) -> Matcher:
        """Counts of placed pods satisfying all ``conds``, built on first use."""
        self._sync_namespaces()
        self._tick += 1
        found = self._matchers.get(conds)
        if found is None:
            found = Matcher(conds)
            anchor = found.anchor
            if anchor is _NOTHING:
                candidates: Iterable[_Group] = ()
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
        elif anchor is not _NOTHING:
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
        signature = _group_key(namespace, labels)
        matched = self._matched.get(signature)
        if matched is None or matched.epoch != self._epoch:
            if len(self._matched) >= self.MAX_MATCH_CACHE:
                self._matched.clear()
            matched = _Matched(self._epoch)
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
