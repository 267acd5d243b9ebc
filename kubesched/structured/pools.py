"""Which pools and slices a node sees (upstream ``GatherPools``), indexed once per set of slices.

Per node: slices naming the node, plus every slice without a node name or with shared counters,
filtered by ``nodeName`` / ``allNodes`` / ``nodeSelector`` / per-device selection. Only the
newest generation of a pool counts; a pool is complete when it has ``resourceSliceCount``
slices (counting slices for other nodes of the same generation); an incomplete pool is kept as
a marker (its devices are never allocated, ``All`` over it is an error); duplicate device names
or unknown counters make a pool invalid. Pools are sorted by driver and pool name, those with
binding conditions last; slices in a pool by name.
"""

from __future__ import annotations

import json
import threading
from fractions import Fraction
from collections.abc import Callable, Mapping, Sequence

from kubesched.objects import Node
from kubesched.objects.dra import CounterSet, DraNodeSelector, RequestSpec, ResourceClaim, ResourceSlice

from .picks import ClaimPicks
from .pool_records import NodePools, Pool
from .pool_versions import PoolStamps, PoolVerdicts
from .types import DeviceID, Features

__all__ = ["SliceIndex", "node_matches", "gather_pools", "request_signature", "spec_signature"]

_MEMO_LIMIT = 1 << 18

# (the node's pools when computed, the newest of their versions in the allocated state, the
# outcome: per-claim picks or None)
MemoEntry = tuple[list["Pool"], int, "list[ClaimPicks] | None"]


def node_matches(node: Node, node_name: str | None, all_nodes: bool, selector: DraNodeSelector | None) -> bool:
    """``NodeMatches``: a node name, all nodes, or a node selector (in that precedence)."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.compiled.matches(node.labels, node.name)
    return False


def _relevant(slice_: ResourceSlice, node: Node) -> bool | None:
    """Whether the slice is for this node; None when it is for no node at all."""
    if slice_.shared_counters:
        return True
    if slice_.node_name or slice_.all_nodes or slice_.node_selector is not None:
        return node_matches(node, slice_.node_name, slice_.all_nodes, slice_.node_selector)
    if slice_.per_device_node_selection:
        return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in slice_.devices)
    return None


def _validate_device_names(slices: Sequence[ResourceSlice]) -> str | None:
    seen: set[str] = set()
    for slice_ in slices:
        for device in slice_.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return None


def _counter_sets(slices: Sequence[ResourceSlice]) -> tuple[dict[str, CounterSet], str | None]:
    sets: dict[str, CounterSet] = {}
    for slice_ in slices:
        for counter_set in slice_.shared_counters:
            if counter_set.name in sets:
                return sets, f"duplicate counter set name {counter_set.name}"
            sets[counter_set.name] = counter_set
    return sets, None


def _validate_consumption(sets: Mapping[str, CounterSet], slices: Sequence[ResourceSlice]) -> str | None:
    for slice_ in slices:
        for device in slice_.devices:
            for consumption in device.consumes_counters:
                counter_set = sets.get(consumption.counter_set)
                if counter_set is None:
                    return f"counter set {consumption.counter_set} not found"
                for name in consumption.counters:
                    if name not in counter_set.counters:
                        return f"counter {name} not found in counter set {counter_set.name}"
    return None


def _build_pool(driver: str, name: str, slices: list[ResourceSlice], features: Features, all_for_pool: Sequence[ResourceSlice] | None) -> Pool:
    slices = sorted(slices, key=lambda s: s.name)
    if features.partitionable_devices:
        device_slices = [s for s in slices if not s.shared_counters]
        counter_slices = [s for s in slices if s.shared_counters]
    else:
        device_slices, counter_slices = slices, []
    reason = _validate_device_names(device_slices)
    if reason is not None:
        return Pool(driver, name, is_invalid=True, invalid_reason=reason)
    if not features.partitionable_devices:
        return Pool(driver, name, slices_targeting_node=tuple(device_slices))
    sets, reason = _counter_sets(counter_slices)
    reason = reason or _validate_consumption(sets, slices)
    if reason is not None:
        return Pool(driver, name, is_invalid=True, invalid_reason=reason)
    if all_for_pool is None or len(slices) == len(all_for_pool):
        return Pool(driver, name, slices_targeting_node=tuple(device_slices), counter_sets=sets)
    targeting = {s.name for s in slices}
    others = [s for s in all_for_pool if s.name not in targeting]
    reason = _validate_consumption(sets, others)
    if reason is not None:
        return Pool(driver, name, is_invalid=True, invalid_reason=reason)
    return Pool(driver, name, slices_targeting_node=tuple(device_slices), slices_not_targeting_node=tuple(others), counter_sets=sets)


def _has_binding_conditions(pool: Pool) -> bool:
    return any(d.binding_conditions is not None for s in pool.slices_targeting_node for d in s.devices)


def gather_pools(
    slices_for_node: Sequence[ResourceSlice],
    node: Node,
    features: Features,
    slices_by_pool: Mapping[tuple[str, str], Sequence[ResourceSlice]],
    intern: Callable[[Pool], Pool] | None = None,
) -> list[Pool]:
    """``GatherPools`` for one node; ``slices_by_pool`` holds every slice, by (driver, pool).
    ``intern`` may replace each pool by an identical one built for another node."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for slice_ in slices_for_node:
        if not features.partitionable_devices and (slice_.per_device_node_selection or slice_.shared_counters):
            continue
        if not _relevant(slice_, node):
            continue
        key = (slice_.driver, slice_.pool.name)
        current = pools.get(key)
        if current is None or slice_.pool.generation > current[0].pool.generation:
            pools[key] = [slice_]
        elif slice_.pool.generation == current[0].pool.generation:
            current.append(slice_)
    result: list[Pool] = []
    with_conditions: list[Pool] = []
    for (driver, name), found in pools.items():
        generation = found[0].pool.generation
        wanted = found[0].pool.resource_slice_count
        if len(found) == wanted:
            pool = _build_pool(driver, name, found, features, None)
        else:
            everywhere = slices_by_pool.get((driver, name), ())
            if any(s.pool.generation > generation for s in everywhere):
                continue  # obsolete: a newer generation exists for other nodes
            same = [s for s in everywhere if s.pool.generation == generation]
            if len(same) != wanted:
                incomplete = Pool(driver, name, is_incomplete=True)
                result.append(intern(incomplete) if intern is not None else incomplete)
                continue
            pool = _build_pool(driver, name, found, features, same)
        if intern is not None:
            pool = intern(pool)
        (with_conditions if _has_binding_conditions(pool) else result).append(pool)
    result.sort(key=lambda p: (p.driver, p.pool))
    with_conditions.sort(key=lambda p: (p.driver, p.pool))
    return result + with_conditions


