"""Small builders for the unit tests: nodes and pods as raw Kubernetes dicts, parsed
the way the scheduler parses them, and a cluster (cache, handle, clock) to run
plugins and frameworks against.

Everything goes through the public parsing entry points (``parse_node`` /
``parse_pod``), so a test exercises the same code a snapshot would.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable, Mapping

import numpy as np

from kubesched.cache.cache import Cache
from kubesched.clock import VirtualClock
from kubesched.framework import Handle, PluginSpec
from kubesched.framework.registry import Registry
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.cycle_state import CycleState
from kubesched.scheduler.handle import HandleHub
from kubesched.framework.profile import build_framework
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Status
from kubesched.objects.node import Node, parse_node
from kubesched.objects.nodeinfo import NodeInfo
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

_uids = itertools.count(1)


# -- raw objects ------------------------------------------------------------------
def node(
    name: str,
    *,
    cpu: str | int | None = "4",
    memory: str | int | None = "32Gi",
    pods: int | None = 110,
    ephemeral: str | None = None,
    extended: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, Any]] | None = None,
    unschedulable: bool = False,
    images: Iterable[tuple[list[str], int]] | None = None,
    zone: str | None = None,
) -> dict:
    """A v1.Node with the given allocatable; ``None`` leaves a resource out."""
    alloc: dict[str, Any] = {}
    for key, val in (("cpu", cpu), ("memory", memory), ("pods", pods), ("ephemeral-storage", ephemeral)):
        if val is not None:
            alloc[key] = str(val)
    for key, val in (extended or {}).items():
        alloc[key] = str(val)
    meta_labels = dict(labels or {})
    meta_labels.setdefault("kubernetes.io/hostname", name)
    if zone is not None:
        meta_labels["topology.kubernetes.io/zone"] = zone
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"allocatable": alloc, "capacity": dict(alloc)}
    if images:
        status["images"] = [{"names": list(names), "sizeBytes": size} for names, size in images]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": meta_labels}, "spec": spec, "status": status}


def container(
    name: str = "c",
    *,
    cpu: str | None = None,
    memory: str | None = None,
    requests: Mapping[str, Any] | None = None,
    image: str = "registry.k8s.io/pause:3.9",
    ports: Iterable[Mapping[str, Any]] | None = None,
    restart_policy: str | None = None,
) -> dict:
    """A container; ``requests`` (or the cpu/memory shorthands) become resources.requests."""
    req = dict(requests or {})
    if cpu is not None:
        req["cpu"] = cpu
    if memory is not None:
        req["memory"] = memory
    out: dict[str, Any] = {"name": name, "image": image}
    if req:
        out["resources"] = {"requests": req}
    if ports:
        out["ports"] = [dict(p) for p in ports]
    if restart_policy is not None:
        out["restartPolicy"] = restart_policy
    return out


def pod(
    name: str,
    *,
    namespace: str = "default",
    cpu: str | None = None,
    memory: str | None = None,
    requests: Mapping[str, Any] | None = None,
    containers: list[dict] | None = None,
    init_containers: list[dict] | None = None,
    overhead: Mapping[str, Any] | None = None,
    pod_requests: Mapping[str, Any] | None = None,
    node_name: str | None = None,
    labels: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    tolerations: Iterable[Mapping[str, Any]] | None = None,
    host_ports: Iterable[Mapping[str, Any] | int] | None = None,
    priority: int | None = None,
    gates: Iterable[str] | None = None,
    scheduler_name: str | None = None,
    image: str | None = None,
    uid: str | None = None,
    created: str | None = None,
) -> dict:
    """A v1.Pod. Without ``containers`` it has one container with the given requests."""
    if containers is None:
        ports = [{"containerPort": p, "hostPort": p} if isinstance(p, int) else dict(p) for p in host_ports or ()]
        containers = [container(cpu=cpu, memory=memory, requests=requests, ports=ports, image=image or "registry.k8s.io/pause:3.9")]
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}-{next(_uids)}"}
    if labels:
        meta["labels"] = dict(labels)
    if created:
        meta["creationTimestamp"] = created
    spec: dict[str, Any] = {"containers": containers}
    if init_containers:
        spec["initContainers"] = init_containers
    if overhead:
        spec["overhead"] = dict(overhead)
    if pod_requests:
        spec["resources"] = {"requests": dict(pod_requests)}
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = dict(affinity)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if priority is not None:
        spec["priority"] = priority
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def make_node(name: str, **kwargs: Any) -> Node:
    return parse_node(node(name, **kwargs))


def make_pod(name: str, **kwargs: Any) -> PodInfo:
    return parse_pod(pod(name, **kwargs))


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict:
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str = "", value: str = "", effect: str = "", operator: str | None = None) -> dict:
    out: dict[str, Any] = {}
    if key:
        out["key"] = key
    if operator:
        out["operator"] = operator
    if value:
        out["value"] = value
    if effect:
        out["effect"] = effect
    return out


def required_node_affinity(*terms: Mapping[str, Any]) -> dict:
    """``spec.affinity`` with required node selector terms."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [dict(t) for t in terms]}}}


