"""Random clusters for contract tests: nodes, pods already placed, pending pods to try.

Each cluster is built with the scheduler's own parts: nodes and pods are raw Kubernetes
objects parsed by ``parse_node`` / ``parse_pod``, placed in the real cache (so the node
table, its row reuse and the pod observers are the scheduler's), and plugins get the
scheduler's ``Handle`` over that cache. Clusters are deterministic: ``random_clusters(n,
seed)`` builds the same ``n`` clusters every time, and cluster ``i`` alone is
``random_cluster(seed, i)``, so a failure names what reproduces it.

What varies: node count (1..``max_nodes``), allocatable (cpu, memory, pods, an extended
resource), labels (zones, disk, tier, a numeric label, and yours), taints of every
effect, ``spec.unschedulable``, images; pods placed with requests, host ports, labels
and anti-affinity; nodes removed (freed rows) and re-added (reused rows); pending pods
with requests, host ports, tolerations, node selectors, required and preferred node
affinity, pod (anti-)affinity, topology spread constraints, ``nodeName``, and labels.
Pass ``node_labels`` / ``pod_labels`` with the keys and values your plugin reads, so
that it meets both nodes it accepts and nodes it rejects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from ..cache.cache import Cache
from ..clock import VirtualClock
from ..framework.handle import Handle
from ..framework.views import RowArray, SnapshotView
from ..objects.node import Node, parse_node
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo, parse_pod
from ..scheduler.handle import HandleHub

__all__ = [
    "DEFAULT_NAMESPACES",
    "DEFAULT_NODE_LABELS",
    "DEFAULT_POD_LABELS",
    "EXTENDED_RESOURCE",
    "RandomCluster",
    "random_cluster",
    "random_clusters",
]

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
EXTENDED_RESOURCE = "example.com/gpu"

DEFAULT_NODE_LABELS: Mapping[str, Sequence[str]] = {
    ZONE: ("zone-a", "zone-b", "zone-c"),
    "disk": ("ssd", "hdd"),
    "tier": ("fast", "slow"),
    "cores": ("2", "8", "32", "many"),
}
"""Labels random nodes carry, each with probability 0.6 (``kubernetes.io/hostname`` always)."""

DEFAULT_POD_LABELS: Mapping[str, Sequence[str]] = {
    "app": ("web", "db", "cache"),
    "tier": ("fast", "slow"),
}
"""Labels random pods carry, each with probability 0.5."""

_TAINTS: tuple[dict[str, str], ...] = (
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
    {"key": "spot", "value": "", "effect": "PreferNoSchedule"},
    {"key": "slow", "value": "yes", "effect": "PreferNoSchedule"},
)
_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"operator": "Exists"},
    {"key": "dedicated", "operator": "Exists"},
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
    {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"},
    {"key": "slow", "value": "no"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
_IMAGES = ("registry.k8s.io/pause:3.10", "nginx:1.27", "postgres:16")
DEFAULT_NAMESPACES: tuple[str, ...] = ("default", "team-a")
"""The namespaces random pods are put in unless ``random_clusters(namespaces=...)`` says otherwise."""

JSON = dict[str, object]


@dataclass(eq=False)
class RandomCluster:
    """A cache holding random nodes and placed pods, the scheduler's handle over it, and
    pending pods to try plugins with. ``index`` and ``seed`` rebuild it:
    ``random_cluster(seed, index)``."""

    seed: int
    index: int
    cache: Cache
    hub: HandleHub
    handle: Handle
    clock: VirtualClock
    pods: list[PodInfo] = field(default_factory=list)

    @property
    def snapshot(self) -> SnapshotView:
        """The cluster as a scheduling cycle reads it."""
        return self.handle.snapshot()

    def rows(self) -> RowArray:
        """Live table rows in snapshot order."""
        return np.asarray(self.cache.table.order, dtype=np.int64)

    def node_info(self, row: int) -> NodeInfo:
        info = self.cache.by_row[row]
        if info is None:
            raise LookupError(f"row {row} is free")
        return info

    def node_names(self) -> list[str]:
        return self.cache.node_names()

    def rng(self, purpose: str) -> random.Random:
        """A random source of this cluster's own, e.g. to pick subsets of rows reproducibly."""
        return random.Random(f"{self.seed}/{self.index}/{purpose}")

    def describe(self) -> str:
        return f"random cluster {self.index} of seed {self.seed} (random_cluster({self.seed}, {self.index}))"

    def __repr__(self) -> str:
        return f"RandomCluster(seed={self.seed}, index={self.index}, nodes={len(self.cache.nodes)}, pods={len(self.pods)})"


