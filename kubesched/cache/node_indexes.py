"""Indexes of the node table derived from node objects: label values, selector masks,
taint sets, images, names, and plugins' own node-derived answers.

Batch plugins ask the same questions of every node each cycle (which rows carry this
label value, which satisfy this requirement, which have this image); the answers change
only when a node does. They are built on first use and then patched at the one row a
node add, update or removal touches, so that node churn costs what it changes, not a
rebuild over every node. Kept apart from the columns because nothing here depends on
the pods placed.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable

import numpy as np

from ..objects.node import Node
from ..objects.selectors import NodeSelector, NodeSelectorTerm, Requirement, _parse_int
from ..objects.taints import Taint

__all__ = ["NodeIndexes"]

_MISSING = object()
_NO_LABELS: dict[str, str] = {}
_NO_IMAGES: dict[str, int] = {}
_NO_IMAGE_ROWS = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
_IMAGES_ONE_BY_ONE = 16  # images image_rows() finds one by one before it indexes every image
_LABEL_DERIVED = ("label", "number", "req")  # _derived keys computed from node labels


def _grown(arr: np.ndarray, size: int, fill: Any) -> np.ndarray:
    """A copy of a per-row array, extended to ``size`` rows with ``fill``."""
    if len(arr) >= size:
        return arr.copy()
    return np.concatenate([arr, np.full(size - len(arr), fill, dtype=arr.dtype)])


class NodeIndexes:
    """Node-derived indexes, built on first use and patched per row; see ``NodeTable``."""

    # NodeColumns': the rows the indexes are built over
    size: int
    names: list[str]
    nodes: list[Node | None]
    _free: list[int]

    def __init__(self) -> None:
        self._derived: dict[Hashable, Any] = {}
        self._node_cache: dict[Hashable, Any] = {}  # node_derived(): plugins' answers that depend on node objects only

    # -- keeping them current -------------------------------------------------
    def _patch_indexes(self, row: int, old: Node | None, new: Node | None) -> None:
        """One row's node came (``old`` None), went (``new`` None) or changed: patch every
        index at that row, as a fresh build would have it.

        Derived arrays are replaced, never written in place, so a reader holding one from
        before still has a consistent (old) view.
        """
        derived = self._derived
        old_labels = old.labels if old is not None else _NO_LABELS
        new_labels = new.labels if new is not None else _NO_LABELS
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

    def _live_rows(self) -> int:
        return self.size - len(self._free)

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
            ids = _grown(ids, self.size, -1)
            ids[row] = -1 if value is None else vocab[value]
            derived[key] = (ids, vocab)
        elif kind == "number":
            numbers, valid = derived[key]
            numbers, valid = _grown(numbers, self.size, 0), _grown(valid, self.size, False)
            parsed = _parse_int(labels[key[1]]) if key[1] in labels else None
            numbers[row] = 0 if parsed is None else parsed
            valid[row] = parsed is not None
            derived[key] = (numbers, valid)
        else:  # ("req", requirement): a row without a node reads as one without labels
            requirement: Requirement = key[1]
            mask = _grown(derived[key], self.size, requirement.matches(_NO_LABELS))
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
        ids = _grown(ids, self.size, index[()])
        ids[row] = index[taints]
        self._derived["taints"] = (ids, sets)

    def _patch_images(self, row: int, old: dict[str, int], new: dict[str, int]) -> None:
        index: dict[str, tuple[np.ndarray, np.ndarray]] | None = self._derived.get("images")
        if index is None:
            return
        complete = bool(self._derived.get("images_complete"))
        for name in old.keys() | new.keys():
            if old.get(name) == new.get(name):
                continue
            found = index.get(name)
            if found is None:
                if not complete:  # not asked for yet: found from the nodes when it is
                    continue
                found = _NO_IMAGE_ROWS
            rows, sizes = found
            keep = rows != row
            rows, sizes = rows[keep], sizes[keep]
            if name in new:
                at = int(np.searchsorted(rows, row))
                rows, sizes = np.insert(rows, at, row), np.insert(sizes, at, new[name])
            if len(rows) or not complete:
                index[name] = (rows, sizes)  # (one by one, an empty entry says "asked for, on no node")
            else:
                index.pop(name, None)

    # -- names ----------------------------------------------------------------
    def frozen_names(self) -> list[str]:
        """A copy of ``names`` that later node changes leave alone (for records of past attempts).

        Shared between callers until the next node change; do not modify it.
        """
        found = self._derived.get("frozen_names")
        if found is None:
            found = self._derived["frozen_names"] = list(self.names)
        return found

    def name_rows(self) -> dict[str, int]:
        found = self._derived.get("names")
        if found is None:
            found = {name: row for row, name in enumerate(self.names) if name}
            self._derived["names"] = found
        return found

    def rows_of(self, names: Iterable[str]) -> list[int]:
        rows = self.name_rows()
        return [rows[n] for n in names if n in rows]

    # -- labels and selectors --------------------------------------------------
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

    # -- taints and images -----------------------------------------------------
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
        """Rows that have ``image`` and its size on each of them.

        The first few images asked for are found one by one (a pass over the nodes each):
        a cycle asks only for its pod's images, where indexing every image of every node
        cost ~35 ms at 5,000 nodes with a dozen images each. Once more images than
        ``_IMAGES_ONE_BY_ONE`` were asked for, every image is indexed at once. Either way
        the index is kept current as nodes change (``_patch_images``)."""
        index: dict[str, tuple[np.ndarray, np.ndarray]] | None = self._derived.get("images")
        if index is None:
            index = self._derived["images"] = {}
        found = index.get(image)
        if found is not None:
            return found
        if self._derived.get("images_complete"):
            return _NO_IMAGE_ROWS
        if len(index) >= _IMAGES_ONE_BY_ONE:  # a cluster of many images: index them all
            collected: dict[str, tuple[list[int], list[int]]] = {}
            for row, node in enumerate(self.nodes):
                if node is not None:
                    for name, size in node.images.items():
                        rows, sizes = collected.setdefault(name, ([], []))
                        rows.append(row)
                        sizes.append(size)
            index.clear()
            for name, (rows, sizes) in collected.items():
                index[name] = (np.asarray(rows, dtype=np.int64), np.asarray(sizes, dtype=np.int64))
            self._derived["images_complete"] = True
            return index.get(image, _NO_IMAGE_ROWS)
        with_image: list[int] = []
        image_sizes: list[int] = []
        for row, node in enumerate(self.nodes):
            if node is not None:
                image_size = node.images.get(image)
                if image_size is not None:
                    with_image.append(row)
                    image_sizes.append(image_size)
        found = index[image] = (np.asarray(with_image, dtype=np.int64), np.asarray(image_sizes, dtype=np.int64))
        return found

    # -- plugins' own ------------------------------------------------------------
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
