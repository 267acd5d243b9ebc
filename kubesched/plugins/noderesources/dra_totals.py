"""DRA-backed extended resources in NodeResourcesFit's and BalancedAllocation's scores
(upstream's ``draPreScoreState``, ``getDRAPreScoredParams`` and ``calculateDRAResourceTotals``
in ``resource_allocation.go``, DRAExtendedResource on).

When a scored resource is an extended resource a DeviceClass backs, a node whose allocatable
lacks it is scored on the class's devices instead: capacity = how many of the node's devices
the class selects, allocated = how many of those are in use. Upstream's rules, kept here:

* the devices are those of *every* listed slice (all pool generations, as
  ``ListWithDeviceTaintRules`` returns them), chosen per slice by its node name, all-nodes
  flag or node selector; a slice that names no node at all counts on every node; with
  per-device node selection, device by device;
* a class without selectors selects every device; otherwise all its CEL selectors must
  accept the device, evaluated on what upstream's scorer passes (driver, attributes,
  capacity: ``allowMultipleAllocations`` reads as false);
* a device is allocated when a claim holds it wholly or a share of it (``IsDeviceAllocated``);
* a CEL error (compile or runtime) leaves the resource out of that node's score.

The state is gathered only when a scored resource the pod asks for is backed by a class (never
for the default cpu and memory), once per cycle for both plugins. Kept across cycles: each
class's selection per slice (while class and slice objects stay), each node's device list
(while class, slices and node object stay), and per table row the capacity and the allocated
count, the latter recounted only for rows whose pools the allocated state changed.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping, Set as AbstractSet
from dataclasses import dataclass, field, replace

import numpy as np

from ...framework import CycleState, Handle, IntArray, NodeTableView, RowArray, StateKey
from ...objects.dra import DeviceClass, ResourceSlice
from ...objects.dra.device import Device
from ...objects.node import Node
from ...objects.resources import is_scalar_resource
from ...cel import CelCache, CelError
from ...structured import AllocatedState, DeviceID, SliceIndex, node_matches
from ..dynamicresources.manager import DraManager
from ..dynamicresources.plugin import allocator_features
from ..dynamicresources.shared_manager import registered_dra_manager
from .dra_scorer import DraScoreState, DraScoring

__all__ = ["DraTotals", "ManagerDraScorer", "dra_manager_of"]

_log = logging.getLogger(__name__)
_CACHE_LIMIT = 100_000


def dra_manager_of(handle: Handle) -> DraManager:
    """The DRA manager over this handle's stores (upstream's ``SharedDRAManager``):
    DynamicResources', or, in a profile without it, one made here (it registers itself, so
    one per stores either way)."""
    found = registered_dra_manager(handle)
    if found is None:
        features = handle.features
        cel_cache = CelCache(consumable_capacity=features.enable_dra_consumable_capacity)
        found = DraManager(handle, allocator_features(features), cel_cache)
    return found


@dataclass(slots=True)
class _SliceGroups:
    """The listed slices by how a node decides whether it sees them."""

    always: list[ResourceSlice] = field(default_factory=list)
    named: dict[str, list[ResourceSlice]] = field(default_factory=dict)
    by_selector: list[ResourceSlice] = field(default_factory=list)
    per_device: list[ResourceSlice] = field(default_factory=list)

    @staticmethod
    def of(slices: tuple[ResourceSlice, ...]) -> "_SliceGroups":
        groups = _SliceGroups()
        for s in slices:
            if s.per_device_node_selection:
                groups.per_device.append(s)
            elif s.all_nodes:
                groups.always.append(s)
            elif s.node_name:  # upstream compares the name first, selector or not
                groups.named.setdefault(s.node_name, []).append(s)
            elif s.node_selector is not None:
                groups.by_selector.append(s)
            else:  # no node named, selected or all: upstream counts it on every node
                groups.always.append(s)
        return groups


@dataclass(slots=True)
class _NodeEntry:
    """A node's devices of one class, while the class, the slices and the node object stay."""

    device_class: DeviceClass
    slices: SliceIndex
    node: Node
    devices: tuple[DeviceID, ...]


