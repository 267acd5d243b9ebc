"""Node pools found in a snapshot, and the template node a new node of a pool would be.

cluster-autoscaler asks its cloud provider which node group a node belongs to; a
snapshot has no cloud provider, so a pool here is the set of nodes sharing one value of
a pool label (``node.kubernetes.io/instance-type`` by default; a managed node group's
or Karpenter's label names real pools: ``eks.amazonaws.com/nodegroup``,
``cloud.google.com/gke-nodepool``, ``karpenter.sh/nodepool``).

A pool's template is built as cluster-autoscaler builds one from a running node
(``SanitizedTemplateNodeInfoFromNodeInfo`` in its ``simulator/node_info_utils.go``,
with the example chosen as ``MixedTemplateNodeInfoProvider`` chooses it):

* the example is the pool's first node in snapshot order that is a good candidate
  (schedulable, not marked ``ToBeDeletedByClusterAutoscaler``, not tainted not-ready or
  unreachable: the snapshot keeps no conditions, and the node lifecycle controller
  taints a node that is not ready); failing that, its first node;
* the copy gets a fresh name (``template-node-for-<pool>-<suffix>``), uid and
  ``kubernetes.io/hostname`` label;
* taints that describe the example's state rather than the pool are dropped: the
  autoscaler's own (``ToBeDeletedByClusterAutoscaler``,
  ``DeletionCandidateOfClusterAutoscaler``), node-condition taints (not-ready,
  unreachable, pressure, uninitialized, shutdown...), and those under the
  ``ignore-taint``, ``startup-taint`` and ``status-taint`` prefixes of
  ``cluster-autoscaler.kubernetes.io/``;
* ``spec.unschedulable`` is cleared (cluster-autoscaler does so with
  ``--scale-from-unschedulable``; a new node of a pool is never born cordoned);
* the pods a fresh node would run come along: the example's DaemonSet pods and mirror
  pods (not those being deleted), renamed ``<pod>-<suffix>`` with fresh uids.

Differences, on purpose: DaemonSets that run on no node of the pool are not added
(cluster-autoscaler's ``--force-ds``; a snapshot's DaemonSet objects are not read), and
the ``cluster-autoscaler.kubernetes.io/template-node`` label cluster-autoscaler puts on
its template is not: it marks the template for the autoscaler, a real new node has no
such label, and the nodes built here are also the ones a simulation checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..objects.node import Node
from ..objects.pod import PodInfo
from ..objects.taints import Taint

__all__ = [
    "DEFAULT_POOL_LABEL", "HOSTNAME_LABEL", "MIRROR_ANNOTATION", "TEMPLATE_NAME_PREFIX", "NodePool", "NodeTemplate",
    "PoolError", "discover_pools", "build_template", "build_templates", "sanitized_taints", "is_good_example",
    "is_daemon_or_mirror_pod",
]

DEFAULT_POOL_LABEL = "node.kubernetes.io/instance-type"
HOSTNAME_LABEL = "kubernetes.io/hostname"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
TEMPLATE_NAME_PREFIX = "template-node-for-"

TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
DELETION_CANDIDATE_TAINT = "DeletionCandidateOfClusterAutoscaler"
# Taints that stand for a node condition (cluster-autoscaler's NodeConditionTaints).
NODE_CONDITION_TAINTS = frozenset({
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/pid-pressure",
    "node.cloudprovider.kubernetes.io/uninitialized",
    "node.cloudprovider.kubernetes.io/shutdown",
    "cloud.google.com/impending-node-termination",
    "NodeWithImpairedVolumes",
})
# Taint key prefixes cluster-autoscaler leaves off templates (startup and status taints).
IGNORED_TAINT_PREFIXES = (
    "ignore-taint.cluster-autoscaler.kubernetes.io/",
    "startup-taint.cluster-autoscaler.kubernetes.io/",
    "status-taint.cluster-autoscaler.kubernetes.io/",
)
# A node tainted so is not ready (or not reachable): a poor example of a fresh node.
_NOT_READY_TAINTS = frozenset({"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})
_NOT_IN_NAME = re.compile(r"[^a-z0-9.-]+")  # a pool's name made a node name's part


class PoolError(ValueError):
    """A pool label that names no pool: one line for the user."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True, slots=True)
