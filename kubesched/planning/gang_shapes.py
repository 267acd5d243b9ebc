"""The pod groups ``capacity`` counts: a PodGroup and the pods one group of it holds.

A file is a gang shape when it holds a ``scheduling.k8s.io/v1alpha2`` PodGroup. Its
other objects are the group's pods: a Pod, or a Job, Deployment, StatefulSet, ... whose
pod template is used (``templates.py``), each standing for as many pods as its workload
makes (a Job's ``parallelism``, the others' ``replicas``). One object with no count
stands for ``minCount`` pods (a basic group: one), so that "a PodGroup plus a Pod" is a
gang of ``minCount`` copies of the Pod. Workloads in the file are skipped: the scheduler
reads none.

The pods are made members as a controller makes them: their namespace is the group's
(a pod can only join a group of its own namespace) and ``spec.schedulingGroup`` names the
group; a template that names another group is refused, as is a gang whose pods are
fewer than its ``minCount`` (it could never be scheduled).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cluster.snapshot import WORKLOAD_API_VERSION
from ..objects.errors import ObjectError
from ..objects.podgroup import PodGroup, parse_pod_group
from .inputs import PlanningError
from .templates import TEMPLATE_KINDS, PodTemplate, template_of

__all__ = ["GangMember", "GangShape", "gang_shape", "is_gang_file"]

# Where each kind says how many pods it makes.
COUNT_AT: dict[str, tuple[str, ...]] = {
    "Job": ("spec", "parallelism"),
    "CronJob": ("spec", "jobTemplate", "spec", "parallelism"),
    "Deployment": ("spec", "replicas"),
    "ReplicaSet": ("spec", "replicas"),
    "StatefulSet": ("spec", "replicas"),
    "ReplicationController": ("spec", "replicas"),
}


@dataclass(frozen=True, slots=True)
class GangMember:
    """Pods of one template in each group."""

    template: PodTemplate
    count: int


@dataclass(frozen=True, slots=True)
class GangShape:
    """One group to count copies of: the PodGroup and its pods."""

    group: PodGroup
    source: str
    members: tuple[GangMember, ...]

    @property
    def size(self) -> int:
        return sum(m.count for m in self.members)

    @property
    def title(self) -> str:
        return f"PodGroup {self.group.key}"


def _is_pod_group(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "PodGroup" and obj.get("apiVersion", WORKLOAD_API_VERSION) == WORKLOAD_API_VERSION


def is_gang_file(objects: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a file's objects describe a pod group (it holds a v1alpha2 PodGroup)."""
    return any(_is_pod_group(obj) for obj in objects)


def _at(obj: Mapping[str, Any], path: tuple[str, ...]) -> object:
    value: object = obj
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name", "<unnamed>")) if isinstance(meta, Mapping) else "<unnamed>"


def _count(obj: Mapping[str, Any], where: str) -> int | None:
    path = COUNT_AT.get(str(obj.get("kind")))
    if path is None:
        return None
    value = _at(obj, path)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise PlanningError([f"{where}: {'.'.join(path)} must be a whole number of pods, 1 or more, got {value!r}"])
    return value


def _member_of(obj: Mapping[str, Any], group: PodGroup, where: str) -> dict[str, Any]:
    """``obj`` with its pods in ``group``: the group's namespace, ``spec.schedulingGroup`` naming it."""
    joined: dict[str, Any] = copy.deepcopy(dict(obj))
    meta = joined.setdefault("metadata", {})
    if isinstance(meta, dict):
        namespace = meta.get("namespace")
        if namespace and namespace != group.namespace:
            raise PlanningError([f"{where}: namespace {namespace!r} is not the PodGroup's ({group.namespace!r}): "
                                 "a pod can only belong to a group of its own namespace"])
        meta["namespace"] = group.namespace
    kind = str(joined.get("kind"))
    location = ("spec",) if kind == "Pod" else (*TEMPLATE_KINDS[kind], "spec") if kind in TEMPLATE_KINDS else None
    spec = _at(joined, location) if location is not None else None
    if isinstance(spec, dict):
        named = spec.get("schedulingGroup")
        current = named.get("podGroupName") if isinstance(named, Mapping) else None
        if current and current != group.name:
            raise PlanningError([f"{where}: {'.'.join(location or ())}.schedulingGroup.podGroupName {current!r} is not "
                                 f"the PodGroup of this file ({group.name!r})"])
        spec["schedulingGroup"] = {"podGroupName": group.name}
    return joined


def gang_shape(objects: Sequence[Mapping[str, Any]], path: str) -> GangShape:
    """The shape a gang file describes; ``PlanningError`` naming the file and object otherwise."""
    groups = [obj for obj in objects if _is_pod_group(obj)]
    if len(groups) != 1:
        raise PlanningError([f"{path}: a pod-group shape is one PodGroup and its pods; found {len(groups)} PodGroups"])
    raw = groups[0]
    where = f"{path}: PodGroup {_name(raw)}"
    try:
        group = parse_pod_group(raw, keep_raw=True)
    except ObjectError as err:
        raise PlanningError([f"{where}: {err}"]) from None
    pods = [obj for obj in objects if not _is_pod_group(obj) and obj.get("kind") != "Workload"]
    if not pods:
        raise PlanningError([f"{where}: give its pods too: a Pod, or a Job, Deployment, StatefulSet, ... whose pod "
                             "template the group's pods are made from"])
    members: list[tuple[PodTemplate, int | None]] = []
    problems: list[str] = []
    for obj in pods:
        obj_where = f"{path}: {obj.get('kind', 'object')} {_name(obj)}"
        try:
            members.append((template_of(_member_of(obj, group, obj_where), path), _count(obj, obj_where)))
        except PlanningError as err:
            problems.extend(err.lines)
    if problems:
        raise PlanningError(problems)
    alone = (group.min_count or 1) if len(members) == 1 else 1  # one object with no count: a whole group of it
    shape = GangShape(group, path, tuple(GangMember(t, n if n is not None else alone) for t, n in members))
    if group.min_count is not None and shape.size < group.min_count:
        raise PlanningError([f"{where}: its pods ({shape.size}) are fewer than minCount {group.min_count}: "
                             "no group of this shape could ever be scheduled"])
    return shape
