"""Reading a cluster snapshot: what ``kubectl get nodes,pods,priorityclasses -A -o yaml`` writes.

A snapshot is a file (YAML, possibly multi-document, or JSON) or a directory of
such files. Each document is an object or a ``List`` of objects. Every bad object
is reported (file, object, field), not just the first, and nothing is half-loaded.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from collections.abc import Iterable, Iterator, Mapping

from ..objects.errors import ObjectError
from ..objects.node import Node, parse_node
from ..objects.pod import PodInfo, parse_pod
from ..objects.podgroup import PodGroup, Workload, parse_pod_group, parse_workload
from ..objects.podgroup_validation import pod_group_problems, workload_problems
from ..objects.storage import validate_storage_object
from .dump_reader import STDIN, STDIN_NAME, DumpObject, ReadProblem, read_dump
from .dump_reader import describe as _describe
from .dra_validation import DRA_KINDS, admin_access_problems, validate_dra_object
from .dump_validation import object_problems

__all__ = ["ClusterSnapshot", "SnapshotBuilder", "SnapshotError", "LoadProblem", "ObjectEdits", "STDIN", "STDIN_NAME",
           "gc_paused", "load_snapshot", "snapshot_files", "snapshot_from_objects"]

USED_KINDS = ("Node", "Pod", "PriorityClass", "Namespace")
# Workload objects: PodTopologySpread's system defaults read their selectors.
SELECTOR_KINDS = ("Service", "ReplicaSet", "ReplicationController", "StatefulSet")
# Kinds that may sit in a dump beside the others and that scheduling does not read; any
# other kind is skipped too (counted by kind in ``ClusterSnapshot.ignored``).
IGNORED_KINDS = ("Deployment", "DaemonSet", "Job", "CronJob", "ConfigMap", "Event", "Endpoints", "EndpointSlice")
TERMINAL_PHASES = ("Succeeded", "Failed")
# The kind whose presence among the plugins' kinds says DynamicResources is modelled.
RESOURCE_CLAIM_KIND = "ResourceClaim"
# Workload-aware scheduling's kinds (GenericWorkload). Other groups use the same kind names
# (scheduler-plugins' PodGroup, which Coscheduling reads; Kueue's Workload): only this
# apiVersion is read into ``pod_groups``/``scheduling_workloads``, the others are left to the
# plugins that ask for them, or ignored. An object without apiVersion is this API's unless
# a plugin reads its kind.
WORKLOAD_API_VERSION = "scheduling.k8s.io/v1alpha2"
WORKLOAD_KINDS = ("PodGroup", "Workload")


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
    workloads: list[dict[str, Any]] = field(default_factory=list)  # Services, ReplicaSets, ... as raw objects
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # kind -> raw objects plugins read (PodGroups, ...)
    ignored: dict[str, int] = field(default_factory=dict)  # kind -> count of objects not read
    finished_pods: int = 0  # pods in phase Succeeded/Failed: skipped, as the scheduler's informer skips them
    # Bound pods whose node is not in the snapshot: kept (as upstream's cache keeps them), per node name.
    pods_on_missing_nodes: dict[str, int] = field(default_factory=dict)
    warnings: list[LoadProblem] = field(default_factory=list)  # loaded, but worth a look (a node with no resources)
    # Pending pods that need a feature kubesched does not model, by feature: not queued.
    unmodelled: dict[str, list[str]] = field(default_factory=dict)
    # scheduling.k8s.io/v1alpha2 PodGroups and Workloads (workload-aware scheduling), in
    # snapshot order, as the API server would store them (``disruptionMode`` defaulted).
    pod_groups: list[PodGroup] = field(default_factory=list)
    scheduling_workloads: list[Workload] = field(default_factory=list)

class ObjectEdits(Protocol):
    """Edits made to a snapshot's objects as they are read (``cluster.what_if``): each object
    read goes through ``feed``, which gives back the objects to compile in its place (none,
    itself, an edited copy); ``rest`` gives the ones held back or added, after the last."""

    def feed(self, file: str, found: DumpObject) -> Iterable[tuple[str, DumpObject]]: ...
    def rest(self) -> Iterable[tuple[str, DumpObject]]: ...


def snapshot_files(path: Path) -> list[Path]:
    """The files a snapshot path names: itself, or a directory's YAML and JSON files in name order."""
    return _files(path)


