"""The columnar node table: one row per node, one numpy column per quantity.

Batch plugins read whole columns and answer for every node at once; the cache
keeps the columns current, row by row, as pods and nodes come and go. Columns that
depend only on node objects (label values, taint sets, images, the zone order) are
built on first use and then patched at the one row a node add, update or removal
touches, so that node churn costs what it changes, not a rebuild over every node.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable

import numpy as np

from ..objects.node import Node
from ..objects.pod import PodInfo
from ..objects.selectors import NodeSelector, NodeSelectorTerm, Requirement, _parse_int
from ..framework.views import IntArray
from ..objects.taints import Taint

__all__ = ["NodeTable", "zone_key"]

_INT_COLUMNS = (
    "alloc_cpu",
    "alloc_mem",
    "alloc_eph",
    "alloc_pods",
    "req_cpu",
    "req_mem",
    "req_eph",
    "nz_cpu",
    "nz_mem",
    "pod_count",
)

_MISSING = object()
_NO_LABELS: dict[str, str] = {}
_NO_IMAGES: dict[str, int] = {}
_NO_IMAGE_ROWS = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
_LABEL_DERIVED = ("label", "number", "req")  # _derived keys computed from node labels
_ROW_LOG_LIMIT = 1 << 16  # account_pod calls remembered for row_cached()
_ROW_CACHE_PATCH_LIMIT = 256  # more changed rows than this: recompute every row at once
# More changed rows than this: patch them with one array computation, not row by row in
# Python (a row costs several microseconds in Python; an array call a few, whatever its
# length). A pod shape seen every few dozen pods finds dozens of rows changed.
_ROW_CACHE_SCALAR_LIMIT = 8
_ROW_CACHE_KEYS = 256  # row_cached() keys kept (each holds one value per row) ...
_ROW_CACHE_VALUES = 1 << 20  # ... and fewer on big tables: about this many values (8 MiB) in all

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def zone_key(labels: dict[str, str]) -> str:
    """``utilnode.GetZoneKey``: region and zone, or "" when the node has neither."""
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTable:
    """Per-node columns, indexed by row. Rows of removed nodes are reused.

    Implements ``framework.NodeTableView`` (the read-only view batch plugins get); the
    scheduler's cache is the only writer.
    """

    # int64 columns, set in __init__ and widened in _grow (see _INT_COLUMNS)
    alloc_cpu: IntArray
    alloc_mem: IntArray
    alloc_eph: IntArray
    alloc_pods: IntArray
    req_cpu: IntArray
    req_mem: IntArray
    req_eph: IntArray
    nz_cpu: IntArray
    nz_mem: IntArray
    pod_count: IntArray

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.size = 0  # rows in use or freed; columns are valid up to here
        self.names: list[str] = []
        self.nodes: list[Node | None] = []
        self.alive = np.zeros(capacity, dtype=bool)
        self.unschedulable = np.zeros(capacity, dtype=bool)
        for column in _INT_COLUMNS:
            setattr(self, column, np.zeros(capacity, dtype=np.int64))
        self.scalar_alloc: dict[str, np.ndarray] = {}
        self.scalar_req: dict[str, np.ndarray] = {}
        self._free: list[int] = []
        # (protocol, port) -> row -> ip -> number of pods using it; for NodePorts
        self.ports: dict[tuple[str, int], dict[int, dict[str, int]]] = {}
        self._zones: dict[str, list[int]] = {}  # zone key -> rows in arrival order
        self._order: np.ndarray | None = None
        self._derived: dict[Hashable, Any] = {}
        self._node_cache: dict[Hashable, Any] = {}  # node_derived(): plugins' answers that depend on node objects only
        self.node_generation = 0  # bumps on any node change; derived columns follow it
        # Pod accounting changes, for row_cached(): pod_generation counts account_pod
        # calls; _row_log[i] is the row of call _row_log_base + i (the recent ones).
        self.pod_generation = 0
        self._row_log: list[int] = []
        self._row_log_base = 0
        self._row_cache: dict[Hashable, list[Any]] = {}  # key -> [node_generation, pod_generation, values]
        self._row_cache_asked: dict[Hashable, bool] = {}  # keys asked for once, not cached yet

    # -- rows ---------------------------------------------------------------
    def _grow(self) -> None:
        new = self.capacity * 2

        def widen(arr: np.ndarray) -> np.ndarray:
            out = np.zeros(new, dtype=arr.dtype)
            out[: self.capacity] = arr
            return out

        self.alive = widen(self.alive)
        self.unschedulable = widen(self.unschedulable)
        for column in _INT_COLUMNS:
            setattr(self, column, widen(getattr(self, column)))
        for store in (self.scalar_alloc, self.scalar_req):
            for name in store:
                store[name] = widen(store[name])
        self.capacity = new

    def add_node(self, node: Node) -> int:
        if self._free:
            row = self._free.pop()
        else:
            if self.size == self.capacity:
                self._grow()
            row = self.size
            self.size += 1
            self.names.append("")
            self.nodes.append(None)
        self.alive[row] = True
        for column in ("req_cpu", "req_mem", "req_eph", "nz_cpu", "nz_mem", "pod_count"):
            getattr(self, column)[row] = 0
        for arr in self.scalar_req.values():
            arr[row] = 0
        self._zones.setdefault(zone_key(node.labels), []).append(row)
        self.names[row] = node.name
        self.nodes[row] = node
        self._write_columns(row, node)
        self._node_changed(row, None, node, order="added")
        return row

    def update_node(self, row: int, node: Node) -> bool:
        """A new version of the node at ``row``; False when nothing the scheduler reads changed.

        Such an update (a heartbeat, a condition, an annotation) costs O(1). Otherwise only
        what depends on the changed parts is patched at this row: label columns and
        selector masks on a label change, the zone order only when the zone moved, taint
        sets on a taint change, the image index on an image change; allocatable is
        written in place.
        """
        old = self.nodes[row]
        if old is None:
            self.names[row] = node.name
            self.nodes[row] = node
            self._write_columns(row, node)
            self._node_changed(row, None, node, order="rebuild")
            return True
        labels = old.labels != node.labels
        taints = old.taints != node.taints
        images = old.images != node.images
        columns = old.allocatable != node.allocatable or old.unschedulable != node.unschedulable
        self.nodes[row] = node
        if not (labels or taints or images or columns):
            return False
        moved = labels and zone_key(old.labels) != zone_key(node.labels)
        if moved:
            self._remove_from_zone(row, old)
            self._zones.setdefault(zone_key(node.labels), []).append(row)
        if columns:
            self._write_columns(row, node)
        self._node_changed(row, old, node, order="rebuild" if moved else "")
        return True

    def remove_node(self, row: int) -> None:
        node = self.nodes[row]
        if node is not None:
            self._remove_from_zone(row, node)
        self.alive[row] = False
        for key in list(self.ports):
            by_row = self.ports[key]
            by_row.pop(row, None)
            if not by_row:
                del self.ports[key]
        self.names[row] = ""
        self.nodes[row] = None
        self._free.append(row)
        self._node_changed(row, node, None, order="removed")

    def _remove_from_zone(self, row: int, node: Node) -> None:
        key = zone_key(node.labels)
        rows = self._zones.get(key)
        if rows and row in rows:
            rows.remove(row)
            if not rows:
                del self._zones[key]

    def _write_columns(self, row: int, node: Node) -> None:
        alloc = node.allocatable
        self.alloc_cpu[row] = alloc.milli_cpu
        self.alloc_mem[row] = alloc.memory
        self.alloc_eph[row] = alloc.ephemeral_storage
        self.alloc_pods[row] = alloc.allowed_pod_number
        self.unschedulable[row] = node.unschedulable
        for name, arr in self.scalar_alloc.items():
            arr[row] = alloc.scalar.get(name, 0)
        for name, amount in alloc.scalar.items():
            self._scalar(name)[0][row] = amount

    def _node_changed(self, row: int, old: Node | None, new: Node | None, order: str) -> None:
        """One row's node came (``old`` None), went (``new`` None) or changed: patch what
        is derived from node objects at that row, as a fresh build would have it.

        ``order`` says what happened to the zone order: "added" (the row joined the end of
        its zone), "removed", "rebuild" (it moved between zones) or "" (unchanged).
        ``node_generation`` moves, since plugins key their own node-derived caches
        (``node_derived``, layouts) on it without saying which parts they read. Derived
        arrays are replaced, never written in place, so a reader holding one from before
        still has a consistent (old) view.
        """
        derived = self._derived
        old_labels = old.labels if old is not None else _NO_LABELS
        new_labels = new.labels if new is not None else _NO_LABELS
        if order:
            self._patch_order(row, order)
            derived.pop("order_is_identity", None)
        joined = old is None or new is None  # a row came or went: arrays may need to grow
        if joined:
            derived.pop("frozen_names", None)
            names = derived.get("names")
            if names is not None:
                if old is not None:
                    names.pop(old.name, None)
                if new is not None:
                    names[new.name] = row
        if joined or old_labels != new_labels:
            for key in [k for k in derived if isinstance(k, tuple) and k[0] in _LABEL_DERIVED]:
                self._patch_label_derived(key, row, new_labels)
        new_taints = new.taints if new is not None else ()
        if joined or (old is not None and old.taints != new_taints):
            self._patch_taints(row, new_taints)
        old_images = old.images if old is not None else _NO_IMAGES
        new_images = new.images if new is not None else _NO_IMAGES
        if old_images != new_images:  # the image index holds only rows that have images
            self._patch_images(row, old_images, new_images)
        self._node_cache.clear()
        self.node_generation += 1

    def _live_rows(self) -> int:
        return self.size - len(self._free)

    def _grown(self, arr: np.ndarray, fill: Any) -> np.ndarray:
        """A copy of a per-row array, extended to ``size`` rows with ``fill``."""
        if len(arr) >= self.size:
            return arr.copy()
        return np.concatenate([arr, np.full(self.size - len(arr), fill, dtype=arr.dtype)])

    def _patch_order(self, row: int, change: str) -> None:
        order = self._order
        if order is None:
            return
        if change == "added" and len(self._zones) == 1:  # one zone: the row simply comes last
            self._order = np.append(order, np.int64(row))
        elif change == "removed" and len(self._zones) <= 1:
            self._order = order[order != row]
        else:  # several zones interleave: rebuilt (with array operations) on next use
            self._order = None

    def _patch_label_derived(self, key: tuple[Any, ...], row: int, labels: dict[str, str]) -> None:
        derived = self._derived
        kind = key[0]
        if kind == "label":
            ids, vocab = derived[key]
            value = labels.get(key[1])
            if value is not None and value not in vocab:
                if len(vocab) > 2 * self._live_rows() + 64:  # values of nodes long gone: rebuild on next use
                    del derived[key]
                    return
                vocab = {**vocab, value: len(vocab)}
            ids = self._grown(ids, -1)
            ids[row] = -1 if value is None else vocab[value]
            derived[key] = (ids, vocab)
        elif kind == "number":
            numbers, valid = derived[key]
            numbers, valid = self._grown(numbers, 0), self._grown(valid, False)
            parsed = _parse_int(labels[key[1]]) if key[1] in labels else None
            numbers[row] = 0 if parsed is None else parsed
            valid[row] = parsed is not None
            derived[key] = (numbers, valid)
        else:  # ("req", requirement): a row without a node reads as one without labels
            requirement: Requirement = key[1]
            mask = self._grown(derived[key], requirement.matches(_NO_LABELS))
            mask[row] = requirement.matches(labels)
            derived[key] = mask

    def _patch_taints(self, row: int, taints: tuple[Taint, ...]) -> None:
        found = self._derived.get("taints")
        if found is None:
            return
        ids, sets = found
        index: dict[tuple[Taint, ...], int] = self._derived["taint_index"]
        if len(sets) > 2 * self._live_rows() + 64:  # lists of nodes long gone: rebuild on next use
            del self._derived["taints"]
            return
        for wanted in ((), taints):  # rows without a node read as untainted
            if wanted not in index:
                index[wanted] = len(sets)
                sets = [*sets, wanted]
        ids = self._grown(ids, index[()])
        ids[row] = index[taints]
        self._derived["taints"] = (ids, sets)

    def _patch_images(self, row: int, old: dict[str, int], new: dict[str, int]) -> None:
        index: dict[str, tuple[np.ndarray, np.ndarray]] | None = self._derived.get("images")
        if index is None:
            return
        for name in old.keys() | new.keys():
            if old.get(name) == new.get(name):
                continue
            rows, sizes = index.get(name, _NO_IMAGE_ROWS)
            keep = rows != row
            rows, sizes = rows[keep], sizes[keep]
            if name in new:
                at = int(np.searchsorted(rows, row))
                rows, sizes = np.insert(rows, at, row), np.insert(sizes, at, new[name])
            if len(rows):
                index[name] = (rows, sizes)
            else:
                index.pop(name, None)

    def _scalar(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        if name not in self.scalar_alloc:
            self.scalar_alloc[name] = np.zeros(self.capacity, dtype=np.int64)
            self.scalar_req[name] = np.zeros(self.capacity, dtype=np.int64)
        return self.scalar_alloc[name], self.scalar_req[name]

    def allocatable(self, resource: str) -> np.ndarray:
        """Allocatable of any resource by its name (``cpu`` in millicores, ``memory`` in bytes, ...)."""
        column = self._named_columns(resource)
        return column[0] if column is not None else self._scalar(resource)[0]

    def requested(self, resource: str) -> np.ndarray:
        """What the pods on each node request of ``resource`` (``pods``: how many pods)."""
        column = self._named_columns(resource)
        return column[1] if column is not None else self._scalar(resource)[1]

    def _named_columns(self, resource: str) -> tuple[np.ndarray, np.ndarray] | None:
        if resource == "cpu":
            return self.alloc_cpu, self.req_cpu
        if resource == "memory":
            return self.alloc_mem, self.req_mem
        if resource == "ephemeral-storage":
            return self.alloc_eph, self.req_eph
        if resource == "pods":
            return self.alloc_pods, self.pod_count
        return None

    def scalar_columns(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Allocatable and requested of an extended resource (zeros if no node has it)."""
        return self._scalar(name)

    # -- pods ---------------------------------------------------------------
    def account_pod(self, row: int, pod: PodInfo, sign: int) -> None:
        req = pod.requests
        r = req.requests
        self.req_cpu[row] += sign * r.milli_cpu
        self.req_mem[row] += sign * r.memory
        self.req_eph[row] += sign * r.ephemeral_storage
        self.nz_cpu[row] += sign * req.non_zero_milli_cpu
        self.nz_mem[row] += sign * req.non_zero_memory
        self.pod_count[row] += sign
        for name, amount in r.scalar.items():
            self._scalar(name)[1][row] += sign * amount
        for port in pod.host_ports:
            by_row = self.ports.setdefault((port.protocol, port.port), {})
            ips = by_row.setdefault(row, {})
            # Upstream's HostPortInfo is a set: a port two pods declare is freed when
            # either of them leaves (kept as a quirk: decisions must be upstream's).
            if sign > 0:
                ips[port.ip] = 1
            else:
                ips.pop(port.ip, None)
                if not ips:
                    del by_row[row]
                    if not by_row:
                        del self.ports[(port.protocol, port.port)]
        # Logged once the columns hold the new totals, so that a reader who sees this
        # generation also sees them.
        log = self._row_log
        log.append(row)
        if len(log) > _ROW_LOG_LIMIT:
            half = len(log) // 2
            del log[:half]
            self._row_log_base += half
        self.pod_generation += 1

    # -- order --------------------------------------------------------------
    @property
    def order(self) -> np.ndarray:
        """Live rows in upstream's snapshot order: zones interleaved round-robin (``nodeTree``)."""
        if self._order is None:
            zones = [np.asarray(rows, dtype=np.int64) for rows in self._zones.values()]
            if len(zones) <= 1:
                self._order = zones[0] if zones else np.zeros(0, dtype=np.int64)
            else:  # the i-th row of every zone, zone by zone, then the (i+1)-th ...
                depth = np.concatenate([np.arange(len(z)) for z in zones])
                zone = np.concatenate([np.full(len(z), k) for k, z in enumerate(zones)])
                self._order = np.concatenate(zones)[np.lexsort((zone, depth))]
        return self._order

    @property
    def num_nodes(self) -> int:
        return len(self.order)

    @property
    def order_is_identity(self) -> bool:
        """Whether ``order`` is every row in row order (no freed rows, one zone or none)."""
        found = self._derived.get("order_is_identity")
        if found is None:
            order = self.order
            found = len(order) == self.size and bool((order == np.arange(self.size)).all())
            self._derived["order_is_identity"] = found
        return found

    def frozen_names(self) -> list[str]:
        """A copy of ``names`` that later node changes leave alone (for records of past attempts).

        Shared between callers until the next node change; do not modify it.
        """
        found = self._derived.get("frozen_names")
        if found is None:
            found = self._derived["frozen_names"] = list(self.names)
        return found

    # -- derived node columns ----------------------------------------------
    def label_column(self, key: str) -> tuple[np.ndarray, dict[str, int]]:
        """Per row, the id of the node's value for label ``key`` (-1 if absent), and the id of each value."""
        cache_key = ("label", key)
        found = self._derived.get(cache_key)
        if found is None:
            vocab: dict[str, int] = {}
            ids = np.full(self.size, -1, dtype=np.int32)
            for row, node in enumerate(self.nodes):
                if node is not None:
                    val = node.labels.get(key)
                    if val is not None:
                        ids[row] = vocab.setdefault(val, len(vocab))
            found = (ids, vocab)
            self._derived[cache_key] = found
        return found

    def label_numbers(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the label's value as an integer and whether it parses as one."""
        cache_key = ("number", key)
        found = self._derived.get(cache_key)
        if found is None:
            numbers = np.zeros(self.size, dtype=np.int64)
            valid = np.zeros(self.size, dtype=bool)
            for row, node in enumerate(self.nodes):
                if node is not None and key in node.labels:
                    parsed = _parse_int(node.labels[key])
                    if parsed is not None:
                        numbers[row] = parsed
                        valid[row] = True
            found = (numbers, valid)
            self._derived[cache_key] = found
        return found

    def requirement_mask(self, req: Requirement) -> np.ndarray:
        """Rows whose labels satisfy one requirement."""
        cache_key = ("req", req)
        found: np.ndarray | None = self._derived.get(cache_key)
        if found is not None:
            return found
        op = req.operator
        if op in ("Gt", "Lt"):
            numbers, valid = self.label_numbers(req.key)
            mask = valid & ((numbers > req.number) if op == "Gt" else (numbers < req.number))
        else:
            ids, vocab = self.label_column(req.key)
            if op == "Exists":
                mask = ids >= 0
            elif op == "DoesNotExist":
                mask = ids < 0
            else:
                wanted = [vocab[v] for v in req.values if v in vocab]
                hit = np.isin(ids, wanted) if wanted else np.zeros(self.size, dtype=bool)
                mask = hit if op == "In" else ~hit
        if len(self._derived) > 4096:
            self._derived = {k: v for k, v in self._derived.items() if not (isinstance(k, tuple) and k[0] == "req")}
        self._derived[cache_key] = mask
        return mask

    def term_mask(self, term: NodeSelectorTerm) -> np.ndarray:
        """Rows matching one node selector term (labels and ``metadata.name`` fields)."""
        if term.is_empty():
            return np.zeros(self.size, dtype=bool)
        mask = np.ones(self.size, dtype=bool)
        for req in term.expressions:
            mask &= self.requirement_mask(req)
        for req in term.fields:
            rows = self.name_rows()
            hit = np.zeros(self.size, dtype=bool)
            for name in req.values:
                row = rows.get(name)
                if row is not None:
                    hit[row] = True
            mask &= hit if req.operator == "In" else ~hit
        return mask

    def selector_mask(self, selector: NodeSelector) -> np.ndarray:
        mask = np.zeros(self.size, dtype=bool)
        for term in selector.terms:
            mask |= self.term_mask(term)
        return mask

    def name_rows(self) -> dict[str, int]:
        found = self._derived.get("names")
        if found is None:
            found = {name: row for row, name in enumerate(self.names) if name}
            self._derived["names"] = found
        return found

    def taint_sets(self) -> tuple[np.ndarray, list[tuple[Taint, ...]]]:
        """Per row, the id of the node's distinct taint list; nodes share few of them."""
        found = self._derived.get("taints")
        if found is None:
            sets: dict[tuple[Taint, ...], int] = {}
            ids = np.zeros(self.size, dtype=np.int32)
            for row, node in enumerate(self.nodes):
                taints = node.taints if node is not None else ()
                ids[row] = sets.setdefault(taints, len(sets))
            found = (ids, list(sets))
            self._derived["taints"] = found
            self._derived["taint_index"] = sets
        return found

    def image_rows(self, image: str) -> tuple[np.ndarray, np.ndarray]:
        """Rows that have ``image`` and its size on each of them."""
        index = self._derived.get("images")
        if index is None:
            collected: dict[str, tuple[list[int], list[int]]] = {}
            for row, node in enumerate(self.nodes):
                if node is not None:
                    for name, size in node.images.items():
                        rows, sizes = collected.setdefault(name, ([], []))
                        rows.append(row)
                        sizes.append(size)
            index = {k: (np.asarray(r, dtype=np.int64), np.asarray(s, dtype=np.int64)) for k, (r, s) in collected.items()}
            self._derived["images"] = index
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        found: tuple[np.ndarray, np.ndarray] = index.get(image, empty)
        return found

    def node_derived(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``, cached under ``key`` until the next node change.

        For answers that depend only on node objects (labels, taints, images, names,
        allocatable) and on what ``key`` holds, never on the pods placed: a plugin
        caches what it computes for one shape of pod (its tolerations, its node
        selector) with ``key = (plugin name, ..., the pod's fields read)``. Any node
        add, update or removal drops every entry. Treat the value as read-only.
        """
        store = self._node_cache
        found = store.get(key, _MISSING)
        if found is _MISSING:
            if len(store) >= 4096:
                store.clear()
            found = store[key] = compute()
        return found

    def rows_changed_since(self, pod_generation: int) -> list[int] | None:
        """Rows whose pod totals changed since ``pod_generation`` (repeats possible), or
        None when that is too long ago to tell."""
        if pod_generation < self._row_log_base:
            return None
        return self._row_log[pod_generation - self._row_log_base :]

    def row_cached(
        self,
        key: Hashable,
        compute: Callable[[np.ndarray], np.ndarray],
        compute_row: Callable[[int], Any] | None = None,
        eager: bool = False,
    ) -> np.ndarray | None:
        """Per-row values for ``key``, kept current across cycles; None the first time a key is asked.

        ``compute(rows)`` returns the values at ``rows``; they must depend only on what
        ``key`` holds and on this table's columns at those rows (allocatable, requested,
        pod counts: what nodes and ``account_pod`` change). The first request for a key
        answers None (compute just the rows you need: a pod shape seen once is not worth
        caching; ``eager`` caches from the first request, for callers that need every
        row anyway); from the second on, the values of every row are computed once and then
        brought up to date by recomputing only the rows whose pods changed since, with
        ``compute_row(row)`` (a scalar, cheaper than array operations for a row or two)
        when given. The array is valid until the table next changes: read it, index it,
        do not keep or modify it.
        """
        node_generation, pod_generation = self.node_generation, self.pod_generation  # before reading rows
        entry = self._row_cache.get(key)
        if entry is not None and entry[0] == node_generation:
            if entry[1] == pod_generation:
                cached: np.ndarray = entry[2]
                return cached
            changed = self.rows_changed_since(entry[1])
            if changed is not None:
                changed = changed[: pod_generation - entry[1]]
            if changed is not None and len(changed) <= _ROW_CACHE_PATCH_LIMIT:
                values = entry[2]
                distinct = set(changed)
                if compute_row is not None and len(distinct) <= _ROW_CACHE_SCALAR_LIMIT:
                    for row in distinct:
                        values[row] = compute_row(row)
                elif distinct:
                    rows = np.fromiter(distinct, dtype=np.int64, count=len(distinct))
                    values[rows] = compute(rows)
                entry[1] = pod_generation
                patched: np.ndarray = values
                return patched
        elif entry is None and not eager and key not in self._row_cache_asked:
            if len(self._row_cache_asked) >= _ROW_CACHE_KEYS:
                self._row_cache_asked.clear()
            self._row_cache_asked[key] = True
            return None
        values = compute(np.arange(self.size))
        cache = self._row_cache
        cache.pop(key, None)
        while cache and len(cache) >= max(16, min(_ROW_CACHE_KEYS, _ROW_CACHE_VALUES // max(self.size, 1))):
            del cache[next(iter(cache))]  # the oldest
        cache[key] = [node_generation, pod_generation, values]
        return values

    def rows_of(self, names: Iterable[str]) -> list[int]:
        rows = self.name_rows()
        return [rows[n] for n in names if n in rows]
