"""How node rows fall into topology domains, and which rows a constraint counts.

Filter and Score both turn per-row pod counts into per-domain totals. What they
need of the nodes (the domain of each row for a key, the rows carrying every key,
the verdict of each row for a vector of domain verdicts) changes only when a node
does, so ``NodeLayouts`` caches it until then; the rows a constraint counts (its
``nodeAffinityPolicy`` and ``nodeTaintsPolicy``) and the pod counts come from the
helpers below, shared by both extension points.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...framework.views import BoolArray, IntArray, NodeTableView
from ...objects.pod import PodInfo
from ...objects.selectors import LabelSelector, selector_from_set
from ...objects.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated_taint
from .common import Constraint
from .counts import Counts, DomainMap, MatchCounts
from .names import NAME

__all__ = [
    "CodeArray",
    "ColumnCache",
    "KeyLayout",
    "KeySet",
    "NodeLayouts",
    "domain_totals",
    "eligible_rows",
    "inclusion_masks",
    "matching_column",
]

CodeArray = npt.NDArray[np.int32]
ColumnCache = dict[tuple[str, LabelSelector], Counts]
"""Columns of matching pods already read in this cycle, by (namespace, selector)."""
_FILTER_TAINT_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)


@dataclass(slots=True)
class KeyLayout:
    """How the node table's rows fall into the domains of one topology key.

    Domain ids are the node table's value ids (``label_column``). Two extra-slot views
    let one gather answer for every row: ``ext`` sends rows without the key (and freed
    rows) to slot ``size``; ``slot`` sends them to the domain of value "" instead, as
    upstream's scoring does for nodes that need not carry every key.
    """

    ids: DomainMap  # per row: value id, -1 if absent
    vocab: Mapping[str, int]
    size: int  # number of values
    ext: DomainMap  # per row: value id, or ``size``
    slot: DomainMap  # per row: value id, or the id of "" (``size`` when no node has it)
    present: BoolArray  # per value id: some live node has it


@dataclass(slots=True)
class KeySet:
    """Rows carrying every key of a set of constraints (``nodeLabelsMatchSpreadConstraints``)."""

    mask: BoolArray  # alive and carrying every key
    complete: bool  # every live row carries every key


class NodeLayouts:
    """Key layouts, key sets and row verdicts of one node table, dropped on a node change."""

    __slots__ = ("_generation", "_layouts", "_key_sets", "_codes_memo")

    def __init__(self) -> None:
        self._generation: tuple[int, int, int] | None = None
        self._layouts: dict[str, KeyLayout] = {}
        self._key_sets: dict[tuple[str, ...], KeySet] = {}
        self._codes_memo: dict[tuple[int, bytes], CodeArray] = {}

    def _layouts_for(self, table: NodeTableView) -> dict[str, KeyLayout]:
        """The layouts by key; this and ``_key_sets`` and ``_codes_memo`` are emptied on a node change."""
        if self._generation != (id(table), table.node_generation, table.size):
            self._generation = (id(table), table.node_generation, table.size)
            self._layouts = {}
            self._key_sets = {}
            self._codes_memo = {}
        return self._layouts

    def layout(self, table: NodeTableView, key: str) -> KeyLayout:
        layouts = self._layouts_for(table)
        found = layouts.get(key)
        if found is None:
            ids, vocab = table.label_column(key)
            n = table.size
            ids = ids[:n]
            size = len(vocab)
            has = ids >= 0
            ext = np.where(has, ids, size)
            empty = vocab.get("", size)
            slot = ext if empty == size else np.where(has, ids, empty)
            present = np.zeros(size + 1, dtype=bool)
            present[ext[table.alive[:n] & has]] = True
            found = layouts[key] = KeyLayout(ids, vocab, size, ext, slot, present[:size])
        return found

    def key_set(self, table: NodeTableView, keys: tuple[str, ...]) -> KeySet:
        self._layouts_for(table)
        key_sets = self._key_sets
        found = key_sets.get(keys)
        if found is None:
            n = table.size
            alive = table.alive[:n]
            mask = alive.copy()
            for key in keys:
                mask &= self.layout(table, key).ids >= 0
            found = key_sets[keys] = KeySet(mask, bool((mask == alive).all()))
        return found

    def codes(self, layout: KeyLayout, by_slot: CodeArray) -> CodeArray:
        """``by_slot[layout.ext]``, remembered: domain verdicts change far less often than pods."""
        memo = self._codes_memo
        key = (id(layout), by_slot.tobytes())
        found = memo.get(key)
        if found is None:
            if len(memo) >= 64:
                memo.clear()
            found = by_slot[layout.ext]
            found.flags.writeable = False
            memo[key] = found
        return found


def inclusion_masks(
    pod: PodInfo, constraints: tuple[Constraint, ...], table: NodeTableView
) -> tuple[BoolArray | None, BoolArray | None]:
    """Rows passing the pod's required node affinity, and rows whose taints the pod
    tolerates; None when no row is excluded."""
    n = table.size
    affinity: BoolArray | None = None
    if any(c.honor_node_affinity for c in constraints) and (pod.node_selector or pod.required_node_affinity is not None):
        affinity = np.ones(n, dtype=bool)
        if pod.node_selector:
            for req in selector_from_set(pod.node_selector).requirements:
                affinity &= table.requirement_mask(req)
        if pod.required_node_affinity is not None:
            affinity &= table.selector_mask(pod.required_node_affinity)
    tolerated: BoolArray | None = None
    if any(c.honor_node_taints for c in constraints):
        ids, taint_sets = table.taint_sets()
        ok = np.fromiter(
            (find_untolerated_taint(t, pod.tolerations, _FILTER_TAINT_EFFECTS) is None for t in taint_sets),
            dtype=bool,
            count=len(taint_sets),
        )
        if not ok.all():
            tolerated = ok[ids[:n]]
    return affinity, tolerated


def eligible_rows(
    base: KeySet, c: Constraint, affinity: BoolArray | None, tolerated: BoolArray | None
) -> BoolArray | None:
    """Counted rows for one constraint; None when that is every row carrying its key."""
    eligible = None if base.complete else base.mask
    if c.honor_node_affinity and affinity is not None:
        eligible = base.mask & affinity
    if c.honor_node_taints and tolerated is not None:
        eligible = (base.mask if eligible is None else eligible) & tolerated
    return eligible


def matching_column(
    counts: MatchCounts | None, namespace: str, constraint: Constraint, table: NodeTableView, cache: ColumnCache
) -> Counts:
    """Matching pods per row; only for a selector that counts pods (``counts_pods``)."""
    key = (namespace, constraint.selector)
    found = cache.get(key)
    if found is None:
        found = cache[key] = _needed(counts).column(namespace, constraint.selector, table.size)
    return found


def domain_totals(
    counts: MatchCounts | None, namespace: str, selector: LabelSelector, domain_of_row: DomainMap, slots: int
) -> IntArray:
    """Matching pods per domain, over every row (``domain_of_row`` maps rows to ``slots``)."""
    return _needed(counts).domain_totals(namespace, selector, domain_of_row, slots)


def _needed(counts: MatchCounts | None) -> MatchCounts:
    """The plugin's pod counts; a plugin made without a handle has none and cannot count."""
    if counts is None:
        raise RuntimeError(f"{NAME} needs the scheduler cache (a handle) to count pods")
    return counts
