"""Pending pods grouped as cluster-autoscaler groups them before a scale-up, and the order
its estimator packs them in.

cluster-autoscaler checks one pod of each equivalence group against a pool's template
(``core/scaleup/equivalence/groups.go``): pods of one controller with equal labels and
equal specs once the fields that do not bear on scheduling are dropped (environment
variables, projected volumes and their mounts, ``spec.hostname``); a pod without a
controller, or a DaemonSet's, is a group of its own; a controller has at most ten groups
(further pods are groups of their own). Its default estimator then packs the groups in
decreasing order of what one pod asks of the template node (``DecreasingPodOrderer``:
cpu request / allocatable cpu + memory request / allocatable memory), the pods of a
group in their order.

Groups here keep queue order (the order of the pending pods) among equal scores, where
cluster-autoscaler's order among them is that of a Go map: random.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..objects.node import Node
from ..objects.pod import PodInfo

__all__ = ["PodGroup", "equivalence_groups", "decreasing_order", "MAX_GROUPS_PER_CONTROLLER"]

MAX_GROUPS_PER_CONTROLLER = 10


@dataclass(slots=True)
class PodGroup:
    """Pods that schedule alike; ``pods[0]`` is the one checked against templates."""

    pods: list[PodInfo] = field(default_factory=list)
    index: int = 0  # position among the groups, in queue order of their first pods

    @property
    def exemplar(self) -> PodInfo:
        return self.pods[0]


def equivalence_groups(pods: Iterable[PodInfo]) -> list[PodGroup]:
    """``pods`` (in queue order) in equivalence groups, in order of each group's first pod."""
    groups: list[PodGroup] = []
    by_controller: dict[str, list[tuple[bytes, PodGroup]]] = {}
    for pod in pods:
        controller = _controller_uid(pod)
        key = _scheduling_key(pod) if controller is not None else None
        if controller is None or key is None:
            groups.append(PodGroup([pod], len(groups)))
            continue
        known = by_controller.setdefault(controller, [])
        found = next((group for k, group in known if k == key), None)
        if found is not None:
            found.pods.append(pod)
            continue
        group = PodGroup([pod], len(groups))
        groups.append(group)
        if len(known) < MAX_GROUPS_PER_CONTROLLER:
            known.append((key, group))
    return groups


def decreasing_order(groups: Sequence[PodGroup], template: Node) -> list[PodGroup]:
    """The groups by decreasing share of the template node one of their pods asks for
    (stable: queue order among equals)."""
    cpu = template.allocatable.milli_cpu
    memory = template.allocatable.memory

    def score(group: PodGroup) -> float:
        requests = group.exemplar.requests.requests
        share = 0.0
        if cpu > 0:
            share += requests.milli_cpu / cpu
        if memory > 0:
            share += requests.memory / memory
        return share

    return sorted(groups, key=score, reverse=True)


def _controller_uid(pod: PodInfo) -> str | None:
    for ref in pod.owner_references:
        if ref.controller:
            return None if ref.kind == "DaemonSet" else ref.uid or f"{ref.kind}/{pod.namespace}/{ref.name}"
    return None


def _scheduling_key(pod: PodInfo) -> bytes | None:
    """Labels and the spec less what does not bear on scheduling, as bytes to compare;
    None when the pod's document is not kept."""
    raw = pod.raw
    if raw is None:
        return None
    spec = raw.get("spec")
    if not isinstance(spec, Mapping):
        return None
    try:
        return orjson.dumps([pod.labels, _sanitized_spec(spec)], option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def _sanitized_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """cluster-autoscaler's ``sanitizePodSpec``: no env, no projected volumes or their
    mounts, no hostname; and no nodeName or nomination (both pending pods)."""
    out = {k: v for k, v in spec.items() if k not in ("hostname", "nodeName")}
    volumes = spec.get("volumes")
    projected: set[str] = set()
    if isinstance(volumes, list):
        kept = []
        for volume in volumes:
            if isinstance(volume, Mapping) and "projected" in volume:
                projected.add(str(volume.get("name")))
            else:
                kept.append(volume)
        out["volumes"] = kept
    for kind in ("containers", "initContainers"):
        containers = spec.get(kind)
        if isinstance(containers, list):
            out[kind] = [_sanitized_container(c, projected) if isinstance(c, Mapping) else c for c in containers]
    return out


def _sanitized_container(container: Mapping[str, Any], projected: set[str]) -> dict[str, Any]:
    out = {k: v for k, v in container.items() if k != "env"}
    mounts = container.get("volumeMounts")
    if isinstance(mounts, list) and projected:
        out["volumeMounts"] = [m for m in mounts if not (isinstance(m, Mapping) and m.get("name") in projected)]
    return out