def random_clusters(
    count: int = 30,
    seed: int = 0,
    *,
    max_nodes: int = 12,
    pending_pods: int = 6,
    node_labels: Mapping[str, Sequence[str]] | None = None,
    pod_labels: Mapping[str, Sequence[str]] | None = None,
    setup: Callable[[RandomCluster, random.Random], None] | None = None,
    namespaces: Sequence[str] | None = None,
    node_shapes: Sequence[Mapping[str, str]] | None = None,
    node_annotations: Mapping[str, Sequence[str]] | None = None,
    pod_annotations: Mapping[str, Sequence[str]] | None = None,
) -> list[RandomCluster]:
    """``count`` random clusters (see the module docstring for what varies).

    ``node_labels`` / ``pod_labels`` add label keys and the values to draw from (a key
    also in the defaults replaces them). ``namespaces``: the namespaces pods are put in
    (``DEFAULT_NAMESPACES`` otherwise), each labelled ``kubernetes.io/metadata.name`` and
    ``team`` (the name without a ``team-`` prefix). ``node_shapes``: the ``allocatable``
    maps nodes draw from (``{"cpu": "8", "memory": "32Gi", "pods": "110",
    "nvidia.com/gpu": "4"}``; random cpu, memory, pods and ``EXTENDED_RESOURCE``
    otherwise). ``node_annotations`` / ``pod_annotations``: annotation keys and values
    to draw from (each with the labels' probability; none otherwise).
    ``setup(cluster, rng)`` runs last, before any plugin is built on the cluster: add
    objects to ``cluster.hub.object_stores``, more pods, anything your plugin reads.
    """
    return [
        random_cluster(seed, i, max_nodes=max_nodes, pending_pods=pending_pods, node_labels=node_labels,
                       pod_labels=pod_labels, setup=setup, namespaces=namespaces, node_shapes=node_shapes,
                       node_annotations=node_annotations, pod_annotations=pod_annotations)
        for i in range(count)
    ]


def random_cluster(
    seed: int,
    index: int,
    *,
    max_nodes: int = 12,
    pending_pods: int = 6,
    node_labels: Mapping[str, Sequence[str]] | None = None,
    pod_labels: Mapping[str, Sequence[str]] | None = None,
    setup: Callable[[RandomCluster, random.Random], None] | None = None,
    namespaces: Sequence[str] | None = None,
    node_shapes: Sequence[Mapping[str, str]] | None = None,
    node_annotations: Mapping[str, Sequence[str]] | None = None,
    pod_annotations: Mapping[str, Sequence[str]] | None = None,
) -> RandomCluster:
    """Cluster ``index`` of ``random_clusters(..., seed=seed)`` (the same options)."""
    rng = random.Random(f"{seed}/{index}")
    n_labels = {**DEFAULT_NODE_LABELS, **(node_labels or {})}
    p_labels = {**DEFAULT_POD_LABELS, **(pod_labels or {})}
    shape = _Shape(tuple(namespaces or DEFAULT_NAMESPACES), tuple(node_shapes or ()), node_annotations or {},
                   pod_annotations or {})
    if not shape.namespaces:
        raise ValueError("namespaces: give at least one")
    clock = VirtualClock()
    cache = Cache()
    hub = HandleHub(cache, clock, None)
    handle: Handle = hub.handle("default-scheduler")
    for ns in shape.namespaces:
        cache.set_namespace(ns, {"kubernetes.io/metadata.name": ns, "team": ns.removeprefix("team-")})
    raw_nodes = [_node(rng, f"node-{i}", n_labels, shape) for i in range(rng.randint(1, max_nodes))]
    nodes = [parse_node(raw) for raw in raw_nodes]
    for node in nodes:
        cache.add_node(node)
    for j in range(rng.randint(0, 2 * len(nodes))):
        target = rng.choice(nodes).name
        cache.add_pod(parse_pod(_pod(rng, f"placed-{j}", p_labels, n_labels, shape, bound_to=target), keep_raw=False))
    _churn(rng, cache, nodes)
    cluster = RandomCluster(seed, index, cache, hub, handle, clock)
    names = [node.name for node in nodes]
    cluster.pods = [parse_pod(_pod(rng, f"pending-{k}", p_labels, n_labels, shape, node_names=names))
                    for k in range(pending_pods)]
    if setup is not None:
        setup(cluster, rng)
    return cluster


