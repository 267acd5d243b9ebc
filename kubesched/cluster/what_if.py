"""What-if edits on a snapshot: drain nodes, add objects, remove objects, before scheduling.

The questions cluster-autoscaler's scale-down and every node maintenance ask. The edits
work on the objects as they are read (``ObjectEdits`` of the snapshot loader, for a
file or a cluster alike), so a large dump is still compiled one object at a time:

* ``--drain NODE`` / ``--drain-selector``: the node is cordoned (``spec.unschedulable``,
  what ``kubectl cordon`` sets) and its pods come back as pending pods, as their
  controllers would recreate them, except those ``kubectl drain`` leaves in place:
  mirror pods (annotation ``kubernetes.io/config.mirror``) and DaemonSet pods (a
  controller reference of kind DaemonSet: ``--ignore-daemonsets``). Finished pods are
  gone anyway. A pod with no controller, or with an ``emptyDir`` volume, is flagged:
  kubectl drain refuses it without ``--force`` / ``--delete-emptydir-data``.
* ``--remove KIND/NAME`` (``KIND/NAMESPACE/NAME`` for namespaced kinds): the object is
  dropped. Removing a node drains it first (its pods come back as pending pods as
  above), then drops it and the pods kubectl drain would have left on it.
* ``--add FILE``: the objects of FILE join the snapshot (new nodes, new workloads).

A pod's node is known only once the node has been read; a pod read before its node is
held back until the end (``rest``), so the usual dump, nodes first, holds none.
``WhatIfRecord`` says what was done, for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..framework.preemption.pdb import PDB_KIND, DisruptionBudget, parse_pdb
from ..objects.pod import PodInfo
from .dump_reader import DumpObject, ReadProblem, read_dump
from .snapshot import ClusterSnapshot

__all__ = ["WhatIf", "WhatIfEdits", "WhatIfRecord", "EvictedPod", "BudgetCheck", "parse_removal", "WhatIfError",
           "MIRROR_ANNOTATION", "check_budgets"]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
NodeSelectorFn = Callable[[Mapping[str, str]], bool]


class WhatIfError(ValueError):
    """Edits that cannot be applied: one line each."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True, slots=True)
class Removal:
    kind: str  # lower case, as given: "node", "pod", "deployment"
    namespace: str  # "" for a cluster-scoped object
    name: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace + '/' if self.namespace else ''}{self.name}"


def parse_removal(text: str) -> Removal:
    """``KIND/NAME`` or ``KIND/NAMESPACE/NAME``; ``WhatIfError`` otherwise."""
    parts = text.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise WhatIfError([f"--remove {text}: want KIND/NAME, or KIND/NAMESPACE/NAME for a namespaced object"])
    if len(parts) == 2:
        return Removal(parts[0].lower(), "", parts[1])
    return Removal(parts[0].lower(), parts[1], parts[2])


@dataclass(slots=True)
class WhatIf:
    """The edits asked for, in the order the report names them."""

    drain: list[str] = field(default_factory=list)  # node names
    drain_selector: NodeSelectorFn | None = None
    drain_selector_text: str = ""
    add: list[str] = field(default_factory=list)  # files
    remove: list[Removal] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.drain or self.drain_selector is not None or self.add or self.remove)

    def describe(self) -> list[str]:
        """One line per edit, as the report names them."""
        lines = [f"drain node {name}" for name in self.drain]
        if self.drain_selector is not None:
            lines.append(f"drain nodes matching {self.drain_selector_text}")
        lines += [f"add the objects of {path}" for path in self.add]
        lines += [f"remove {removal}" for removal in self.remove]
        return lines


@dataclass(slots=True)
class EvictedPod:
    """A pod a drain sends back to the queue; ``flags`` say what kubectl drain would refuse."""

    pod: str  # namespace/name
    node: str
    flags: list[str] = field(default_factory=list)


@dataclass(slots=True)
class BudgetCheck:
    """A PodDisruptionBudget whose pods a drain evicts."""

    budget: str  # namespace/name
    allowed: int  # disruptions allowed before the drain
    evicted: list[str]  # its pods the drain evicts

    @property
    def violated(self) -> bool:
        return len(self.evicted) > self.allowed


