"""Reading a cluster snapshot: what ``kubectl get nodes,pods,priorityclasses -A -o yaml`` writes.

A snapshot is a file (YAML, possibly multi-document, or JSON) or a directory of
such files. Each document is an object or a ``List`` of objects. Every bad object
is reported (file, object, field), not just the first, and nothing is half-loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from ..objects.errors import ObjectError
from ..objects.node import Node, parse_node
from ..objects.pod import PodInfo, parse_pod
from ..objects.storage import validate_storage_object
from .yaml_documents import YAMLError, yaml_documents

__all__ = ["ClusterSnapshot", "SnapshotError", "LoadProblem", "load_snapshot", "snapshot_from_objects"]

USED_KINDS = ("Node", "Pod", "PriorityClass", "Namespace")
# Workload objects: PodTopologySpread's system defaults read their selectors.
SELECTOR_KINDS = ("Service", "ReplicaSet", "ReplicationController", "StatefulSet")
# Kinds that may sit in a dump beside the others and that scheduling does not read.
IGNORED_KINDS = ("Deployment", "DaemonSet", "Job", "CronJob", "ConfigMap", "Event", "Endpoints", "EndpointSlice")
TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass(slots=True)
class LoadProblem:
    file: str
    obj: str  # "Pod default/web-1", or "document 3"
    field: str
    message: str

    def __str__(self) -> str:
        where = " ".join(part for part in (self.obj, self.field) if part)
        return f"{self.file}: {where}: {self.message}" if where else f"{self.file}: {self.message}"


class SnapshotError(ValueError):
    def __init__(self, problems: list[LoadProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass(slots=True)
class ClusterSnapshot:
    nodes: list[Node] = field(default_factory=list)
    bound_pods: list[PodInfo] = field(default_factory=list)
    pending_pods: list[PodInfo] = field(default_factory=list)  # in queue order: creationTimestamp, then snapshot order
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    priority_classes: dict[str, int] = field(default_factory=dict)
    # A class's spec.preemptionPolicy, given to its pods with its value ("" is the globalDefault).
    preemption_policies: dict[str, str] = field(default_factory=dict)
    workloads: list[dict] = field(default_factory=list)  # Services, ReplicaSets, ... as raw objects
    objects: dict[str, list[dict]] = field(default_factory=dict)  # kind -> raw objects plugins read (PodGroups, ...)
    ignored: dict[str, int] = field(default_factory=dict)  # kind -> count of objects not read


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    return [path]


def _documents(path: Path, problems: list[LoadProblem]) -> Iterator[tuple[int, Any]]:
    try:
        text = path.read_bytes()
    except OSError as err:
        problems.append(LoadProblem(str(path), "", "", err.strerror or str(err)))
        return
    if path.suffix == ".json" or text.lstrip()[:1] in (b"{", b"["):
        try:
            yield 1, orjson.loads(text)
            return
        except orjson.JSONDecodeError as err:
            if path.suffix == ".json":
                problems.append(LoadProblem(str(path), "", "", f"invalid JSON: {err}"))
                return
    try:
        docs = yaml_documents(text)
    except YAMLError as err:
        problems.append(LoadProblem(str(path), "", "", str(err)))
        return
    for i, doc in enumerate(docs, start=1):
        if doc is not None:
            yield i, doc


def _describe(obj: Mapping) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    name = meta.get("name", "<unnamed>")
    ns = meta.get("namespace")
    kind = obj.get("kind", "object")
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _objects(doc: Any, file: str, index: int, problems: list[LoadProblem]) -> Iterator[Mapping]:
    if not isinstance(doc, Mapping):
        problems.append(LoadProblem(file, f"document {index}", "", "must be a Kubernetes object or List"))
        return
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            problems.append(LoadProblem(file, f"{kind} (document {index})", "items", "must be a list"))
            return
        for j, item in enumerate(items):
            if not isinstance(item, Mapping):
                problems.append(LoadProblem(file, f"{kind} (document {index})", f"items[{j}]", "must be an object"))
                continue
            if "kind" not in item and kind != "List":
                item = {**item, "kind": kind[: -len("List")]}
            yield item
        return
    yield doc


def load_snapshot(path: str | Path, plugin_kinds: frozenset[str] = frozenset(),
                  keep_node_raw: bool = False) -> ClusterSnapshot:
    """Read and compile a snapshot; raises ``SnapshotError`` listing every bad object.

    ``plugin_kinds``: kinds that plugins read (``PluginSpec.object_kinds``), kept raw.
    ``keep_node_raw``: keep each node's document (HTTP extenders are sent it).
    """
    root = Path(path)
    problems: list[LoadProblem] = []
    if not root.exists():
        raise SnapshotError([LoadProblem(str(root), "", "", "no such file or directory")])
    objects: list[tuple[str, Mapping]] = []
    files = _files(root)
    if not files:
        raise SnapshotError([LoadProblem(str(root), "", "", "holds no .yaml, .yml or .json file")])
    for file in files:
        for index, doc in _documents(file, problems):
            for obj in _objects(doc, str(file), index, problems):
                objects.append((str(file), obj))
    snapshot = snapshot_from_objects(objects, problems, plugin_kinds, keep_node_raw)
    if problems:
        raise SnapshotError(problems)
    return snapshot


def snapshot_from_objects(objects: list[tuple[str, Mapping]], problems: list[LoadProblem] | None = None,
                          plugin_kinds: frozenset[str] = frozenset(), keep_node_raw: bool = False) -> ClusterSnapshot:
    """Compile ``(file, object)`` pairs; problems are appended to ``problems`` (raised if None)."""
    own = problems is None
    problems = [] if problems is None else problems
    snap = ClusterSnapshot()
    raw_pods: list[tuple[str, Mapping]] = []
    claims: list[tuple[str, Mapping]] = []
    node_names: set[str] = set()
    for file, obj in objects:
        kind = obj.get("kind")
        try:
            if kind == "Node":
                node = parse_node(obj, keep_raw=keep_node_raw)
                if node.name in node_names:
                    problems.append(LoadProblem(file, _describe(obj), "metadata.name", "duplicate node"))
                    continue
                node_names.add(node.name)
                snap.nodes.append(node)
            elif kind == "Pod":
                raw_pods.append((file, obj))
            elif kind == "PriorityClass":
                value = obj.get("value")
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ObjectError("value", "must be an integer")
                name = (obj.get("metadata") or {}).get("name")
                snap.priority_classes[str(name)] = value
                policy = obj.get("preemptionPolicy") or "PreemptLowerPriority"
                snap.preemption_policies[str(name)] = str(policy)
                if obj.get("globalDefault"):
                    snap.priority_classes[""] = value
                    snap.preemption_policies[""] = str(policy)
            elif kind == "Namespace":
                meta = obj.get("metadata") or {}
                name = meta.get("name")
                if not isinstance(name, str) or not name:
                    raise ObjectError("metadata.name", "is required")
                labels = dict(meta.get("labels") or {})
                labels.setdefault("kubernetes.io/metadata.name", name)
                snap.namespaces[name] = labels
            elif kind in SELECTOR_KINDS:
                snap.workloads.append(dict(obj))
            elif kind in plugin_kinds:
                validate_storage_object(str(kind), obj)  # PVs, claims, ...: one clear line for a bad one
                snap.objects.setdefault(str(kind), []).append(dict(obj))
                if kind == "PersistentVolumeClaim":
                    claims.append((file, obj))
            elif kind in IGNORED_KINDS:
                snap.ignored[kind] = snap.ignored.get(kind, 0) + 1
            else:
                problems.append(
                    LoadProblem(file, _describe(obj), "kind", f"unknown kind {kind!r}; a snapshot holds {', '.join(USED_KINDS + SELECTOR_KINDS + tuple(sorted(plugin_kinds)))}")
                )
        except ObjectError as err:
            problems.append(LoadProblem(file, _describe(obj), err.field, err.message))
    _check_claim_namespaces(snap, claims, problems)
    pending: list[tuple[float, int, PodInfo]] = []
    for order, (file, obj) in enumerate(raw_pods):
        status = obj.get("status") or {}
        if isinstance(status, Mapping) and status.get("phase") in TERMINAL_PHASES:
            continue
        try:
            obj = _with_priority(obj, snap.priority_classes, snap.preemption_policies)
            pod = parse_pod(obj)
        except ObjectError as err:
            problems.append(LoadProblem(file, _describe(obj), err.field, err.message))
            continue
        if pod.node_name:
            pod.raw = None
            snap.bound_pods.append(pod)
        else:
            created = pod.creation_timestamp if pod.creation_timestamp is not None else float("inf")
            pending.append((created, order, pod))
    pending.sort(key=lambda t: (t[0], t[1]))
    snap.pending_pods = [p for _, _, p in pending]
    if own and problems:
        raise SnapshotError(problems)
    return snap


def _with_priority(obj: Mapping, classes: dict[str, int], policies: dict[str, str] | None = None) -> Mapping:
    """Resolve ``priorityClassName`` as the Priority admission plugin would, when ``spec.priority``
    is unset: the class's value, and its ``preemptionPolicy`` unless the pod sets one."""
    spec = obj.get("spec") or {}
    if not isinstance(spec, Mapping) or spec.get("priority") is not None:
        return obj
    name = spec.get("priorityClassName") or ""
    if name in classes:
        resolved = {**spec, "priority": classes[name]}
        policy = (policies or {}).get(name)
        if policy and not spec.get("preemptionPolicy"):
            resolved["preemptionPolicy"] = policy
        return {**obj, "spec": resolved}
    if name == "system-node-critical":
        return {**obj, "spec": {**spec, "priority": 2000001000}}
    if name == "system-cluster-critical":
        return {**obj, "spec": {**spec, "priority": 2000000000}}
    if name:
        raise ObjectError("spec.priorityClassName", f"no PriorityClass named {name!r} in the snapshot")
    return obj


def _check_claim_namespaces(snap: ClusterSnapshot, claims: list[tuple[str, Mapping]], problems: list[LoadProblem]) -> None:
    """A claim must live in a namespace the snapshot has (when it lists namespaces at all)."""
    if not snap.namespaces:
        return
    for file, claim in claims:
        meta = claim.get("metadata")
        namespace = (meta.get("namespace") if isinstance(meta, Mapping) else None) or "default"
        if namespace not in snap.namespaces:
            problems.append(LoadProblem(file, _describe(claim), "metadata.namespace", f"namespace {namespace!r} does not exist"))