def _files(path: Path) -> list[Path]:
    if str(path) == STDIN:
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    return [path]


def load_snapshot(path: str | Path, plugin_kinds: frozenset[str] = frozenset(),
                  keep_raw_objects: bool = False, edits: ObjectEdits | None = None) -> ClusterSnapshot:
    """Read and compile a snapshot; raises ``SnapshotError`` listing every bad object.

    ``path``: a file, a directory, or ``-`` for standard input.
    ``plugin_kinds``: kinds that plugins read (``PluginSpec.object_kinds``), kept raw.
    ``keep_raw_objects``: keep the documents of nodes and bound pods (a ``needs_raw``
    plugin reads them; HTTP extenders are sent nodes'); otherwise bound pods are kept compact.
    ``edits``: what-if edits applied to the objects as they are read.

    Objects are compiled as they are read and their documents let go (a large dump is
    mostly bound pods, kept compact), with the cyclic garbage collector paused: the
    loader builds millions of objects and no cycles, and each collection would walk
    all of them.
    """
    root = Path(path)
    if str(root) != STDIN and not root.exists():
        raise SnapshotError([LoadProblem(str(root), "", "", "no such file or directory")])
    files = _files(root)
    if not files:
        raise SnapshotError([LoadProblem(str(root), "", "", "holds no .yaml, .yml or .json file")])
    builder = SnapshotBuilder(plugin_kinds, keep_raw_objects)
    with gc_paused():
        for file in files:
            name = STDIN_NAME if str(file) == STDIN else str(file)
            read: list[ReadProblem] = []
            for found in read_dump(file, read):
                if edits is None:
                    builder.add(name, found.obj, found.document, found.item)
                else:
                    for where, edited in edits.feed(name, found):
                        builder.add(where, edited.obj, edited.document, edited.item)
            builder.problems.extend(LoadProblem(name, r.obj, r.field, r.message) for r in read)
        if edits is not None:
            for where, edited in edits.rest():
                builder.add(where, edited.obj, edited.document, edited.item)
        if not builder.objects and not builder.problems:
            raise SnapshotError([LoadProblem(STDIN_NAME if str(root) == STDIN else str(root), "", "",
                                             "holds no Kubernetes objects")])
        snapshot = builder.finish()
    if builder.problems:
        raise SnapshotError(builder.problems)
    return snapshot


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside the block (as it was, after)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def snapshot_from_objects(objects: list[tuple[str, Mapping[str, Any]]], problems: list[LoadProblem] | None = None,
                          plugin_kinds: frozenset[str] = frozenset(), keep_raw_objects: bool = False) -> ClusterSnapshot:
    """Compile ``(file, object)`` pairs; problems are appended to ``problems`` (raised if None)."""
    builder = SnapshotBuilder(plugin_kinds, keep_raw_objects, check_duplicates=False)
    for file, obj in objects:
        builder.add(file, obj)
    snap = builder.finish()
    if problems is not None:
        problems.extend(builder.problems)
    elif builder.problems:
        raise SnapshotError(builder.problems)
    return snap