class NodePool:
    """The nodes sharing one value of the pool label."""

    name: str  # the label's value
    label: str  # the label's key
    nodes: tuple[str, ...]  # in snapshot order
    example: str  # the node its template copies
    good_example: bool  # False when every node is cordoned, being deleted or not ready

    @property
    def size(self) -> int:
        return len(self.nodes)


@dataclass(frozen=True, slots=True)
class NodeTemplate:
    """What a new node of ``pool`` would be: the sanitised example and the pods it would run.

    ``node`` is named ``template-node-for-<pool>``; ``instantiate`` makes the copies a
    scale-up adds, each with its own name, uid and hostname.
    """

    pool: str
    node: Node
    pods: tuple[PodInfo, ...]  # DaemonSet and mirror pods, bound to ``node``

    def instantiate(self, suffix: str) -> tuple[Node, list[PodInfo]]:
        """A fresh node named ``<template name>-<suffix>`` and its pods, as
        cluster-autoscaler's ``SanitizedNodeInfo`` copies a template."""
        name = f"{self.node.name}-{suffix}"
        node = _renamed_node(self.node, name, f"{name}-uid")
        pods = [_pod_on(pod, name, suffix) for pod in self.pods]
        return node, pods


def discover_pools(nodes: Sequence[Node], label: str = DEFAULT_POOL_LABEL) -> list[NodePool]:
    """The pools of ``nodes`` by ``label``, by name. Nodes without the label belong to none.

    ``label`` may name several keys, separated by commas: a pool is then the nodes sharing
    every key's value, named by the values joined with ``/`` (``m5.large/eu-west-1a`` for
    the instance type and the zone: per-zone node groups, as cluster-autoscaler's docs advise
    for zonal spreading).

    Raises ``PoolError`` when no node has the label (a misspelt key, or a cluster whose
    pools are labelled otherwise: the message lists the pool labels found).
    """
    keys = [key.strip() for key in label.split(",")]
    members: dict[str, list[Node]] = {}
    for node in nodes:
        values = [node.labels.get(key) for key in keys]
        if all(v is not None for v in values):
            members.setdefault("/".join(v for v in values if v is not None), []).append(node)
    if not members:
        found = sorted({key for node in nodes for key in node.labels if key in _KNOWN_POOL_LABELS})
        hint = f" (pool labels found: {', '.join(found)})" if found else ""
        which = "this label" if len(keys) == 1 else "all of these labels"
        raise PoolError([f"--pool-label {label}: no node has {which}{hint}"])
    pools = []
    for name in sorted(members):
        group = members[name]
        good = next((n for n in group if is_good_example(n)), None)
        example = good if good is not None else group[0]
        pools.append(NodePool(name, label, tuple(n.name for n in group), example.name, good is not None))
    return pools


_KNOWN_POOL_LABELS = frozenset({
    DEFAULT_POOL_LABEL, "beta.kubernetes.io/instance-type", "eks.amazonaws.com/nodegroup", "cloud.google.com/gke-nodepool",
    "karpenter.sh/nodepool", "kubernetes.azure.com/agentpool", "agentpool", "alpha.eksctl.io/nodegroup-name",
})


def is_good_example(node: Node) -> bool:
    """cluster-autoscaler's good template candidate, as far as a snapshot tells."""
    if node.unschedulable:
        return False
    return not any(t.key == TO_BE_DELETED_TAINT or t.key in _NOT_READY_TAINTS for t in node.taints)


def _dropped_taint(key: str) -> bool:
    return (key in (TO_BE_DELETED_TAINT, DELETION_CANDIDATE_TAINT) or key in NODE_CONDITION_TAINTS
            or key.startswith(IGNORED_TAINT_PREFIXES))


def sanitized_taints(taints: Iterable[Taint]) -> tuple[Taint, ...]:
    """The taints a new node of the pool would have (cluster-autoscaler's ``SanitizeTaints``)."""
    return tuple(t for t in taints if not _dropped_taint(t.key))


