"""What-if edits on a snapshot: drain nodes, add objects, remove objects, before scheduling.

The questions cluster-autoscaler's scale-down and every node maintenance ask. The edits
work on the objects as they are read (``ObjectEdits`` of the snapshot loader, for a
file or a cluster alike), so a large dump is still compiled one object at a time:

* ``--drain NODE`` / ``--drain-selector``: the node is cordoned (``spec.unschedulable``,
  what ``kubectl cordon`` sets) and each of its pods goes through ``kubectl drain``'s
  filters (``drain_rules``): mirror pods and DaemonSet pods stay (kubectl refuses the
  DaemonSet ones without ``--ignore-daemonsets``); a pod without a controller stays and
  blocks the drain unless ``--force``, which deletes it (nothing recreates it); a pod with
  an ``emptyDir`` stays and blocks unless ``--delete-emptydir-data``; a finished pod is
  deleted; every other pod is evicted and comes back pending, as its controller would
  recreate it. The refusals are kubectl's messages; the drain is simulated past them, so
  the report says both what kubectl would refuse and where the rest would go.
* A drained node receives no pod for the whole simulation. Cordoning keeps off every pod
  but those that tolerate ``node.kubernetes.io/unschedulable`` (a catch-all toleration
  does): those pods, evicted or pending, get a required node affinity term excluding the
  drained nodes (``metadata.name NotIn``), and the record names them. A pod whose
  controller's template (a ReplicaSet, ReplicationController, StatefulSet or Job in the
  snapshot) sets ``spec.nodeName`` to the drained node is recreated there, bypassing the
  scheduler: it cannot move, and stays.
* ``--remove KIND/NAME`` (``KIND/NAMESPACE/NAME`` for namespaced kinds): the object is
  dropped. Removing a node drains it first (its pods come back as pending pods as
  above), then drops it and the pods kubectl drain would have left on it.
* ``--add FILE``: the objects of FILE join the snapshot (new nodes, new workloads).

A pod's node is known only once the node has been read; a pod read before its node is
held back until the end (``rest``), so the usual dump, nodes first, holds none. Evicted
pods, and pending pods that tolerate the cordon, are held back too: which nodes a
selector drains, and which controllers pin their pods, is known only at the end.
``WhatIfRecord`` says what was done, for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..framework.preemption.pdb import PDB_KIND, DisruptionBudget, parse_pdb
from ..objects.errors import ObjectError
from ..objects.pod import PodInfo
from ..objects.taints import Taint, parse_tolerations
from .drain_rules import MIRROR_ANNOTATION, DrainFlags, controller_of, drain_verdict, is_finished
from .dump_reader import DumpObject, ReadProblem, read_dump
from .snapshot import ClusterSnapshot

__all__ = ["WhatIf", "WhatIfEdits", "WhatIfRecord", "EvictedPod", "BudgetCheck", "parse_removal", "WhatIfError",
           "MIRROR_ANNOTATION", "check_budgets", "DrainFlags", "disruptions_allowed"]

NodeSelectorFn = Callable[[Mapping[str, str]], bool]
# What a cordon puts on a node (the node lifecycle controller's taint for spec.unschedulable).
CORDON_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
# Controllers whose pod template a snapshot may hold, by kind.
TEMPLATE_KINDS = ("ReplicaSet", "ReplicationController", "StatefulSet", "Job")
NODE_NAME_FIELD = "metadata.name"


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
    """The edits asked for, in the order the report names them, and kubectl drain's flags."""

    drain: list[str] = field(default_factory=list)  # node names
    drain_selector: NodeSelectorFn | None = None
    drain_selector_text: str = ""
    add: list[str] = field(default_factory=list)  # files
    remove: list[Removal] = field(default_factory=list)
    flags: DrainFlags = field(default_factory=DrainFlags)

    def __bool__(self) -> bool:
        return bool(self.drain or self.drain_selector is not None or self.add or self.remove)

    def describe(self) -> list[str]:
        """One line per edit, as the report names them."""
        given = [name for name, on in (("--force", self.flags.force), ("--ignore-daemonsets", self.flags.ignore_daemonsets),
                                       ("--delete-emptydir-data", self.flags.delete_emptydir_data)) if on]
        how = f" ({', '.join(given)})" if given else ""
        lines = [f"drain node {name}{how}" for name in self.drain]
        if self.drain_selector is not None:
            lines.append(f"drain nodes matching {self.drain_selector_text}{how}")
        lines += [f"add the objects of {path}" for path in self.add]
        lines += [f"remove {removal}" for removal in self.remove]
        return lines