@dataclass(slots=True)
class WhatIfRecord:
    """What the edits did, for the report."""

    edits: list[str]
    drained_nodes: list[str] = field(default_factory=list)
    evicted: list[EvictedPod] = field(default_factory=list)
    left_in_place: dict[str, int] = field(default_factory=dict)  # "DaemonSet pods" / "mirror pods" -> count
    added: dict[str, int] = field(default_factory=dict)  # kind -> count
    removed: list[str] = field(default_factory=list)
    budgets: list[BudgetCheck] = field(default_factory=list)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _pod_key(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _controller_kind(obj: Mapping[str, Any]) -> str:
    owners = _meta(obj).get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        if isinstance(owner, Mapping) and owner.get("controller"):
            return str(owner.get("kind") or "")
    return ""


def _finished(obj: Mapping[str, Any]) -> bool:
    status = obj.get("status")
    return isinstance(status, Mapping) and status.get("phase") in ("Succeeded", "Failed")


class WhatIfEdits:
    """The ``ObjectEdits`` of one ``WhatIf``; ``record`` and ``problems`` after loading."""

    def __init__(self, what_if: WhatIf) -> None:
        self.what_if = what_if
        self.record = WhatIfRecord(what_if.describe())
        self.problems: list[str] = []
        self._drain_names = set(what_if.drain)
        self._removed_nodes = {r.name for r in what_if.remove if r.kind in ("node", "nodes")}
        self._removals = {(r.kind, r.namespace, r.name): r for r in what_if.remove}
        self._found_removals: set[Removal] = set()
        self._nodes: dict[str, bool] = {}  # node read -> drained (or removed)
        self._held: list[tuple[str, DumpObject]] = []  # pods read before their node
        self.budgets: list[Mapping[str, Any]] = []  # raw PDBs, for the drain's budget check

    # --- ObjectEdits ----------------------------------------------------------------------
    def feed(self, file: str, found: DumpObject) -> Iterator[tuple[str, DumpObject]]:
        obj = found.obj
        kind = str(obj.get("kind") or "")
        meta = _meta(obj)
        removal = self._removal(kind, meta) if self._removals else None
        if kind == "Node":
            name = str(meta.get("name") or "")
            drained = self._drains(name, obj)
            self._nodes[name] = drained
            if drained:
                self.record.drained_nodes.append(name)
            if removal is not None:
                self._found_removals.add(removal)
                self.record.removed.append(str(removal))
                return
            if drained:
                yield file, DumpObject(_cordoned(obj), found.document, found.item)
                return
        elif kind == PDB_KIND:
            self.budgets.append(obj)
        if removal is not None:
            self._found_removals.add(removal)
            self.record.removed.append(str(removal))
            return
        if kind == "Pod":
            yield from self._pod(file, found)
            return
        yield file, found

    def rest(self) -> Iterator[tuple[str, DumpObject]]:
        held, self._held = self._held, []
        for file, found in held:
            yield from self._pod(file, found, last=True)
        for path in self.what_if.add:
            yield from self._added(path)
        for name in self.what_if.drain:
            if name not in self._nodes:
                self.problems.append(f"--drain {name}: no node named {name} in the snapshot")
        if self.what_if.drain_selector is not None and not any(self._nodes.values()):
            self.problems.append(f"--drain-selector {self.what_if.drain_selector_text}: no node matches")
        for removal in self.what_if.remove:
            if removal not in self._found_removals:
                self.problems.append(f"--remove {removal}: no such object in the snapshot")

    # --- edits ----------------------------------------------------------------------------
    def _removal(self, kind: str, meta: Mapping[str, Any]) -> Removal | None:
        """The ``--remove`` naming this object: its kind in lower case, singular or plural; a
        namespaced object named without a namespace is looked for in ``default``."""
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        # An object written without a namespace lives in "default" (kubectl's dumps name it).
        namespaces = (namespace, "") if namespace == "default" else (namespace, "default") if not namespace else (namespace,)
        for spelled in (kind.lower(), kind.lower() + "s"):
            for ns in namespaces:
                found = self._removals.get((spelled, ns, name))
                if found is not None:
                    return found
        return None

    def _drains(self, name: str, node: Mapping[str, Any]) -> bool:
        if name in self._drain_names or name in self._removed_nodes:
            return True
        selector = self.what_if.drain_selector
        if selector is None:
            return False
        labels = _meta(node).get("labels")
        return selector(labels if isinstance(labels, Mapping) else {})

    def _pod(self, file: str, found: DumpObject, last: bool = False) -> Iterator[tuple[str, DumpObject]]:
        obj = found.obj
        node = _spec(obj).get("nodeName")
        if not node or not isinstance(node, str) or _finished(obj):
            yield file, found
            return
        drained = self._nodes.get(node)
        if drained is None:
            if not last:
                self._held.append((file, found))
                return
            drained = False
        if not drained:
            yield file, found
            return
        staying = self._stays(obj)
        if staying:
            self.record.left_in_place[staying] = self.record.left_in_place.get(staying, 0) + 1
            if node not in self._removed_nodes:  # a removed node's pods go with it
                yield file, found
            return
        self.record.evicted.append(EvictedPod(_pod_key(obj), node, _drain_flags(obj)))
        yield file, DumpObject(_evicted(obj), found.document, found.item)

    @staticmethod
    def _stays(pod: Mapping[str, Any]) -> str:
        """Why kubectl drain leaves ``pod`` where it is ("" when it evicts it)."""
        annotations = _meta(pod).get("annotations")
        if isinstance(annotations, Mapping) and MIRROR_ANNOTATION in annotations:
            return "mirror pods"
        if _controller_kind(pod) == "DaemonSet":
            return "DaemonSet pods"
        return ""

    def _added(self, path: str) -> Iterator[tuple[str, DumpObject]]:
        file = Path(path)
        if not file.is_file():
            self.problems.append(f"--add {path}: no such file")
            return
        read: list[ReadProblem] = []
        for found in read_dump(file, read):
            kind = str(found.obj.get("kind") or "")
            self.record.added[kind] = self.record.added.get(kind, 0) + 1
            if kind == PDB_KIND:
                self.budgets.append(found.obj)
            yield path, found
        self.problems.extend(f"--add {path}: {' '.join(p for p in (r.where, r.obj, r.field) if p)}: {r.message}"
                             for r in read)


def _cordoned(node: Mapping[str, Any]) -> dict[str, Any]:
    return {**node, "spec": {**_spec(node), "unschedulable": True}}


def _evicted(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod as its controller would recreate it: unbound, pending, no status."""
    spec = {k: v for k, v in _spec(pod).items() if k != "nodeName"}
    return {**pod, "spec": spec, "status": {"phase": "Pending"}}


def _drain_flags(pod: Mapping[str, Any]) -> list[str]:
    flags: list[str] = []
    if not _controller_kind(pod):
        flags.append("no controller: kubectl drain refuses it without --force, and nothing recreates it")
    volumes = _spec(pod).get("volumes")
    if isinstance(volumes, list) and any(isinstance(v, Mapping) and "emptyDir" in v for v in volumes):
        flags.append("emptyDir volume: kubectl drain needs --delete-emptydir-data, and the data is lost")
    return flags


def _int_or_percent(value: object, total: int, round_up: bool) -> int | None:
    """An IntOrString of a PDB as the disruption controller scales it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%"):
        try:
            percent = int(value[:-1])
        except ValueError:
            return None
        scaled = percent * total
        return -(-scaled // 100) if round_up else scaled // 100
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _allowed(raw: Mapping[str, Any], budget: DisruptionBudget, healthy: int) -> int:
    """``status.disruptionsAllowed`` when the disruption controller wrote it; otherwise what it
    would write with every matching bound pod healthy and expected."""
    status = raw.get("status")
    if isinstance(status, Mapping) and isinstance(status.get("disruptionsAllowed"), int):
        return budget.disruptions_allowed
    spec = _spec(raw)
    if spec.get("minAvailable") is not None:
        wanted = _int_or_percent(spec.get("minAvailable"), healthy, round_up=True)
        return max(0, healthy - wanted) if wanted is not None else 0
    if spec.get("maxUnavailable") is not None:
        unavailable = _int_or_percent(spec.get("maxUnavailable"), healthy, round_up=True)
        return max(0, unavailable) if unavailable is not None else 0
    return 0


def check_budgets(edits: WhatIfEdits, snapshot: ClusterSnapshot) -> list[BudgetCheck]:
    """The budgets whose pods the drain evicts, each with the disruptions it allows (violated
    ones first); stored in ``edits.record.budgets`` too."""
    evicted = {e.pod for e in edits.record.evicted}
    if not evicted:
        return []
    evicted_pods: list[PodInfo] = [p for p in snapshot.pending_pods if p.key in evicted]
    checks: list[BudgetCheck] = []
    for raw in edits.budgets:
        budget = parse_pdb(raw)
        if budget.selector is None:
            continue
        hit = sorted(p.key for p in evicted_pods if budget.covers(p))
        if not hit:
            continue
        healthy = len(hit) + sum(1 for p in snapshot.bound_pods if budget.covers(p))
        checks.append(BudgetCheck(f"{budget.namespace}/{budget.name}", _allowed(raw, budget, healthy), hit))
    checks.sort(key=lambda c: (not c.violated, c.budget))
    edits.record.budgets = checks
    return checks
