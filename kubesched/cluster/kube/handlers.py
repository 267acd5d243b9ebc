"""Informer event handlers: what the API server says, turned into the scheduler's own events.

Upstream's ``pkg/scheduler/eventhandlers.go`` splits pods into assigned ones (the
cache) and unassigned ones of our profiles (the queue); ``Scheduler.on_pod_*`` already
makes that split, so these adapters only unwrap tombstones, keep one bad object from
stopping the stream, wake the scheduling loop after every change, and time each change
into ``scheduler_event_handling_duration_seconds`` under upstream's event label
(``AssignedPodAdd``, ``UnschedulablePodUpdate``, ``NodeDelete``, ``<Kind>Add``...).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from ...cache.object_store import ObjectStore
from ...framework.handle import JSONObject
from ...objects.node import Node
from ...objects.pod import PodInfo
from ...objects.podgroup import PodGroup
from ...scheduler.metrics import SchedulerMetrics
from ...scheduler.scheduler import Scheduler
from .informer import DeletedFinalStateUnknown

__all__ = ["NamespaceInfo", "PodEvents", "NodeEvents", "NamespaceEvents", "ObjectEvents", "PodGroupEvents",
           "parse_namespace"]

log = logging.getLogger("kubesched.informers")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    """What the scheduler reads from a Namespace: its labels (namespaceSelector of pod affinity)."""

    name: str
    labels: dict[str, str]


def parse_namespace(raw: dict[str, object]) -> NamespaceInfo:
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        raise ValueError("namespace without metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("namespace without metadata.name")
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        raise ValueError("metadata.labels must be a map")
    return NamespaceInfo(name, {str(k): str(v) for k, v in labels.items()})


def _unwrap(obj: T | DeletedFinalStateUnknown[T]) -> T:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class _Guarded(Generic[T]):
    """Runs one handler call; a failure is logged with the object's name and the stream goes on."""

    def __init__(self, wake: Callable[[], None], kind: str, metrics: SchedulerMetrics | None = None) -> None:
        self._wake = wake
        self._kind = kind
        self._metrics = metrics
        self._labels = {"add": f"{kind}Add", "update": f"{kind}Update", "delete": f"{kind}Delete"}

    def _name(self, obj: T) -> str:
        return str(obj)

    def _run(self, label: str, what: str, subject: T, call: Callable[..., None], *args: object) -> None:
        """``call(*args)`` for a change of ``subject``, timed under ``label``; the name of the
        subject is only worked out when the call fails."""
        metrics = self._metrics
        started = time.perf_counter() if metrics is not None else 0.0
        try:
            call(*args)
        except Exception:  # one object must never stop scheduling the others
            log.exception("handling %s of %s %s failed", what, self._kind, self._name(subject))
        if metrics is not None:
            metrics.event_handling(label, time.perf_counter() - started)
        self._wake()


class PodEvents(_Guarded[PodInfo]):
    def __init__(self, scheduler: Scheduler, wake: Callable[[], None]) -> None:
        super().__init__(wake, "Pod", scheduler.metrics)
        self._scheduler = scheduler

    def _name(self, obj: PodInfo) -> str:
        return obj.key

    def on_add(self, obj: PodInfo, is_in_initial_list: bool) -> None:
        self._run("AssignedPodAdd" if obj.node_name else "UnschedulablePodAdd", "add", obj,
                  self._scheduler.on_pod_add, obj)

    def on_update(self, old: PodInfo, new: PodInfo) -> None:
        # A pending pod becoming bound is upstream's AssignedPodAdd (addAssignedPodToCache).
        if old.node_name:
            label = "AssignedPodUpdate"
        else:
            label = "AssignedPodAdd" if new.node_name else "UnschedulablePodUpdate"
        self._run(label, "update", new, self._scheduler.on_pod_update, old, new)

    def on_delete(self, obj: PodInfo | DeletedFinalStateUnknown[PodInfo]) -> None:
        pod = _unwrap(obj)
        self._run("AssignedPodDelete" if pod.node_name else "UnschedulablePodDelete", "delete", pod,
                  self._scheduler.on_pod_delete, pod)