@dataclass(slots=True)
class _Columns:
    """One class's (capacity, allocated) per table row, kept across cycles: capacity while the
    class, the slices and the nodes stay (-1 not yet computed, -2 a selector failed); allocated
    (-1 not yet counted) also while the allocated state changes only in pools of other rows
    (``follow``)."""

    device_class: DeviceClass
    slices: SliceIndex
    table: NodeTableView
    node_generation: int
    capacity: IntArray
    allocated: IntArray
    devices: dict[int, tuple[DeviceID, ...]] = field(default_factory=dict)
    pool_rows: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    allocated_in: AllocatedState | None = None
    seen_changes: int = 0
    seen_dropped: int = 0
    # The pool versions the counts were made at (``AllocatedState.versions``, with its origin).
    versions: dict[tuple[str, str], int] = field(default_factory=dict)
    origin: int = -1

    def follow(self, state: AllocatedState) -> None:
        """Forget the allocated counts of rows whose pools ``state`` changed since last read:
        through its change log when it is the state read last (the manager's, changed in place),
        else by its pool versions when it shares that state's lineage (a copy with in-flight
        allocations added: a pool's version names its last change), else all."""
        changes = state.changes
        if self.allocated_in is state and state.changes_dropped == self.seen_dropped and len(changes) >= self.seen_changes:
            for pool, version in changes[self.seen_changes:]:
                self.versions[pool] = version
                self._forget(pool)
        elif state.origin == self.origin:
            before, after = self.versions, state.versions
            for pool, version in after.items():
                if before.get(pool) != version:
                    self._forget(pool)
            for pool in before.keys() - after.keys():
                self._forget(pool)
            self.versions = dict(after)
        else:
            self.allocated.fill(-1)
            self.versions, self.origin = dict(state.versions), state.origin
        self.allocated_in, self.seen_dropped, self.seen_changes = state, state.changes_dropped, len(changes)

    def _forget(self, pool: tuple[str, str]) -> None:
        rows = self.pool_rows.get(pool)
        if rows:
            self.allocated[list(rows)] = -1


def _as_scored(device: Device) -> Device:
    """The device as upstream's scorer hands it to CEL: driver, attributes and capacity only."""
    if not device.allow_multiple_allocations:
        return device
    return replace(device, allow_multiple_allocations=None, selector_key=(None, *device.selector_key[1:]))