def request_signature(spec: RequestSpec) -> tuple[object, ...]:
    capacity = tuple(sorted((k, q.value) for k, q in spec.capacity_requests.items())) if spec.capacity_requests is not None else None
    selectors = tuple(s.expression for s in spec.selectors)
    tolerations = tuple((t.key, t.operator, t.value, t.effect, t.toleration_seconds) for t in spec.tolerations)
    return (spec.name, spec.device_class_name, spec.allocation_mode, spec.count, spec.admin_access, selectors, tolerations, capacity)


def spec_signature(claim: ResourceClaim) -> tuple[object, ...]:
    """What of a claim's spec the allocator's choices depend on (configs only shape results),
    as plain values."""
    requests = tuple(
        (r.name, request_signature(r.exactly) if r.exactly is not None else None, tuple(request_signature(s) for s in r.first_available))
        for r in claim.spec.requests
    )
    constraints = tuple((c.requests, c.match_attribute, c.distinct_attribute) for c in claim.spec.constraints)
    return (requests, constraints)


class SliceIndex:
    """All slices, indexed once: per node name, shared ones, and by pool; plus each node's
    gathered pools, kept while the node object (and so its labels) is the same. Build a new
    index when the slices change."""

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        self.slices = tuple(slices)
        self.on_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        for slice_ in self.slices:
            if not slice_.node_name or slice_.shared_counters:
                self.shared.append(slice_)
            else:
                self.on_node.setdefault(slice_.node_name, []).append(slice_)
            self.by_pool.setdefault((slice_.driver, slice_.pool.name), []).append(slice_)
        self._pools: dict[str, tuple[Node, Features, NodePools]] = {}
        drivers_of: dict[str, set[str]] = {}
        for driver, name in self.by_pool:
            drivers_of.setdefault(name, set()).add(driver)
        self._shared_names = {name for name, drivers in drivers_of.items() if len(drivers) > 1}
        # The shared slices grouped by how a node decides whether it sees them: one node
        # selector (by content) decides for all its slices at once.
        self._always: list[int] = []  # positions in ``shared`` every node sees
        self._per_device: list[int] = []  # per-device node selection: decided per device
        self._by_selector: list[tuple[DraNodeSelector, list[int]]] = []
        groups: dict[str, int] = {}
        for position, slice_ in enumerate(self.shared):
            if slice_.shared_counters or slice_.node_name or slice_.all_nodes:
                self._always.append(position)
            elif slice_.node_selector is not None:
                text = json.dumps(slice_.node_selector.raw, sort_keys=True, default=str)
                group = groups.setdefault(text, len(self._by_selector))
                if group == len(self._by_selector):
                    self._by_selector.append((slice_.node_selector, []))
                self._by_selector[group][1].append(position)
            elif slice_.per_device_node_selection:
                self._per_device.append(position)
        # NodePools per (features, the node's own slices, which selector groups match): nodes
        # that see the same slices share one (gathering 2,000 network-attached pools per node
        # would otherwise dominate).
        self._by_view: dict[tuple[object, ...], NodePools] = {}
        self._interned_pools: dict[tuple[object, ...], Pool] = {}
        self._device_ids: dict[int, tuple[ResourceSlice, tuple[DeviceID, ...]]] = {}
        # Shared counters left per (pool, its version in the allocated state), across allocators.
        self.counters_left: dict[tuple[int, int], tuple[Pool, dict[str, dict[str, int | Fraction]]]] = {}
        self._lock = threading.Lock()
        # Allocation outcomes per (node, claim specs, classes), with the allocation stamp they
        # were computed under (``Allocator.allocate``).
        self.memo: dict[tuple[object, ...], MemoEntry] = {}
        self._interned: dict[tuple[object, ...], int] = {}
        # Per (node pools key, request shape): which pools are exhausted for the request.
        self.verdicts: dict[tuple[int, int], PoolVerdicts] = {}
        self.stamps = PoolStamps()

    def intern(self, value: tuple[object, ...]) -> int:
        """A small number standing for ``value`` (claim signatures), so memo keys hash cheaply."""
        found = self._interned.get(value)
        if found is None:
            with self._lock:
                found = self._interned.setdefault(value, len(self._interned))
        return found

    def remember(self, key: tuple[object, ...], value: "MemoEntry") -> None:
        with self._lock:
            if len(self.memo) >= _MEMO_LIMIT:
                self.memo.clear()
            self.memo[key] = value

    def pools_for(self, node: Node, features: Features) -> list[Pool]:
        return self.node_pools(node, features).pools

    def pools_and_key(self, node: Node, features: Features) -> tuple[list[Pool], int]:
        found = self.node_pools(node, features)
        return found.pools, found.key

    def node_pools(self, node: Node, features: Features) -> NodePools:
        """The node's pools, and what an allocation on the node depends on besides claims and
        allocated devices: the pools themselves (shared with every node that sees the same
        pools, e.g. network-attached ones), and the node's name and labels when a pool selects
        devices per node."""
        cached = self._pools.get(node.name)
        if cached is not None and (cached[0] is node or cached[0].labels == node.labels) and (cached[1] is features or cached[1] == features):
            return cached[2]
        on_node = self.on_node.get(node.name, [])
        matching = tuple(selector.compiled.matches(node.labels, node.name) for selector, _ in self._by_selector)
        view: tuple[object, ...] | None = None
        if not self._per_device:
            view = (features, tuple(id(s) for s in on_node), matching)
            shared_view = self._by_view.get(view)
            if shared_view is not None:
                with self._lock:
                    self._pools[node.name] = (node, features, shared_view)
                return shared_view
        positions = list(self._always) + self._per_device
        for (_, members), matches in zip(self._by_selector, matching):
            if matches:
                positions.extend(members)
        positions.sort()  # the index's order, as the node's full list would have them
        pools = gather_pools(on_node + [self.shared[p] for p in positions], node, features, self.by_pool, self._intern_pool)
        identity: tuple[object, ...] = ("pools", *(id(pool) for pool in pools))
        if any(s.per_device_node_selection for pool in pools for s in pool.slices_targeting_node):
            identity = (node.name, tuple(sorted(node.labels.items())), *identity)
        found = NodePools(
            pools,
            self.intern(identity),
            tuple(pool.key for pool in pools),
            {pool.key: i for i, pool in enumerate(pools)},
            tuple(pool.pool not in self._shared_names for pool in pools),
        )
        with self._lock:
            self._pools[node.name] = (node, features, found)
            if view is not None:
                self._by_view[view] = found
        return found

    def pool_verdicts(self, pools_key: int, request_key: int, size: int) -> PoolVerdicts:
        """The verdicts of one request shape over the pools of one node key (see ``PoolVerdicts``)."""
        key = (pools_key, request_key)
        found = self.verdicts.get(key)
        if found is None:
            with self._lock:
                if len(self.verdicts) >= _MEMO_LIMIT:
                    self.verdicts.clear()
                found = self.verdicts.setdefault(key, PoolVerdicts(size))
        return found

    def device_ids(self, slice_: ResourceSlice) -> tuple[DeviceID, ...]:
        """The ids of the slice's devices, in order (built once per slice)."""
        found = self._device_ids.get(id(slice_))
        if found is not None and found[0] is slice_:
            return found[1]
        ids = tuple(DeviceID(slice_.driver, slice_.pool.name, d.name) for d in slice_.devices)
        with self._lock:
            self._device_ids[id(slice_)] = (slice_, ids)
        return ids

    def _intern_pool(self, pool: Pool) -> Pool:
        """One object for pools built alike for different nodes (same slices, same verdict); they
        stay alive in this index, so their ids identify them."""
        identity = (
            pool.driver,
            pool.pool,
            pool.is_incomplete,
            pool.is_invalid,
            pool.invalid_reason,
            tuple(id(s) for s in pool.slices_targeting_node),
            tuple(id(s) for s in pool.slices_not_targeting_node),
        )
        with self._lock:
            return self._interned_pools.setdefault(identity, pool)
