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
from ...scheduler.metrics import SchedulerMetrics
from ...scheduler.scheduler import Scheduler
from .informer import DeletedFinalStateUnknown

__all__ = ["NamespaceInfo", "PodEvents", "NodeEvents", "NamespaceEvents", "ObjectEvents", "parse_namespace"]

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


_ACTIONS = {"add": "Add", "update": "Update", "delete": "Delete"}


class _Guarded(Generic[T]):
    """Runs one handler call; a failure is logged with the object's name and the stream goes on."""

    def __init__(self, wake: Callable[[], None], kind: str, metrics: SchedulerMetrics | None = None) -> None:
        self._wake = wake
        self._kind = kind
        self._metrics = metrics

    def _run(self, what: str, name: str, call: Callable[[], None], resource: str = "", label: str = "") -> None:
        started = time.perf_counter() if self._metrics is not None else 0.0
        try:
            call()
        except Exception:  # one object must never stop scheduling the others
            log.exception("handling %s of %s %s failed", what, self._kind, name)
        if self._metrics is not None:
            self._metrics.event_handling(label or (resource or self._kind) + _ACTIONS[what],
                                         time.perf_counter() - started)
        self._wake()


def _pod_resource(pod: PodInfo) -> str:
    return "AssignedPod" if pod.node_name else "UnschedulablePod"


class PodEvents(_Guarded[PodInfo]):
    def __init__(self, scheduler: Scheduler, wake: Callable[[], None]) -> None:
        super().__init__(wake, "Pod", scheduler.metrics)
        self._scheduler = scheduler

    def on_add(self, obj: PodInfo, is_in_initial_list: bool) -> None:
        self._run("add", obj.key, lambda: self._scheduler.on_pod_add(obj), _pod_resource(obj))

    def on_update(self, old: PodInfo, new: PodInfo) -> None:
        # A pending pod becoming bound is upstream's AssignedPodAdd (addAssignedPodToCache).
        label = "AssignedPodAdd" if new.node_name and not old.node_name else ""
        self._run("update", new.key, lambda: self._scheduler.on_pod_update(old, new), _pod_resource(old), label)

    def on_delete(self, obj: PodInfo | DeletedFinalStateUnknown[PodInfo]) -> None:
        pod = _unwrap(obj)
        self._run("delete", pod.key, lambda: self._scheduler.on_pod_delete(pod), _pod_resource(pod))


class NodeEvents(_Guarded[Node]):
    def __init__(self, scheduler: Scheduler, wake: Callable[[], None]) -> None:
        super().__init__(wake, "Node", scheduler.metrics)
        self._scheduler = scheduler

    def on_add(self, obj: Node, is_in_initial_list: bool) -> None:
        self._run("add", obj.name, lambda: self._scheduler.on_node_add(obj))

    def on_update(self, old: Node, new: Node) -> None:
        self._run("update", new.name, lambda: self._scheduler.on_node_update(old, new))

    def on_delete(self, obj: Node | DeletedFinalStateUnknown[Node]) -> None:
        node = _unwrap(obj)
        self._run("delete", node.name, lambda: self._scheduler.on_node_delete(node))


class NamespaceEvents(_Guarded[NamespaceInfo]):
    def __init__(self, scheduler: Scheduler, wake: Callable[[], None]) -> None:
        super().__init__(wake, "Namespace", scheduler.metrics)
        self._scheduler = scheduler

    def on_add(self, obj: NamespaceInfo, is_in_initial_list: bool) -> None:
        self._run("add", obj.name, lambda: self._scheduler.on_namespace(obj.name, obj.labels))

    def on_update(self, old: NamespaceInfo, new: NamespaceInfo) -> None:
        if old.labels != new.labels:
            self._run("update", new.name, lambda: self._scheduler.on_namespace(new.name, new.labels))

    def on_delete(self, obj: NamespaceInfo | DeletedFinalStateUnknown[NamespaceInfo]) -> None:
        ns = _unwrap(obj)
        self._run("delete", ns.name, lambda: self._scheduler.on_namespace(ns.name, None))


class ObjectEvents(_Guarded[JSONObject]):
    """Objects the scheduler does not model (Services, ReplicaSets, PodGroups, ...) into their
    store, whose changes raise the cluster events the plugins registered for."""

    def __init__(self, store: ObjectStore, wake: Callable[[], None], metrics: SchedulerMetrics | None = None) -> None:
        super().__init__(wake, store.kind, metrics)
        self._store = store

    @staticmethod
    def _name(obj: JSONObject) -> str:
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}".lstrip("/")
        return "?"

    def on_add(self, obj: JSONObject, is_in_initial_list: bool) -> None:
        self._run("add", self._name(obj), lambda: self._store.upsert(obj))

    def on_update(self, old: JSONObject, new: JSONObject) -> None:
        self._run("update", self._name(new), lambda: self._store.upsert(new))

    def on_delete(self, obj: JSONObject | DeletedFinalStateUnknown[JSONObject]) -> None:
        raw = _unwrap(obj)
        self._run("delete", self._name(raw), lambda: self._store.delete(raw))