def _churn(rng: random.Random, cache: Cache, nodes: list[Node]) -> None:
    """Remove a few nodes (their rows are freed) and maybe add them back, without their
    pods (rows are reused, in another order)."""
    if len(nodes) < 2 or rng.random() < 0.5:
        return
    gone = rng.sample(nodes, rng.randint(1, max(1, len(nodes) // 3)))
    for node in gone:
        cache.remove_node(node.name)
    if rng.random() < 0.6:
        for node in reversed(gone):
            cache.add_node(node)


def _pick(rng: random.Random, labels: Mapping[str, Sequence[str]], p: float) -> dict[str, str]:
    return {key: rng.choice(list(values)) for key, values in labels.items() if values and rng.random() < p}


@dataclass(frozen=True)
class _Shape:
    """The author's choices of ``random_clusters`` beyond labels."""

    namespaces: tuple[str, ...]
    node_shapes: tuple[Mapping[str, str], ...]
    node_annotations: Mapping[str, Sequence[str]]
    pod_annotations: Mapping[str, Sequence[str]]


def _node(rng: random.Random, name: str, labels: Mapping[str, Sequence[str]], shape: _Shape) -> JSON:
    allocatable: dict[str, str]
    if shape.node_shapes:
        allocatable = dict(rng.choice(shape.node_shapes))
    else:
        allocatable = {
            "cpu": rng.choice(["1", "2", "4", "8"]),
            "memory": rng.choice(["1Gi", "4Gi", "16Gi"]),
            "pods": str(rng.choice([0, 1, 3, 110])),
        }
        if rng.random() < 0.3:
            allocatable[EXTENDED_RESOURCE] = str(rng.choice([1, 2, 4]))
    spec: JSON = {}
    taints = [dict(t) for t in _TAINTS if rng.random() < 0.2]
    if taints and len({t["key"] for t in taints}) == len(taints):
        spec["taints"] = taints
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    status: JSON = {"allocatable": allocatable, "capacity": dict(allocatable)}
    if rng.random() < 0.4:
        status["images"] = [{"names": [image], "sizeBytes": rng.choice([10, 300, 900]) * 2**20}
                            for image in _IMAGES if rng.random() < 0.5]
    meta_labels = {**_pick(rng, labels, 0.6), HOSTNAME: name}
    meta: JSON = {"name": name, "labels": meta_labels}
    annotations = _pick(rng, shape.node_annotations, 0.6)
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def _pod(rng: random.Random, name: str, labels: Mapping[str, Sequence[str]], node_labels: Mapping[str, Sequence[str]],
         shape: _Shape, bound_to: str | None = None, node_names: Sequence[str] = ()) -> JSON:
    requests: dict[str, str] = {}
    for resource, choices in (("cpu", ["0", "100m", "500m", "1", "3"]), ("memory", ["128Mi", "1Gi", "8Gi"])):
        if rng.random() < 0.7:
            requests[resource] = rng.choice(choices)
    if rng.random() < 0.2:
        requests[EXTENDED_RESOURCE] = rng.choice(["1", "2"])
    container: JSON = {"name": "c", "image": rng.choice(_IMAGES)}
    if requests:
        container["resources"] = {"requests": requests}
    if rng.random() < 0.25:
        container["ports"] = [{"containerPort": port, "hostPort": port, "protocol": rng.choice(["TCP", "UDP"]),
                               "hostIP": rng.choice(["", "10.0.0.1"])} for port in rng.sample([80, 443, 8080], 1)]
    namespace = rng.choice(shape.namespaces)
    meta: JSON = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    pod_labels = _pick(rng, labels, 0.5)
    if pod_labels:
        meta["labels"] = pod_labels
    annotations = _pick(rng, shape.pod_annotations, 0.5)
    if annotations:
        meta["annotations"] = annotations
    spec: JSON = {"containers": [container]}
    if bound_to is not None:
        spec["nodeName"] = bound_to
        if rng.random() < 0.15:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                _pod_term(rng, labels)]}}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if rng.random() < 0.4:
        spec["tolerations"] = [dict(t) for t in rng.sample(_TOLERATIONS, rng.randint(1, 2))]
    if rng.random() < 0.2 and node_labels:
        key = rng.choice(sorted(node_labels))
        spec["nodeSelector"] = {key: rng.choice(list(node_labels[key]))}
    affinity: JSON = {}
    if rng.random() < 0.25 and node_labels:
        terms = [{"matchExpressions": [_node_requirement(rng, node_labels)]} for _ in range(rng.randint(1, 2))]
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    if rng.random() < 0.3 and node_labels:
        preferred = [{"weight": rng.randint(1, 100), "preference": {"matchExpressions": [_node_requirement(rng, node_labels)]}}
                     for _ in range(rng.randint(1, 2))]
        node_affinity = affinity.setdefault("nodeAffinity", {})
        if isinstance(node_affinity, dict):
            node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.15:
            affinity[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [_pod_term(rng, labels)]}
        elif rng.random() < 0.15:
            affinity[kind] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _pod_term(rng, labels)}]}
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.2:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.randint(1, 2),
            "topologyKey": rng.choice([ZONE, HOSTNAME]),
            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
            "labelSelector": {"matchLabels": {"app": rng.choice(["web", "db"])}},
        }]
    if node_names and rng.random() < 0.05:
        spec["nodeName"] = rng.choice(list(node_names))
    if rng.random() < 0.3:
        spec["priority"] = rng.choice([0, 100, 1000])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _node_requirement(rng: random.Random, node_labels: Mapping[str, Sequence[str]]) -> JSON:
    key = rng.choice(sorted(node_labels))
    values = list(node_labels[key])
    operator = rng.choice(["In", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    if operator in ("Gt", "Lt"):
        return {"key": "cores", "operator": operator, "values": [rng.choice(["1", "4", "16"])]}
    if operator in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": operator}
    return {"key": key, "operator": operator, "values": rng.sample(values, rng.randint(1, len(values)))}


def _pod_term(rng: random.Random, labels: Mapping[str, Sequence[str]]) -> JSON:
    return {
        "labelSelector": {"matchLabels": {"app": rng.choice(list(labels.get("app", ("web",))))}},
        "topologyKey": rng.choice([ZONE, HOSTNAME]),
    }
