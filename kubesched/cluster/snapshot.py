"""Reading a cluster snapshot: what ``kubectl get nodes,pods,priorityclasses -A -o yaml`` writes.

A snapshot is a file (YAML, possibly multi-document, or JSON) or a directory of
such files. Each document is an object or a ``List`` of objects. Every bad object
is reported (file, object, field), not just the first, and nothing is half-loaded.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from ..objects.errors import ObjectError
from ..objects.node import Node, parse_node
from ..objects.pod import PodInfo, parse_pod
from ..objects.storage import validate_storage_object
from .dump_validation import object_problems
from .yaml_documents import YAMLError, yaml_documents

__all__ = ["ClusterSnapshot", "SnapshotError", "LoadProblem", "load_snapshot", "snapshot_from_objects"]

USED_KINDS = ("Node", "Pod", "PriorityClass", "Namespace")
# Workload objects: PodTopologySpread's system defaults read their selectors.
SELECTOR_KINDS = ("Service", "ReplicaSet", "ReplicationController", "StatefulSet")
# Kinds that may sit in a dump beside the others and that scheduling does not read; any
# other kind is skipped too (counted by kind in ``ClusterSnapshot.ignored``).
IGNORED_KINDS = ("Deployment", "DaemonSet", "Job", "CronJob", "ConfigMap", "Event", "Endpoints", "EndpointSlice")
TERMINAL_PHASES = ("Succeeded", "Failed")
STDIN = "-"  # a snapshot path that means standard input
STDIN_NAME = "<stdin>"  # what problems call it
# The kind whose presence among the plugins' kinds says DynamicResources is modelled.
RESOURCE_CLAIM_KIND = "ResourceClaim"


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
    finished_pods: int = 0  # pods in phase Succeeded/Failed: skipped, as the scheduler's informer skips them
    # Bound pods whose node is not in the snapshot: kept (as upstream's cache keeps them), per node name.
    pods_on_missing_nodes: dict[str, int] = field(default_factory=dict)
    warnings: list[LoadProblem] = field(default_factory=list)  # loaded, but worth a look (a node with no resources)
    # Pending pods that need a feature kubesched does not model, by feature: not queued.
    unmodelled: dict[str, list[str]] = field(default_factory=dict)

def _files(path: Path) -> list[Path]:
    if str(path) == STDIN:
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    return [path]


def _documents(path: Path, problems: list[LoadProblem]) -> Iterator[tuple[int, Any]]:
    label = STDIN_NAME if str(path) == STDIN else str(path)
    try:
        text = sys.stdin.buffer.read() if str(path) == STDIN else path.read_bytes()
    except OSError as err:
        problems.append(LoadProblem(label, "", "", err.strerror or str(err)))
        return
    if path.suffix == ".json" or text.lstrip()[:1] in (b"{", b"["):
        try:
            yield 1, orjson.loads(text)
            return
        except orjson.JSONDecodeError as err:
            if path.suffix == ".json":
                problems.append(LoadProblem(label, "", "", f"invalid JSON: {err}"))
                return
    try:
        docs = yaml_documents(text)
    except YAMLError as err:
        problems.append(LoadProblem(label, "", "", str(err)))
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


def _objects(doc: Any, file: str, index: int, problems: list[LoadProblem]) -> Iterator[tuple[str, Mapping]]:
    """``(where, object)``: where is ``document 2`` or ``document 1, items[5]``. Items of a typed
    list (``PodList``) without a kind of their own take the list's kind and apiVersion."""
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
            where = f"document {index}, items[{j}]"
            if not isinstance(item, Mapping):
                problems.append(LoadProblem(file, f"{kind} ({where})", "", "must be an object"))
                continue
            if not item.get("kind") and kind != "List":
                item = {**item, "kind": kind[: -len("List")]}
                if not item.get("apiVersion") and doc.get("apiVersion"):
                    item["apiVersion"] = doc["apiVersion"]
            if not isinstance(item.get("kind"), str) or not item.get("kind"):
                problems.append(LoadProblem(file, f"{_describe(item)} ({where})", "kind", "is required"))
                continue
            yield where, item
        return
    if not isinstance(kind, str) or not kind:
        problems.append(LoadProblem(file, f"{_describe(doc)} (document {index})", "kind", "is required"))
        return
    yield f"document {index}", doc


