"""DynamicResources' Filter for every candidate node at once (kubesched's batch form).

Plain claims: the verdicts of one claim shape are kept across pods (``verdicts.py``) and
only the rows not known yet are allocated, once per group of nodes that see the same pools
(``Allocator.node_key``); allocated claims' node selectors are one mask each. Only
DRA-backed extended resources: nodes grouped by which of them a device plugin does not
provide, one node claim per group, verdicts kept by what the classes select (pods of
classes selecting the same devices share them) with the devices found, which Reserve
reuses. Anything else goes row by row through the
per-node Filter (``filtering.py``). Apart from it because it is an optimisation of the
same decision, with the same answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import numpy.typing as npt

from ...framework import BoolArray, CycleState, NodeTableView, NodeVerdicts, SnapshotView, Status
from ...framework.views import IntArray
from ...objects.dra import DeviceClass
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ...structured import AllocationError, AllocationTimeout, Allocator, Features as AllocatorFeatures, NodeAllocationError, SliceIndex
from ...structured.results import AllocationResults
from .extended import ExtendedRequest, is_dra_extended_resource
from .filtering import FilterMixin
from .names import NAME
from .state import STATE, DraState, ExtendedGroup, ExtendedGroups, NodeAllocation
from .statuses import CANNOT_ALLOCATE, NOT_AVAILABLE, timed_out, unresolvable
from .verdicts import DOES_NOT_FIT, FITS, UNKNOWN, VerdictRows

__all__ = ["FilterNodesMixin"]

_FEW_ROWS = 8  # below this many rows to decide, grouping them costs more than it saves


class FilterNodesMixin(FilterMixin):
    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        """Every candidate row: verdicts kept across pods of one claim shape (``verdicts.py``) where
        the claims are plain; otherwise ``filter`` row by row."""
        table = snapshot.table
        size = table.size
        s = state.get(STATE)
        if not self.enabled or s is None or s.empty():
            return NodeVerdicts.all_pass(size)
        infos = snapshot.node_infos
        m = self.manager
        claims = s.plain_claims
        if claims is None and s.no_user_claim() and m.epoch == s.epoch_mark:
            ext = s.extended_claim()
            if ext is not None and not ext.spec.requests and ext.allocation is None:
                return self._filter_extended(state, s, pod, snapshot, candidates[:size])
        if claims is None or s.signature is None or m.epoch != s.epoch_mark:
            return self._filter_rows(state, pod, infos, candidates[:size], size)
        unavailable = self._selector_failures(s, table, candidates[:size], size) if s.has_selectors else None
        if s.allocator is None:  # every claim allocated: only where their devices are
            if unavailable is None:
                return NodeVerdicts.all_pass(size)
            return NodeVerdicts(unavailable.astype(np.int32), [NOT_AVAILABLE])
        rows_of = table.node_derived((NAME, "rows"), partial(_rows_by_name, infos, size))
        entry = table.node_derived((NAME, "verdicts", s.signature), partial(VerdictRows, size, s.epoch_mark, s.touch_mark))
        entry.catch_up(s.epoch_mark, m.touched, m.freed, s.touch_mark, rows_of)
        if len(claims) == len(s.claims):  # no allocated claim of its own: the score is the shape's too
            s.verdicts = entry
        ok = entry.ok[:size]
        codes = np.zeros(size, dtype=np.int32)
        statuses = [CANNOT_ALLOCATE]
        errors: list[tuple[int, Status]] = []
        allocator = s.allocator

        def decide(row: int) -> bool:
            """Allocate on the row's node and keep its verdict; False when it answered an error."""
            info = infos[row]
            if info is None:
                return False
            try:
                results = allocator.allocate(info.node, claims, self._deadline())
            except AllocationTimeout:
                errors.append((row, timed_out(info.node.name)))
                return False
            except NodeAllocationError as err:
                errors.append((row, unresolvable(str(err))))
                return False
            except AllocationError as err:
                errors.append((row, Status.as_error(err)))
                return False
            if results is None or len(results) != len(claims):
                ok[row] = DOES_NOT_FIT
            else:
                ok[row] = FITS
                s.node_allocations[info.node.name] = NodeAllocation(results)
            return True

        todo = np.flatnonzero((ok == UNKNOWN) & candidates[:size])
        for group in self._same_devices(table, infos, allocator, todo):
            # Nodes that see the same pools get the same answer (``Allocator.node_key``): one
            # allocation decides the group; the others' results are the allocator's memo's when
            # read (Score, Reserve). An error is each node's own to answer.
            first = int(group[0])
            if decide(first):
                ok[group[1:]] = ok[first]
            else:
                for row in group[1:].tolist():
                    decide(row)
        codes[ok == DOES_NOT_FIT] = 1
        if unavailable is not None:  # a claim elsewhere, on a node where the rest would fit
            statuses.append(NOT_AVAILABLE)
            codes[unavailable & (codes == 0)] = len(statuses)
        for row, status in errors:
            statuses.append(status)
            codes[row] = len(statuses)
        return NodeVerdicts(codes, statuses)

    @staticmethod
    def _same_devices(table: NodeTableView, infos: Sequence[NodeInfo | None], allocator: Allocator,
                      rows: IntArray) -> list[IntArray]:
        """``rows`` split into groups of nodes that see the same pools (in row order, first row
        first); one row per group when there are only a few rows."""
        if len(rows) <= _FEW_ROWS:
            return [rows[k:k + 1] for k in range(len(rows))]
        kept: _NodeKeys = table.node_derived((NAME, "node keys"), _NodeKeys)
        size = table.size
        if kept.index is not allocator.index or kept.features != allocator.features or len(kept.keys) < size:
            kept.keys = np.array([allocator.node_key(info.node) if info is not None else -1 for info in infos[:size]],
                                 dtype=np.int64)
            kept.index, kept.features = allocator.index, allocator.features
        row_keys = kept.keys[rows]
        if (row_keys == row_keys[0]).all():  # the usual case: every node sees the same pools
            return [rows]
        _, inverse, counts = np.unique(row_keys, return_inverse=True, return_counts=True)
        if len(counts) == len(rows):
            return [rows[k:k + 1] for k in range(len(rows))]
        grouped = rows[np.argsort(inverse, kind="stable")]
        return np.split(grouped, np.cumsum(counts)[:-1])

    @staticmethod
    def _selector_failures(s: DraState, table: NodeTableView, candidates: BoolArray, size: int) -> BoolArray:
        """Rows where an allocated claim's node selector does not match (and the claims that
        failed somewhere among the candidates, for PostFilter)."""
        failing = np.zeros(size, dtype=bool)
        for index, selector in enumerate(s.available_on):
            if selector is None:
                continue
            fails = ~table.selector_mask(selector)[:size]
            if (fails & candidates).any():
                s.unavailable.add(index)
            failing |= fails
        return failing

    def _filter_rows(self, state: CycleState, pod: PodInfo, infos: Sequence[NodeInfo | None], candidates: BoolArray,
                     size: int) -> NodeVerdicts:
        return NodeVerdicts.per_row(size, candidates, infos, lambda info: self.filter(state, pod, info))

    def _filter_extended(self, state: CycleState, s: DraState, pod: PodInfo, snapshot: SnapshotView,
                         candidates: BoolArray) -> NodeVerdicts:
        """Only DRA-backed extended resources: nodes grouped by which of them they lack (those the
        claim must ask devices for), one node claim per group, verdicts kept per group's claim."""
        table = snapshot.table
        size = table.size
        infos = snapshot.node_infos
        ext = s.extended_claim()
        backed = s.backed or {}
        class_for = self.manager.device_class_for
        names = sorted(r for r, q in backed.items() if q and is_dra_extended_resource(r))
        if ext is None or s.allocator is None or any(class_for(r) is None for r in names) or len(names) > 60:
            return self._filter_rows(state, pod, infos, candidates, size)
        lacking, distinct = table.node_derived((NAME, "lacking", tuple(names)), partial(_lacking, table, names, size))
        uniform = len(distinct) == 1  # the usual case: every node lacks the same (none lists them)
        keys: list[int] = distinct if uniform else np.unique(lacking[candidates]).tolist()
        rows_of = table.node_derived((NAME, "rows"), partial(_rows_by_name, infos, size))
        groups = s.extended_groups = ExtendedGroups(lacking, rows_of)
        codes = np.zeros(size, dtype=np.int32)
        statuses = [CANNOT_ALLOCATE]
        errors: list[tuple[int, Status]] = []
        for key in keys:
            if key == 0:
                continue  # every resource from a device plugin here: NodeResourcesFit's
            needed = {name: backed[name] for k, name in enumerate(names) if key >> k & 1}
            node_claim, requests, mappings = self._extended_variant(s, ext, pod, needed)
            signature = ("extended", _requests_key(requests, self.manager.get))
            entry = table.node_derived((NAME, "verdicts", signature), partial(VerdictRows, size, s.epoch_mark, s.touch_mark))
            entry.catch_up(s.epoch_mark, self.manager.touched, self.manager.freed, s.touch_mark, rows_of)
            groups.by_key[key] = ExtendedGroup(entry, node_claim, requests, mappings)
            group = candidates if uniform else candidates & (lacking == key)
            ok = entry.ok[:size]
            for row in np.flatnonzero(group & (ok == UNKNOWN)).tolist():
                info = infos[row]
                if info is None:
                    continue
                try:
                    results = s.allocator.allocate(info.node, [node_claim], self._deadline())
                except AllocationTimeout:
                    errors.append((row, timed_out(info.node.name)))
                    continue
                except NodeAllocationError as err:
                    errors.append((row, unresolvable(str(err))))
                    continue
                except AllocationError as err:
                    errors.append((row, Status.as_error(err)))
                    continue
                if results is None or len(results) != 1:
                    ok[row] = DOES_NOT_FIT
                else:
                    ok[row] = FITS
                    if isinstance(results, AllocationResults):
                        entry.picks[row] = results.picks
                    s.node_allocations[info.node.name] = NodeAllocation(results, node_claim, requests, mappings)
            codes[group & (ok == DOES_NOT_FIT)] = 1
        for row, status in errors:
            statuses.append(status)
            codes[row] = len(statuses)
        return NodeVerdicts(codes, statuses)