def preferred_node_affinity(*weighted: tuple[int, Mapping[str, Any]]) -> dict:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": dict(term)} for w, term in weighted
            ]
        }
    }


def expr(key: str, operator: str, *values: str) -> dict:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


# -- a cluster --------------------------------------------------------------------
class Cluster:
    """A cache with nodes and bound pods, its handle and a virtual clock."""

    def __init__(self, nodes: Iterable[dict | Node] = (), pods: Iterable[dict | PodInfo] = ()) -> None:
        self.clock = VirtualClock()
        self.cache = Cache()
        self.handle = HandleHub(self.cache, self.clock, None).handle("default-scheduler")
        for n in nodes:
            self.add_node(n)
        for p in pods:
            self.add_pod(p)

    def add_node(self, raw: dict | Node) -> Node:
        n = raw if isinstance(raw, Node) else parse_node(raw)
        self.cache.add_node(n)
        return n

    def add_pod(self, raw: dict | PodInfo) -> PodInfo:
        p = raw if isinstance(raw, PodInfo) else parse_pod(raw)
        assert p.node_name, "bound pods need spec.nodeName"
        self.cache.add_pod(p)
        return p

    @property
    def snapshot(self):
        return self.cache.snapshot()

    def info(self, name: str) -> NodeInfo:
        found = self.cache.nodes.get(name)
        assert found is not None, name
        return found

    def names(self) -> list[str]:
        """Node names in snapshot order."""
        return self.cache.node_names()

    def rows(self, names: Iterable[str] | None = None) -> np.ndarray:
        """Table rows of ``names`` (all nodes in snapshot order by default)."""
        table = self.cache.table
        if names is None:
            return np.asarray(table.order, dtype=np.int64)
        rows = table.name_rows()
        return np.asarray([rows[n] for n in names], dtype=np.int64)


# -- running plugins ---------------------------------------------------------------
def batch_filter(plugin: Any, state: CycleState, pod_info: PodInfo, cluster: Cluster) -> dict[str, Status | None]:
    """The batch filter's verdict per node name (None: passes)."""
    verdicts = plugin.filter_nodes(state, pod_info, cluster.snapshot, cluster.snapshot.table.alive[: cluster.snapshot.table.size])
    rows = cluster.cache.table.name_rows()
    out: dict[str, Status | None] = {}
    for name in cluster.names():
        code = int(verdicts.codes[rows[name]])
        out[name] = verdicts.statuses[code - 1] if code else None
    return out


def node_filter(plugin: Any, state: CycleState, pod_info: PodInfo, cluster: Cluster) -> dict[str, Status | None]:
    """The per-node filter's verdict per node name (None: passes)."""
    out: dict[str, Status | None] = {}
    for name in cluster.names():
        status = plugin.filter(state, pod_info, cluster.info(name))
        out[name] = None if status is None or status.is_success() else status
    return out


def run_pre_filter(plugin: Any, state: CycleState, pod_info: PodInfo, cluster: Cluster):
    if hasattr(plugin, "pre_filter"):
        return plugin.pre_filter(state, pod_info, cluster.snapshot)
    return None, None