class DraTotals:
    """``calculateDRAResourceTotals`` with its caches; one per DRA manager, used in the
    scheduling cycle only (Fit and BalancedAllocation score one after the other)."""

    def __init__(self) -> None:
        self._groups: tuple[SliceIndex, _SliceGroups] | None = None
        # (class name, slice name) -> (class, slice, positions and ids of the devices the class selects)
        self._selected: dict[tuple[str, str], tuple[DeviceClass, ResourceSlice, tuple[int, ...], tuple[DeviceID, ...]]] = {}
        self._nodes: dict[tuple[str, str], _NodeEntry] = {}
        self._scored: dict[int, tuple[Device, Device]] = {}
        self._columns: dict[str, _Columns] = {}  # class name -> its per-row totals

    def _slice_groups(self, slices: SliceIndex) -> _SliceGroups:
        if self._groups is None or self._groups[0] is not slices:
            self._groups = (slices, _SliceGroups.of(slices.slices))
        return self._groups[1]

    def _cel_device(self, device: Device) -> Device:
        if not device.allow_multiple_allocations:
            return device
        found = self._scored.get(id(device))
        if found is None or found[0] is not device:
            if len(self._scored) >= _CACHE_LIMIT:
                self._scored.clear()
            found = self._scored[id(device)] = (device, _as_scored(device))
        return found[1]

    def _class_devices(self, state: DraScoreState, device_class: DeviceClass,
                       slice_: ResourceSlice) -> tuple[tuple[int, ...], tuple[DeviceID, ...]]:
        """The positions and ids of the slice's devices the class selects (``deviceMatchesClass``);
        ``CelError`` on a selector that fails to compile or to evaluate."""
        key = (device_class.name, slice_.name)
        found = self._selected.get(key)
        if found is not None and found[0] is device_class and found[1] is slice_:
            return found[2], found[3]
        devices = slice_.devices
        if not device_class.selectors:
            positions = tuple(range(len(devices)))
        else:
            manager = state.manager
            cache = manager.cel_cache if manager.cel_cache is not None else CelCache()
            compiled = [cache.get_or_compile(s.expression) for s in device_class.selectors]
            chosen: list[int] = []
            for position, device in enumerate(devices):
                seen = self._cel_device(device)
                for result in compiled:
                    if result.error is not None:
                        raise CelError(result.error)
                    if not result.device_matches(slice_.driver, seen):
                        break
                else:
                    chosen.append(position)
            positions = tuple(chosen)
        driver, pool = slice_.driver, slice_.pool.name
        ids = tuple(DeviceID(driver, pool, devices[i].name) for i in positions)
        if len(self._selected) >= _CACHE_LIMIT:
            self._selected.clear()
        self._selected[key] = (device_class, slice_, positions, ids)
        return positions, ids

    def _node_devices(self, state: DraScoreState, device_class: DeviceClass, node: Node) -> tuple[DeviceID, ...]:
        groups = self._slice_groups(state.slices)
        seen: list[ResourceSlice] = list(groups.always)
        seen.extend(groups.named.get(node.name, ()))
        seen.extend(s for s in groups.by_selector if node_matches(node, None, False, s.node_selector))
        if len(seen) == 1 and not groups.per_device:
            return self._class_devices(state, device_class, seen[0])[1]
        ids: list[DeviceID] = []
        for slice_ in seen:
            ids.extend(self._class_devices(state, device_class, slice_)[1])
        for slice_ in groups.per_device:
            positions, selected = self._class_devices(state, device_class, slice_)
            devices = slice_.devices
            ids.extend(device_id for position, device_id in zip(positions, selected)
                       if node_matches(node, devices[position].node_name, devices[position].all_nodes, devices[position].node_selector))
        return tuple(ids)

    def node_devices(self, state: DraScoreState, device_class: DeviceClass, node: Node) -> tuple[DeviceID, ...]:
        """The class's devices the node sees (their count is its capacity); ``CelError`` as above."""
        key = (device_class.name, node.name)
        entry = self._nodes.get(key)
        if entry is None or entry.device_class is not device_class or entry.slices is not state.slices or entry.node is not node:
            entry = _NodeEntry(device_class, state.slices, node, self._node_devices(state, device_class, node))
            if len(self._nodes) >= _CACHE_LIMIT:
                self._nodes.clear()
            self._nodes[key] = entry
        return entry.devices

    def totals(self, state: DraScoreState, device_class: DeviceClass, node: Node) -> tuple[int, int]:
        """(capacity, allocated) of the class's devices on the node; ``CelError`` as above."""
        devices = self.node_devices(state, device_class, node)
        return len(devices), _InUse.of(state.allocated).count(devices)

    def _columns_for(self, state: DraScoreState, device_class: DeviceClass, table: NodeTableView) -> _Columns:
        found = self._columns.get(device_class.name)
        if found is None or found.device_class is not device_class or found.slices is not state.slices or \
                found.table is not table or found.node_generation != table.node_generation or len(found.capacity) < table.size:
            size = table.size
            found = _Columns(device_class, state.slices, table, table.node_generation,
                             np.full(size, -1, dtype=np.int64), np.full(size, -1, dtype=np.int64))
            self._columns[device_class.name] = found
        found.follow(state.allocated)
        return found

    def patch(self, state: DraScoreState, table: NodeTableView, rows: RowArray, name: str,
              alloc: IntArray, requested: IntArray) -> tuple[IntArray, IntArray]:
        """``calculateResourceAllocatableRequest`` for a scalar resource: on rows whose node has
        none of it allocatable, the backing class's (capacity, allocated) where capacity > 0.
        ``alloc`` and ``requested`` are the table's values at ``rows`` (requested without the pod)."""
        device_class = state.manager.device_class_for(name)
        if device_class is None:
            return alloc, requested
        empty = np.flatnonzero(alloc == 0)
        if not len(empty):
            return alloc, requested
        columns = self._columns_for(state, device_class, table)
        wanted = rows[empty]
        capacity = columns.capacity
        nodes = table.nodes
        for row in wanted[capacity[wanted] == -1].tolist():
            node = nodes[row]
            if node is None:
                capacity[row] = 0
                continue
            try:
                devices = self.node_devices(state, device_class, node)
            except CelError as err:
                _log.error("Failed to calculate DRA resource capacity and allocated: node=%s resource=%s deviceClass=%s: %s",
                           node.name, name, device_class.name, err)
                capacity[row] = -2
                continue
            capacity[row] = len(devices)
            columns.devices[row] = devices
            for pool in {(device.driver, device.pool) for device in devices}:
                columns.pool_rows.setdefault(pool, set()).add(row)
        allocated = columns.allocated
        present = capacity[wanted] > 0
        recount = wanted[present & (allocated[wanted] == -1)].tolist()
        if recount:
            in_use = _InUse.of(state.allocated)
            for row in recount:
                allocated[row] = in_use.count(columns.devices[row])
        if not present.any():
            return alloc, requested
        alloc, requested = alloc.copy(), requested.copy()
        at = empty[present]
        alloc[at] = capacity[wanted[present]]
        requested[at] = allocated[wanted[present]]
        return alloc, requested