class _NodeKeys:
    """Per table row, ``Allocator.node_key`` of its node, for one slice index and feature set
    (kept in the node table's node-derived cache: computed again after a node changes)."""

    __slots__ = ("index", "features", "keys")

    def __init__(self) -> None:
        self.index: SliceIndex | None = None
        self.features: AllocatorFeatures | None = None
        self.keys: IntArray = np.zeros(0, dtype=np.int64)


def _requests_key(requests: Sequence[ExtendedRequest], get_class: Callable[[str], DeviceClass | None]) -> tuple[object, ...]:
    """What an extended-resource claim's verdicts depend on: per request, its count and what its
    class selects. The class enters by its selectors, not its name (a class's config only shapes
    the results, which Reserve builds for the chosen node with the real class): pods asking for
    different resources whose classes select the same devices (upstream's 25 classes of one
    driver) share one set of verdicts. A missing class cannot happen here (PreFilter's
    ``backed_resources`` found every one), but keys by name then."""
    parts: list[object] = []
    for r in requests:
        cls = get_class(r.device_class)
        selects: object = tuple(sel.expression for sel in cls.selectors) if cls is not None else ("class", r.device_class)
        parts.append((r.name, r.count, selects))
    return tuple(parts)


def _lacking(table: NodeTableView, names: list[str], size: int) -> tuple[npt.NDArray[np.int64], list[int]]:
    """Per row, bit ``k`` set when the node does not list ``names[k]`` (so a claim must ask
    devices for it), and the distinct values; kept until a node changes."""
    lacking = np.zeros(size, dtype=np.int64)
    for k, name in enumerate(names):
        alloc, _ = table.scalar_columns(name)
        lacking |= (alloc[:size] <= 0).astype(np.int64) << k
    lacking.flags.writeable = False
    return lacking, np.unique(lacking).tolist()


def _rows_by_name(infos: Sequence[NodeInfo | None], size: int) -> dict[str, int]:
    return {info.node.name: row for row, info in enumerate(infos[:size]) if info is not None}