@dataclass(slots=True)
class EvictedPod:
    """A pod a drain evicts, which its controller recreates pending; ``flags`` are kubectl's
    warnings about it (its emptyDir data lost)."""

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
    # kubectl drain's errors, message -> pods: it refuses the drain; the pods stay on their node.
    refused: dict[str, list[str]] = field(default_factory=dict)
    # kubectl drain's warnings, message -> pods (the last filter's, as kubectl prints them).
    warnings: dict[str, list[str]] = field(default_factory=dict)
    # Pods the drain deletes and nothing recreates, why -> pods.
    deleted: dict[str, list[str]] = field(default_factory=dict)
    # Evicted pods that cannot move, pod -> why (they stay on their node, or go with it).
    unmovable: dict[str, str] = field(default_factory=dict)
    # Pods (evicted or pending) that tolerate the cordon, kept off the drained nodes by node affinity.
    kept_off: list[str] = field(default_factory=list)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _pod_key(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _add(table: dict[str, list[str]], key: str, pod: str) -> None:
    table.setdefault(key, []).append(pod)


FINISHED = "finished pods (Succeeded or Failed): nothing restarts them"
FORCED = "pods that declare no controller (--force): nothing recreates them"


@dataclass(slots=True)
class _Held:
    """An evicted pod (or a pending one that tolerates the cordon) held until the end."""

    file: str
    found: DumpObject  # the pod as it goes into the snapshot (evicted: unbound)
    original: DumpObject | None = None  # an evicted pod as read (bound), to stay if it cannot move
    node: str = ""


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
        self._evicted: list[_Held] = []  # evicted pods and cordon-tolerating pending pods, until the end
        self._drains = bool(what_if.drain or what_if.drain_selector is not None)
        self._templates: dict[tuple[str, str, str], str] = {}  # (kind, namespace, name) -> template's nodeName
        self.budgets: list[Mapping[str, Any]] = []  # raw PDBs, for the drain's budget check

    # --- ObjectEdits ----------------------------------------------------------------------
    def feed(self, file: str, found: DumpObject) -> Iterator[tuple[str, DumpObject]]:
        obj = found.obj
        kind = str(obj.get("kind") or "")
        meta = _meta(obj)
        removal = self._removal(kind, meta) if self._removals else None
        if kind == "Node":
            name = str(meta.get("name") or "")
            drained = self._drains_node(name, obj)
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
        elif kind in TEMPLATE_KINDS:
            self._template(kind, meta, obj)
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
        yield from self._release()
        for path in self.what_if.add:
            yield from self._added(path)
        for name in self.what_if.drain:
            if name not in self._nodes:
                self.problems.append(f"--drain {name}: no node named {name} in the snapshot")
        if self.what_if.drain_selector is not None and not any(
                drained for name, drained in self._nodes.items() if name not in self._removed_nodes):
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

    def _drains_node(self, name: str, node: Mapping[str, Any]) -> bool:
        if name in self._drain_names or name in self._removed_nodes:
            return True
        selector = self.what_if.drain_selector
        if selector is None:
            return False
        labels = _meta(node).get("labels")
        return selector(labels if isinstance(labels, Mapping) else {})

    def _template(self, kind: str, meta: Mapping[str, Any], obj: Mapping[str, Any]) -> None:
        """Remember a controller whose pod template sets ``spec.nodeName``."""
        template = _spec(obj).get("template")
        node = _spec(template).get("nodeName") if isinstance(template, Mapping) else None
        if isinstance(node, str) and node:
            self._templates[(kind, str(meta.get("namespace") or "default"), str(meta.get("name") or ""))] = node

    def _pod(self, file: str, found: DumpObject, last: bool = False) -> Iterator[tuple[str, DumpObject]]:
        obj = found.obj
        node = _spec(obj).get("nodeName")
        if not node or not isinstance(node, str):
            if self._drains and not is_finished(obj) and _tolerates_cordon(obj):
                self._evicted.append(_Held(file, found))  # kept off the drained nodes, once all are known
                return
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
        key = _pod_key(obj)
        verdict, warnings = drain_verdict(obj, self.what_if.flags)
        removed = node in self._removed_nodes
        if verdict.message:
            _add(self.record.refused if verdict.refused else self.record.warnings, verdict.message, key)
        if not verdict.delete:
            staying = _staying(obj)
            if staying:
                self.record.left_in_place[staying] = self.record.left_in_place.get(staying, 0) + 1
            if not removed:  # a removed node's pods go with it
                yield file, found
            return
        if is_finished(obj):
            _add(self.record.deleted, FINISHED, key)
            return
        if controller_of(obj) is None:  # deleted under --force: nothing recreates it
            _add(self.record.deleted, FORCED, key)
            return
        self.record.evicted.append(EvictedPod(key, node, list(warnings)))
        self._evicted.append(_Held(file, DumpObject(_evicted(obj), found.document, found.item), found, node))

    def _release(self) -> Iterator[tuple[str, DumpObject]]:
        """The held pods, now that every drained node is known: a pod its controller pins to a
        drained node stays (or goes with a removed node); a pod that tolerates the cordon is
        kept off the drained nodes."""
        held, self._evicted = self._evicted, []
        cordoned = sorted(name for name, drained in self._nodes.items() if drained and name not in self._removed_nodes)
        for item in held:
            obj = item.found.obj
            key = _pod_key(obj)
            if item.original is not None:
                pinned = self._pinned_to(item.original.obj)
                if pinned == item.node:
                    self.record.unmovable[key] = (f"its controller's pod template sets spec.nodeName: {pinned}: "
                                                  "recreated there, bypassing the scheduler")
                    if item.node not in self._removed_nodes:
                        yield item.file, item.original
                    continue
            if cordoned and _tolerates_cordon(obj):
                self.record.kept_off.append(key)
                obj = _kept_off(obj, cordoned)
                yield item.file, DumpObject(obj, item.found.document, item.found.item)
                continue
            yield item.file, item.found

    def _pinned_to(self, pod: Mapping[str, Any]) -> str:
        owner = controller_of(pod)
        if owner is None:
            return ""
        namespace = str(_meta(pod).get("namespace") or "default")
        return self._templates.get((str(owner.get("kind") or ""), namespace, str(owner.get("name") or "")), "")

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


def _staying(pod: Mapping[str, Any]) -> str:
    """Which kind of pod kubectl drain leaves where it is ("" for a pod it refuses)."""
    annotations = _meta(pod).get("annotations")
    if isinstance(annotations, Mapping) and MIRROR_ANNOTATION in annotations:
        return "mirror pods"
    owner = controller_of(pod)
    if owner is not None and owner.get("kind") == "DaemonSet":
        return "DaemonSet pods"
    return ""


def _tolerates_cordon(pod: Mapping[str, Any]) -> bool:
    raw = _spec(pod).get("tolerations")
    if not raw:
        return False
    try:
        tolerations = parse_tolerations(raw, "spec.tolerations")
    except ObjectError:
        return False  # the loader reports it
    return any(t.tolerates(CORDON_TAINT) for t in tolerations)


def _kept_off(pod: Mapping[str, Any], nodes: list[str]) -> dict[str, Any]:
    """``pod`` with a required node affinity that excludes ``nodes`` (one ``metadata.name NotIn``
    field requirement each, upstream's field selectors taking one value): ANDed into each
    term of the pod's own required terms, or the only term when it has none. An empty term
    matches no node and stays empty."""
    spec = _spec(pod)
    affinity = _map(spec.get("affinity"))
    node_affinity = _map(affinity.get("nodeAffinity"))
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    excluded = [{"key": NODE_NAME_FIELD, "operator": "NotIn", "values": [name]} for name in nodes]
    if isinstance(required, Mapping) and isinstance(required.get("nodeSelectorTerms"), list):
        terms = [
            {**term, "matchFields": [*(term.get("matchFields") or []), *excluded]}
            if isinstance(term, Mapping) and (term.get("matchExpressions") or term.get("matchFields")) else term
            for term in required["nodeSelectorTerms"]
        ]
        required = {**required, "nodeSelectorTerms": terms}
    else:
        required = {"nodeSelectorTerms": [{"matchFields": excluded}]}
    node_affinity = {**node_affinity, "requiredDuringSchedulingIgnoredDuringExecution": required}
    return {**pod, "spec": {**spec, "affinity": {**affinity, "nodeAffinity": node_affinity}}}


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _cordoned(node: Mapping[str, Any]) -> dict[str, Any]:
    return {**node, "spec": {**_spec(node), "unschedulable": True}}


def _evicted(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod as its controller would recreate it: unbound, pending, no status."""
    spec = {k: v for k, v in _spec(pod).items() if k != "nodeName"}
    return {**pod, "spec": spec, "status": {"phase": "Pending"}}


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


def disruptions_allowed(raw: Mapping[str, Any], budget: DisruptionBudget, healthy: int) -> int:
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
        checks.append(BudgetCheck(f"{budget.namespace}/{budget.name}", disruptions_allowed(raw, budget, healthy), hit))
    checks.sort(key=lambda c: (not c.violated, c.budget))
    edits.record.budgets = checks
    return checks
