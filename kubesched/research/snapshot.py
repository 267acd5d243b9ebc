"""``Snapshot``: a cluster snapshot as its Kubernetes objects, to edit before simulating.

``kubesched simulate`` compiles a dump object by object and lets the documents go; a
study wants to change the cluster first (cordon a node, add nodes or workloads, remove
objects) and run again. A ``Snapshot`` keeps every object as a plain dict: change them
directly or with the helpers, then pass the snapshot to ``simulate``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cluster.dump_reader import DumpObject, ReadProblem, read_dump
from ..cluster.snapshot import LoadProblem, SnapshotError
from ..cluster.what_if import DrainFlags, WhatIf, WhatIfEdits, WhatIfError, WhatIfRecord

__all__ = ["Snapshot", "SnapshotError", "WhatIfError", "WhatIfRecord"]

SUFFIXES = (".yaml", ".yml", ".json")


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    return [path]


def _read(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    if not path.exists():
        raise SnapshotError([LoadProblem(str(path), "", "", "no such file or directory")])
    problems: list[LoadProblem] = []
    for file in _files(path):
        read: list[ReadProblem] = []
        for found in read_dump(file, read):
            yield str(file), dict(found.obj)
        problems.extend(LoadProblem(str(file), r.obj, r.field, r.message) for r in read)
    if problems:
        raise SnapshotError(problems)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


@dataclass(slots=True)
class Snapshot:
    """Kubernetes objects (dicts, as ``kubectl get -o json`` writes them) and where each came from."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # the file of each object ("<added>" for added ones)

    @classmethod
    def load(cls, path: str | Path) -> Snapshot:
        """Every object of a file or directory of YAML/JSON (``List``s unpacked); raises
        ``SnapshotError`` listing every document that cannot be read."""
        snap = cls()
        for source, obj in _read(Path(path)):
            snap.objects.append(obj)
            snap.sources.append(source)
        return snap

    def copy(self) -> Snapshot:
        """A deep copy: edit it without touching this one (one baseline, several what-ifs)."""
        return Snapshot(copy.deepcopy(self.objects), list(self.sources))

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [obj for obj in self.objects if obj.get("kind") == kind]

    @property
    def nodes(self) -> list[dict[str, Any]]:
        return self.of_kind("Node")

    @property
    def pods(self) -> list[dict[str, Any]]:
        return self.of_kind("Pod")

    def find(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """The object of that kind and name (and namespace, when given), or None."""
        return next(self._matching(kind, name, namespace), None)

    def _matching(self, kind: str, name: str, namespace: str | None) -> Iterator[dict[str, Any]]:
        for obj in self.objects:
            meta = _meta(obj)
            if obj.get("kind") == kind and meta.get("name") == name and (
                    namespace is None or meta.get("namespace", "default") == namespace):
                yield obj

    def add(self, *objects: Mapping[str, Any] | str | Path) -> int:
        """Add objects, or every object of files (as ``load`` reads them); how many were added."""
        added = 0
        for item in objects:
            if isinstance(item, Mapping):
                self.objects.append(copy.deepcopy(dict(item)))
                self.sources.append("<added>")
                added += 1
            else:
                for source, obj in _read(Path(item)):
                    self.objects.append(obj)
                    self.sources.append(source)
                    added += 1
        return added

    def remove(self, kind: str, name: str, namespace: str | None = None) -> int:
        """Drop the objects of that kind and name (in ``namespace``, when given); how many
        went. Removing a node leaves its pods: they then count as pods on a missing node."""
        keep = [(obj, src) for obj, src in zip(self.objects, self.sources)
                if not (obj.get("kind") == kind and _meta(obj).get("name") == name and (
                    namespace is None or _meta(obj).get("namespace", "default") == namespace))]
        removed = len(self.objects) - len(keep)
        self.objects = [obj for obj, _ in keep]
        self.sources = [src for _, src in keep]
        return removed

    def drain(self, *nodes: str, force: bool = False, ignore_daemonsets: bool = False,
              delete_emptydir_data: bool = False) -> WhatIfRecord:
        """Drain ``nodes`` as ``kubesched simulate --drain`` does (``kubectl drain``'s rules and
        flags): each is cordoned and its pods come back as pending pods, except those kubectl
        drain keeps (DaemonSet and mirror pods; pods without a controller or with an emptyDir
        unless ``force`` / ``delete_emptydir_data``, which the record lists as refused) and
        those it deletes for good (finished pods, and under ``force`` pods without a
        controller). The record lists the evicted pods; an unknown node raises ``WhatIfError``."""
        edits = WhatIfEdits(WhatIf(drain=list(nodes), flags=DrainFlags(force, ignore_daemonsets, delete_emptydir_data)))
        objects: list[dict[str, Any]] = []
        sources: list[str] = []
        for document, (source, obj) in enumerate(zip(self.sources, self.objects), start=1):
            for where, found in edits.feed(source, DumpObject(obj, document)):
                objects.append(dict(found.obj))
                sources.append(where)
        for where, found in edits.rest():
            objects.append(dict(found.obj))
            sources.append(where)
        if edits.problems:
            raise WhatIfError(edits.problems)
        self.objects, self.sources = objects, sources
        return edits.record

    def cordon(self, node: str) -> None:
        """Mark the node unschedulable (``spec.unschedulable``, as ``kubectl cordon``)."""
        found = self.find("Node", node)
        if found is None:
            raise KeyError(f"no Node {node!r} in the snapshot")
        found.setdefault("spec", {})["unschedulable"] = True