def filter_all(plugin: Any, pod_info: PodInfo, cluster: Cluster) -> dict[str, Status | None]:
    """PreFilter (if any) then the plugin's preferred filter form, per node name.

    When the plugin has both forms, asserts they agree.
    """
    state = CycleState()
    run_pre_filter(plugin, state, pod_info, cluster)
    results = []
    if hasattr(plugin, "filter_nodes"):
        results.append(batch_filter(plugin, state, pod_info, cluster))
    if hasattr(plugin, "filter"):
        results.append(node_filter(plugin, state, pod_info, cluster))
    assert results, f"{plugin.name} has no filter"
    if len(results) == 2:
        assert summarise(results[0]) == summarise(results[1]), "batch and per-node filters disagree"
    return results[0]


def summarise(statuses: Mapping[str, Status | None]) -> dict[str, tuple | None]:
    """Status per node as comparable ``(code label, reasons)`` tuples."""
    return {n: (s.code.label, s.reasons) if s is not None else None for n, s in statuses.items()}


def scores(plugin: Any, pod_info: PodInfo, cluster: Cluster, names: Iterable[str] | None = None,
           normalize: bool = True, pre_score: bool = True) -> dict[str, int]:
    """PreScore (if any), then the raw scores (both forms when both exist), then NormalizeScore."""
    names = list(names) if names is not None else cluster.names()
    rows = cluster.rows(names)
    state = CycleState()
    if pre_score and hasattr(plugin, "pre_score"):
        status = plugin.pre_score(state, pod_info, cluster.snapshot, rows)
        assert status is None or status.is_success(), status
    raw = []
    if hasattr(plugin, "score_nodes"):
        raw.append(np.asarray(plugin.score_nodes(state, pod_info, cluster.snapshot, rows), dtype=np.int64))
    if hasattr(plugin, "score"):
        raw.append(np.asarray([plugin.score(state, pod_info, cluster.info(n)) for n in names], dtype=np.int64))
    if len(raw) == 2:
        assert raw[0].tolist() == raw[1].tolist(), "batch and per-node scores disagree"
    values = raw[0]
    if normalize and hasattr(plugin, "normalize_score"):
        out = plugin.normalize_score(state, pod_info, values.copy())
        if out is not None:
            values = np.asarray(out, dtype=np.int64)
    return dict(zip(names, (int(v) for v in values)))


# -- frameworks ---------------------------------------------------------------------
def config(profile: Mapping[str, Any] | None = None, **top: Any) -> dict:
    """A KubeSchedulerConfiguration document with one profile."""
    doc: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, **top}
    if profile is not None:
        doc["profiles"] = [dict(profile)]
    return doc


def parse(doc: Mapping[str, Any]):
    return parse_config(doc, in_tree_registry(), UPSTREAM_ONLY)


def framework(cluster: Cluster, profile: Mapping[str, Any] | None = None, registry=None) -> Framework:
    """A Framework for one profile (the default profile when ``profile`` is None)."""
    registry = registry or in_tree_registry()
    cfg = parse_config(config(profile or {}), registry, UPSTREAM_ONLY)
    return build_framework(cfg.profiles[0], registry, cluster.handle)


def only(*plugins: str, **points: list[str]) -> dict:
    """A profile whose multiPoint holds exactly ``plugins`` (plus QueueSort and the binder)."""
    enabled = [{"name": p} for p in ("PrioritySort", *plugins, "DefaultBinder")]
    return {"plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}}


class PlacedPodDocuments:
    """Filter that notes the document of every pod placed on the nodes it is asked about."""

    name = "PlacedPodDocuments"

    def __init__(self) -> None:
        self.seen: dict[str, Mapping[str, object] | None] = {}

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        for placed in node.pods.values():
            self.seen[placed.key] = placed.raw
        return None


def placed_pod_documents_registry(needs_raw: bool, made: list[PlacedPodDocuments]) -> Registry:
    """The in-tree registry plus ``PlacedPodDocuments`` (declaring ``needs_raw`` as given);
    each instance the framework makes is appended to ``made``."""
    def new(args: None, handle: Handle) -> PlacedPodDocuments:
        made.append(PlacedPodDocuments())
        return made[-1]

    registry = in_tree_registry()
    registry.register(PluginSpec("PlacedPodDocuments", new, needs_raw=needs_raw))
    return registry