def _identity(obj: Mapping) -> tuple[str, str, str] | None:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        return None
    return str(obj.get("kind")), str(meta.get("namespace") or ""), meta["name"]


def load_snapshot(path: str | Path, plugin_kinds: frozenset[str] = frozenset(),
                  keep_node_raw: bool = False) -> ClusterSnapshot:
    """Read and compile a snapshot; raises ``SnapshotError`` listing every bad object.

    ``path``: a file, a directory, or ``-`` for standard input.
    ``plugin_kinds``: kinds that plugins read (``PluginSpec.object_kinds``), kept raw.
    ``keep_node_raw``: keep each node's document (HTTP extenders are sent it).
    """
    root = Path(path)
    problems: list[LoadProblem] = []
    if str(root) != STDIN and not root.exists():
        raise SnapshotError([LoadProblem(str(root), "", "", "no such file or directory")])
    objects: list[tuple[str, Mapping]] = []
    files = _files(root)
    if not files:
        raise SnapshotError([LoadProblem(str(root), "", "", "holds no .yaml, .yml or .json file")])
    seen: dict[tuple[str, str, str], tuple[str, str]] = {}  # identity -> (file, where) of its first occurrence
    for file in files:
        name = STDIN_NAME if str(file) == STDIN else str(file)
        for index, doc in _documents(file, problems):
            for where, obj in _objects(doc, name, index, problems):
                identity = _identity(obj)
                if identity is not None:
                    first = seen.get(identity)
                    if first is not None:
                        problems.append(LoadProblem(name, f"{_describe(obj)} ({where})", "",
                                                    f"duplicate: the same {identity[0]} is at {first[0]} ({first[1]})"))
                        continue
                    seen[identity] = (name, where)
                objects.append((name, obj))
    if not objects and not problems:
        raise SnapshotError([LoadProblem(STDIN_NAME if str(root) == STDIN else str(root), "", "", "holds no Kubernetes objects")])
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
    resource_claims_modelled = RESOURCE_CLAIM_KIND in plugin_kinds
    for file, obj in objects:
        kind = obj.get("kind")
        invalid = object_problems(str(kind), obj)
        if invalid:
            problems.extend(LoadProblem(file, _describe(obj), path, message) for path, message in invalid)
            continue
        try:
            if kind == "Node":
                node = parse_node(obj, keep_raw=keep_node_raw)
                if node.name in node_names:
                    problems.append(LoadProblem(file, _describe(obj), "metadata.name", "duplicate node"))
                    continue
                node_names.add(node.name)
                snap.nodes.append(node)
                status = obj.get("status")
                if not isinstance(status, Mapping) or not (status.get("allocatable") or status.get("capacity")):
                    snap.warnings.append(LoadProblem(file, _describe(obj), "status",
                                                     "has neither allocatable nor capacity: no pod fits it"))
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
            else:  # Deployments, Secrets, custom resources, ...: counted, not read
                snap.ignored[str(kind)] = snap.ignored.get(str(kind), 0) + 1
        except ObjectError as err:
            problems.append(LoadProblem(file, _describe(obj), err.field, err.message))
    _check_claim_namespaces(snap, claims, problems)
    pending: list[tuple[float, int, PodInfo]] = []
    for order, (file, obj) in enumerate(raw_pods):
        status = obj.get("status") or {}
        if isinstance(status, Mapping) and status.get("phase") in TERMINAL_PHASES:
            snap.finished_pods += 1
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
            if pod.node_name not in node_names:
                snap.pods_on_missing_nodes[pod.node_name] = snap.pods_on_missing_nodes.get(pod.node_name, 0) + 1
        elif not resource_claims_modelled and _has_resource_claims(obj):
            snap.unmodelled.setdefault("DynamicResources", []).append(pod.key)
        else:
            created = pod.creation_timestamp if pod.creation_timestamp is not None else float("inf")
            pending.append((created, order, pod))
    pending.sort(key=lambda t: (t[0], t[1]))
    snap.pending_pods = [p for _, _, p in pending]
    if own and problems:
        raise SnapshotError(problems)
    return snap


def _has_resource_claims(obj: Mapping) -> bool:
    spec = obj.get("spec")
    return isinstance(spec, Mapping) and bool(spec.get("resourceClaims"))


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