class SnapshotBuilder:
    """Compiles objects one at a time into a ``ClusterSnapshot``.

    Nodes and pods whose priority is known are compiled at once; a pod that names a
    PriorityClass without ``spec.priority`` (a dump written before admission, or by
    hand) waits for the end, when every class has been read. ``problems`` collects what
    is wrong, every object checked.
    """

    def __init__(self, plugin_kinds: frozenset[str] = frozenset(), keep_raw_objects: bool = False,
                 check_duplicates: bool = True) -> None:
        self.snap = ClusterSnapshot()
        self.problems: list[LoadProblem] = []
        self.objects = 0
        self._plugin_kinds = plugin_kinds
        self._keep_raw_objects = keep_raw_objects
        self._resource_claims_modelled = RESOURCE_CLAIM_KIND in plugin_kinds
        self._node_names: set[str] = set()
        self._claims: list[tuple[str, Mapping[str, Any]]] = []
        self._dra_files: dict[int, str] = {}  # id of a kept DRA object -> its file (for admission problems)
        self._waiting_pods: list[tuple[int, str, Mapping[str, Any]]] = []  # (order, file, pod) to compile at the end
        self._pending: list[tuple[float, int, PodInfo]] = []
        self._pods = 0  # pods seen: the order of pending pods with the same creation time
        # kind -> namespace -> name -> where it was first: (file index, document, item + 1) in one int
        self._seen: dict[str, dict[object, dict[str, int]]] | None = {} if check_duplicates else None
        self._files: dict[str, int] = {}

    def add(self, file: str, obj: Mapping[str, Any], document: int = 0, item: int | None = None) -> None:
        self.objects += 1
        kind = obj.get("kind")
        if self._seen is not None and self._duplicate(file, obj, document, item):
            return
        invalid = object_problems(str(kind), obj)
        if invalid:
            self.problems.extend(LoadProblem(file, _describe(obj), path, message) for path, message in invalid)
            return
        try:
            if kind == "Pod":
                self._pod(file, obj)
            elif kind == "Node":
                self._node(file, obj)
            else:
                self._other(file, str(kind), obj)
        except ObjectError as err:
            self.problems.append(LoadProblem(file, _describe(obj), err.field, err.message))

    def _duplicate(self, file: str, obj: Mapping[str, Any], document: int, item: int | None) -> bool:
        """Whether ``obj`` was seen before (reported, naming both places); else remember it.

        Kept lean, since a dump holds a million of them: by kind, then namespace, a name
        maps to where it was first seen, packed in one int."""
        assert self._seen is not None
        meta = obj.get("metadata")
        if type(meta) is not dict and not isinstance(meta, Mapping):
            return False
        name = meta.get("name")
        if type(name) is not str:
            return False
        kind = str(obj.get("kind"))
        seen_as = kind if kind not in WORKLOAD_KINDS else f"{kind} {obj.get('apiVersion')}"  # same kind, other groups
        by_namespace = self._seen.get(seen_as)
        if by_namespace is None:
            by_namespace = self._seen[seen_as] = {}
        namespace = meta.get("namespace") or ""
        by_name = by_namespace.get(namespace)
        if by_name is None:
            by_name = by_namespace[namespace] = {}
        first = by_name.get(name)
        file_index = self._files.get(file)
        if file_index is None:
            file_index = self._files[file] = len(self._files)
        if first is None:
            by_name[name] = (file_index << 48) | (document << 24) | (0 if item is None else item + 1)
            return False
        first_file = next(f for f, i in self._files.items() if i == first >> 48)
        first_document, first_item = (first >> 24) & 0xFFFFFF, (first & 0xFFFFFF) - 1
        first_where = f"document {first_document}" + (f", items[{first_item}]" if first_item >= 0 else "")
        where = f"document {document}" + (f", items[{item}]" if item is not None else "")
        self.problems.append(LoadProblem(file, f"{_describe(obj)} ({where})", "",
                                         f"duplicate: the same {kind} is at {first_file} ({first_where})"))
        return True

    def _node(self, file: str, obj: Mapping[str, Any]) -> None:
        node = parse_node(obj, keep_raw=self._keep_raw_objects)
        if node.name in self._node_names:
            self.problems.append(LoadProblem(file, _describe(obj), "metadata.name", "duplicate node"))
            return
        self._node_names.add(node.name)
        self.snap.nodes.append(node)
        status = obj.get("status")
        if not isinstance(status, Mapping) or not (status.get("allocatable") or status.get("capacity")):
            self.snap.warnings.append(LoadProblem(file, _describe(obj), "status",
                                                  "has neither allocatable nor capacity: no pod fits it"))

    def _pod(self, file: str, obj: Mapping[str, Any]) -> None:
        order = self._pods
        self._pods += 1
        status = obj.get("status") or {}
        if isinstance(status, Mapping) and status.get("phase") in TERMINAL_PHASES:
            self.snap.finished_pods += 1
            return
        spec = obj.get("spec")
        priority = spec.get("priority") if isinstance(spec, Mapping) else None
        if type(priority) is int:  # as admission left it: nothing to resolve
            self._compile_pod(file, obj, order, resolved=True)
        else:  # its PriorityClass (or the global default) may come later in the dump
            self._waiting_pods.append((order, file, obj))

    def _compile_pod(self, file: str, obj: Mapping[str, Any], order: int, resolved: bool = False) -> None:
        try:
            if not resolved:
                obj = _with_priority(obj, self.snap.priority_classes, self.snap.preemption_policies)
            spec = obj.get("spec")
            if isinstance(spec, Mapping) and spec.get("nodeName"):
                self.snap.bound_pods.append(parse_pod(obj, keep_raw=self._keep_raw_objects))
            else:
                pod = parse_pod(obj)
                if not self._resource_claims_modelled and _has_resource_claims(obj):
                    self.snap.unmodelled.setdefault("DynamicResources", []).append(pod.key)
                else:
                    created = pod.creation_timestamp if pod.creation_timestamp is not None else float("inf")
                    self._pending.append((created, order, pod))
        except ObjectError as err:
            self.problems.append(LoadProblem(file, _describe(obj), err.field, err.message))

    def _workload_api(self, kind: str, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` is workload-aware scheduling's PodGroup or Workload (not another group's)."""
        if kind not in WORKLOAD_KINDS:
            return False
        api_version = obj.get("apiVersion")
        return api_version == WORKLOAD_API_VERSION or (api_version is None and kind not in self._plugin_kinds)

    def _workload_object(self, file: str, kind: str, obj: Mapping[str, Any]) -> None:
        """Every problem the API server would refuse the object for, or the parsed record."""
        problems = pod_group_problems(obj) if kind == "PodGroup" else workload_problems(obj)
        if problems:
            self.problems.extend(LoadProblem(file, _describe(obj), path, message) for path, message in problems)
        elif kind == "PodGroup":
            self.snap.pod_groups.append(parse_pod_group(obj, keep_raw=True))
        else:
            self.snap.scheduling_workloads.append(parse_workload(obj, keep_raw=True))

    def _other(self, file: str, kind: str, obj: Mapping[str, Any]) -> None:
        snap = self.snap
        if self._workload_api(kind, obj):
            self._workload_object(file, kind, obj)
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
        elif kind in self._plugin_kinds:
            validate_storage_object(kind, obj)  # PVs, claims, ...: one clear line for a bad one
            if kind in DRA_KINDS:
                validate_dra_object(kind, obj)
            kept = dict(obj)
            snap.objects.setdefault(kind, []).append(kept)
            if kind in DRA_KINDS:
                self._dra_files[id(kept)] = file
            if kind == "PersistentVolumeClaim":
                self._claims.append((file, obj))
        else:  # Deployments, Secrets, custom resources, ...: counted, not read
            snap.ignored[kind] = snap.ignored.get(kind, 0) + 1

    def finish(self) -> ClusterSnapshot:
        """The snapshot: waiting pods compiled, pending pods in queue order, the report filled."""
        snap = self.snap
        for order, file, obj in self._waiting_pods:
            self._compile_pod(file, obj, order)
        self._waiting_pods = []
        _check_claim_namespaces(snap, self._claims, self.problems)
        for obj, path, message in admin_access_problems(snap.objects, snap.namespaces):
            self.problems.append(LoadProblem(self._dra_files.get(id(obj), ""), _describe(obj), path, message))
        missing = snap.pods_on_missing_nodes
        nodes = self._node_names
        for pod in snap.bound_pods:
            if pod.node_name not in nodes:
                missing[pod.node_name] = missing.get(pod.node_name, 0) + 1
        self._pending.sort(key=lambda t: (t[0], t[1]))
        snap.pending_pods = [p for _, _, p in self._pending]
        self._seen = None
        return snap


def _has_resource_claims(obj: Mapping[str, Any]) -> bool:
    spec = obj.get("spec")
    return isinstance(spec, Mapping) and bool(spec.get("resourceClaims"))


def _with_priority(obj: Mapping[str, Any], classes: dict[str, int], policies: dict[str, str] | None = None) -> Mapping[str, Any]:
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


def _check_claim_namespaces(snap: ClusterSnapshot, claims: list[tuple[str, Mapping[str, Any]]], problems: list[LoadProblem]) -> None:
    """A claim must live in a namespace the snapshot has (when it lists namespaces at all)."""
    if not snap.namespaces:
        return
    for file, claim in claims:
        meta = claim.get("metadata")
        namespace = (meta.get("namespace") if isinstance(meta, Mapping) else None) or "default"
        if namespace not in snap.namespaces:
            problems.append(LoadProblem(file, _describe(claim), "metadata.namespace", f"namespace {namespace!r} does not exist"))