class NodeEvents(_Guarded[Node]):
    def __init__(self, scheduler: Scheduler, wake: Callable[[], None]) -> None:
        super().__init__(wake, "Node", scheduler.metrics)
        self._scheduler = scheduler

    def _name(self, obj: Node) -> str:
        return obj.name

    def on_add(self, obj: Node, is_in_initial_list: bool) -> None:
        self._run(self._labels["add"], "add", obj, self._scheduler.on_node_add, obj)

    def on_update(self, old: Node, new: Node) -> None:
        self._run(self._labels["update"], "update", new, self._scheduler.on_node_update, old, new)

    def on_delete(self, obj: Node | DeletedFinalStateUnknown[Node]) -> None:
        node = _unwrap(obj)
        self._run(self._labels["delete"], "delete", node, self._scheduler.on_node_delete, node)


class NamespaceEvents(_Guarded[NamespaceInfo]):
    def __init__(self, scheduler: Scheduler, wake: Callable[[], None]) -> None:
        super().__init__(wake, "Namespace", scheduler.metrics)
        self._scheduler = scheduler

    def _name(self, obj: NamespaceInfo) -> str:
        return obj.name

    def on_add(self, obj: NamespaceInfo, is_in_initial_list: bool) -> None:
        self._run(self._labels["add"], "add", obj, self._scheduler.on_namespace, obj.name, obj.labels)

    def on_update(self, old: NamespaceInfo, new: NamespaceInfo) -> None:
        if old.labels != new.labels:
            self._run(self._labels["update"], "update", new, self._scheduler.on_namespace, new.name, new.labels)

    def on_delete(self, obj: NamespaceInfo | DeletedFinalStateUnknown[NamespaceInfo]) -> None:
        ns = _unwrap(obj)
        self._run(self._labels["delete"], "delete", ns, self._scheduler.on_namespace, ns.name, None)


class PodGroupEvents(_Guarded[PodGroup]):
    """scheduling.k8s.io/v1alpha2 PodGroups (GenericWorkload) into the scheduler's directory,
    each change the ``PodGroup`` cluster event (``PodGroupAdd``, ...) for the queueing hints."""

    def __init__(self, scheduler: Scheduler, wake: Callable[[], None], metrics: SchedulerMetrics | None = None) -> None:
        super().__init__(wake, "PodGroup", metrics)
        self._scheduler = scheduler

    def _name(self, obj: PodGroup) -> str:
        return obj.key

    def on_add(self, obj: PodGroup, is_in_initial_list: bool) -> None:
        self._run(self._labels["add"], "add", obj, self._scheduler.on_pod_group_add, obj)

    def on_update(self, old: PodGroup, new: PodGroup) -> None:
        self._run(self._labels["update"], "update", new, self._scheduler.on_pod_group_update, old, new)

    def on_delete(self, obj: PodGroup | DeletedFinalStateUnknown[PodGroup]) -> None:
        group = _unwrap(obj)
        self._run(self._labels["delete"], "delete", group, self._scheduler.on_pod_group_delete, group)


class ObjectEvents(_Guarded[JSONObject]):
    """Objects the scheduler does not model (Services, ReplicaSets, PodGroups, ...) into their
    store, whose changes raise the cluster events the plugins registered for."""

    def __init__(self, store: ObjectStore, wake: Callable[[], None], metrics: SchedulerMetrics | None = None) -> None:
        super().__init__(wake, store.kind, metrics)
        self._store = store

    def _name(self, obj: JSONObject) -> str:
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}".lstrip("/")
        return "?"

    def on_add(self, obj: JSONObject, is_in_initial_list: bool) -> None:
        self._run(self._labels["add"], "add", obj, self._store.upsert, obj)

    def on_update(self, old: JSONObject, new: JSONObject) -> None:
        self._run(self._labels["update"], "update", new, self._store.upsert, new)

    def on_delete(self, obj: JSONObject | DeletedFinalStateUnknown[JSONObject]) -> None:
        raw = _unwrap(obj)
        self._run(self._labels["delete"], "delete", raw, self._store.delete, raw)