@dataclass(slots=True, frozen=True)
class _InUse:
    """``IsDeviceAllocated`` over one allocated state: held wholly, shared, or with capacity consumed."""

    whole: AbstractSet[DeviceID]
    consumed: Mapping[DeviceID, object]
    shared: AbstractSet[DeviceID]

    @staticmethod
    def of(state: AllocatedState) -> "_InUse":
        shared = frozenset(d for d, _ in state.allocated_shared_device_ids)
        return _InUse(state.allocated_devices, state.aggregated_capacity, shared)

    def count(self, devices: tuple[DeviceID, ...]) -> int:
        whole, consumed, shared = self.whole, self.consumed, self.shared
        return sum(1 for d in devices if d in whole or d in consumed or d in shared)


_TOTALS: "weakref.WeakKeyDictionary[DraManager, DraTotals]" = weakref.WeakKeyDictionary()
_CYCLE_KEY: StateKey[DraScoreState] = StateKey("PreScoreDRAExtendedResources")


def _totals_of(manager: DraManager) -> DraTotals:
    """One cache per manager: Fit and BalancedAllocation count the same devices."""
    found = _TOTALS.get(manager)
    if found is None:
        found = _TOTALS[manager] = DraTotals()
    return found


class ManagerDraScorer:
    """A scoring plugin's way to DRA (``dra_scorer.DraScorer``): the handle's manager (found on
    first use) and its totals cache."""

    def __init__(self, handle: Handle, candidates: tuple[str, ...]) -> None:
        self._handle = handle
        self.candidates = candidates
        self._manager: DraManager | None = None
        self._totals: DraTotals | None = None

    def gather(self, cycle: CycleState, names: tuple[str, ...], pod_requests: list[int]) -> DraScoring | None:
        """PreScore's ``getDRAPreScoredParams`` for this pod: None unless a scored resource the pod
        asks for is backed by a class. (Upstream gathers when any scored resource is backed, but
        reads the data only for those the pod asks for: an extended resource it does not ask for
        is left out of the score.) The listing is made once per cycle: Fit and BalancedAllocation
        read the same one."""
        if not any(request and name in self.candidates for name, request in zip(names, pod_requests)):
            return None
        if self._manager is None:
            self._manager = dra_manager_of(self._handle)
            self._totals = _totals_of(self._manager)
        manager = self._manager
        if not any(request and is_scalar_resource(name) and manager.device_class_for(name) is not None
                   for name, request in zip(names, pod_requests)):
            return None
        assert self._totals is not None
        state = cycle.get(_CYCLE_KEY)
        if state is None or state.manager is not manager:
            state = DraScoreState(manager, manager.allocated_state(), manager.slice_index())
            cycle.write(_CYCLE_KEY, state)
        return DraScoring(state, self._totals)