def is_daemon_or_mirror_pod(pod: PodInfo) -> bool:
    """A pod a fresh node runs too: a DaemonSet's (controller reference of kind DaemonSet) or
    a static pod's mirror."""
    if MIRROR_ANNOTATION in pod.annotations:
        return True
    return any(ref.controller and ref.kind == "DaemonSet" for ref in pod.owner_references)


def template_name(pool: str) -> str:
    """``template-node-for-<pool>``, the pool's value made a valid node name (lower case,
    other characters than letters, digits, ``.`` and ``-`` replaced by ``-``)."""
    cleaned = _NOT_IN_NAME.sub("-", pool.lower()).strip(".-") or "pool"
    return TEMPLATE_NAME_PREFIX + cleaned


def build_template(pool: NodePool, nodes: Mapping[str, Node], pods_by_node: Mapping[str, Sequence[PodInfo]],
                   taken: frozenset[str] = frozenset()) -> NodeTemplate:
    """The template of ``pool`` from its example node and the pods bound to it. ``taken``:
    node names in use; a template whose name clashes gets a number (``-2``, ``-3``...)."""
    example = nodes[pool.example]
    base = name = template_name(pool.name)
    n = 1
    while name in taken or any(t.startswith(name + "-") for t in taken if t.startswith(TEMPLATE_NAME_PREFIX)):
        n += 1
        name = f"{base}-{n}"
    sanitized = replace(_renamed_node(example, name, f"{name}-uid"), taints=sanitized_taints(example.taints),
                        unschedulable=False)
    sanitized.raw = _sanitized_raw(example.raw, sanitized) if example.raw is not None else None
    pods = tuple(_pod_on(p, name, "") for p in pods_by_node.get(example.name, ())
                 if is_daemon_or_mirror_pod(p) and not p.terminating)
    return NodeTemplate(pool.name, sanitized, pods)


def build_templates(pools: Sequence[NodePool], nodes: Sequence[Node], bound_pods: Iterable[PodInfo]) -> dict[str, NodeTemplate]:
    """Every pool's template, by pool name (one pass over the bound pods)."""
    examples = {pool.example for pool in pools}
    pods_by_node: dict[str, list[PodInfo]] = {}
    for pod in bound_pods:
        if pod.node_name in examples:
            pods_by_node.setdefault(pod.node_name, []).append(pod)
    by_name = {node.name: node for node in nodes}
    taken = frozenset(by_name)
    templates: dict[str, NodeTemplate] = {}
    for pool in pools:
        template = build_template(pool, by_name, pods_by_node, taken | {t.node.name for t in templates.values()})
        templates[pool.name] = template
    return templates


def _renamed_node(node: Node, name: str, uid: str) -> Node:
    copy = replace(node, name=name, uid=uid, labels={**node.labels, HOSTNAME_LABEL: name})
    if node.raw is not None:
        copy.raw = _sanitized_raw(node.raw, copy)
    return copy


def _sanitized_raw(raw: Mapping[str, Any], node: Node) -> dict[str, Any]:
    """The node's document as the copy's (HTTP extenders and ``needs_raw`` plugins read it)."""
    meta = dict(raw.get("metadata") or {})
    meta.update(name=node.name, uid=node.uid, labels=dict(node.labels))
    for dropped in ("resourceVersion", "creationTimestamp", "managedFields"):
        meta.pop(dropped, None)
    spec = {k: v for k, v in dict(raw.get("spec") or {}).items() if k not in ("unschedulable", "taints", "providerID")}
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [{"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect} for t in node.taints]
    return {**raw, "metadata": meta, "spec": spec}


def _pod_on(pod: PodInfo, node_name: str, suffix: str) -> PodInfo:
    """A copy of a template's pod on ``node_name``: renamed with ``suffix`` (the template's
    own copies keep their names), a fresh uid, no nomination."""
    name = f"{pod.name}-{suffix}" if suffix else pod.name
    uid = f"{pod.uid}-{node_name}"
    raw = pod.raw
    if raw is not None:
        meta = {**dict(raw.get("metadata") or {}), "name": name, "uid": uid}
        raw = {**raw, "metadata": meta, "spec": {**dict(raw.get("spec") or {}), "nodeName": node_name}}
    return pod.copy_with(name=name, uid=uid, node_name=node_name, nominated_node_name="", raw=raw)
