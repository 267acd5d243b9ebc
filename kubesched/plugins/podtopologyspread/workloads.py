"""The workload objects behind default spreading: Services, ReplicationControllers, ReplicaSets, StatefulSets.

``WorkloadIndex.default_selector(pod)`` is upstream's ``helper.DefaultSelector``: the
selectors of every Service in the pod's namespace whose selector matches the pod,
then those of the pod's controller (by owner reference) when it is a
ReplicationController (``v1``), a ReplicaSet or a StatefulSet (``apps/v1``) that exists.

The index takes raw objects: ``replace`` with a full list (the simulator's
snapshot) or ``upsert`` / ``delete`` one at a time (a live informer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...framework.handle import JSONObject
from ...objects.errors import ObjectError
from ...objects.pod import PodInfo
from ...objects.selectors import LabelSelector, Requirement, parse_label_selector
from .common import canonical_selector

__all__ = ["WORKLOAD_KINDS", "WORKLOAD_RESOURCES", "WorkloadIndex"]

WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
# (apiVersion, kind, plural) of each: the object stores the plugin reads them from.
WORKLOAD_RESOURCES = (
    ("v1", "Service", "services"),
    ("v1", "ReplicationController", "replicationcontrollers"),
    ("apps/v1", "ReplicaSet", "replicasets"),
    ("apps/v1", "StatefulSet", "statefulsets"),
)
_CONTROLLERS = {
    ("v1", "ReplicationController"): "ReplicationController",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
}
_MEMO_LIMIT = 4096
_NO_FIELDS: JSONObject = {}

ControllerSelector = dict[str, str] | LabelSelector | None
"""A controller's selector: a map for a ReplicationController, else a ``LabelSelector``
(None when it does not parse)."""
_MemoKey = tuple[str, frozenset[tuple[str, str]], tuple[str, str, str] | None]


def _object(value: object) -> JSONObject:
    """A JSON object field; absent, null or not an object reads as an empty one."""
    return value if isinstance(value, Mapping) else _NO_FIELDS


def _meta(obj: JSONObject) -> tuple[str, str]:
    meta = _object(obj.get("metadata"))
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def _str_map(raw: object) -> dict[str, str] | None:
    if raw is None or not isinstance(raw, Mapping):
        return None
    return {str(k): str(v) for k, v in raw.items()}


class WorkloadIndex:
    def __init__(self) -> None:
        self.services: dict[str, dict[str, dict[str, str]]] = {}  # ns -> name -> selector map
        self.controllers: dict[tuple[str, str, str], ControllerSelector] = {}  # (kind, ns, name) -> selector
        self.generation = 0
        self._memo: dict[_MemoKey, LabelSelector | None] = {}

    def __len__(self) -> int:
        return sum(len(v) for v in self.services.values()) + len(self.controllers)

    def __bool__(self) -> bool:
        """Whether any workload is indexed (asked twice a cycle: no count of every namespace)."""
        return bool(self.controllers) or any(self.services.values())

    # -- updates ------------------------------------------------------------
    def replace(self, objects: Iterable[JSONObject]) -> None:
        self.services.clear()
        self.controllers.clear()
        for obj in objects:
            self._upsert(obj)
        self._changed()

    def upsert(self, obj: JSONObject) -> None:
        self._upsert(obj)
        self._changed()

    def delete(self, obj: JSONObject) -> None:
        kind = obj.get("kind")
        ns, name = _meta(obj)
        if kind == "Service":
            self.services.get(ns, {}).pop(name, None)
        else:
            self.controllers.pop((str(kind), ns, name), None)
        self._changed()

    def _changed(self) -> None:
        self.generation += 1
        self._memo.clear()

    def _upsert(self, obj: JSONObject) -> None:
        kind = obj.get("kind")
        if not isinstance(kind, str) or kind not in WORKLOAD_KINDS:
            return
        ns, name = _meta(obj)
        spec = _object(obj.get("spec"))
        if kind == "Service":
            pairs = _str_map(spec.get("selector"))
            by_name = self.services.setdefault(ns, {})
            if pairs is None:
                by_name.pop(name, None)  # a nil selector matches nothing, not everything
            else:
                by_name[name] = pairs
        elif kind == "ReplicationController":
            self.controllers[(kind, ns, name)] = _str_map(spec.get("selector")) or {}
        else:
            selector: LabelSelector | None
            try:
                selector = parse_label_selector(spec.get("selector"), "spec.selector")
            except ObjectError:
                selector = None  # an invalid selector contributes nothing, as upstream's error path
            self.controllers[(kind, ns, name)] = selector

    # -- reading ------------------------------------------------------------
    def default_selector(self, pod: PodInfo) -> LabelSelector | None:
        """The pod's default spreading selector, or None when it is empty."""
        owner = next((o for o in pod.owner_references if o.controller), None)
        owner_key = (owner.api_version, owner.kind, owner.name) if owner is not None else None
        key = (pod.namespace, frozenset(pod.labels.items()), owner_key)
        if key in self._memo:
            return self._memo[key]
        found = self._compute(pod, owner_key)
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[key] = found
        return found

    def _compute(self, pod: PodInfo, owner_key: tuple[str, str, str] | None) -> LabelSelector | None:
        label_set: dict[str, str] = {}
        for selector in self.services.get(pod.namespace, {}).values():
            if all(pod.labels.get(k) == v for k, v in selector.items()):
                label_set.update(selector)
        extra: list[Requirement] = []
        if owner_key is not None:
            kind = _CONTROLLERS.get((owner_key[0], owner_key[1]))
            found = self.controllers.get((kind, pod.namespace, owner_key[2])) if kind else None
            if kind == "ReplicationController" and isinstance(found, dict):  # an RC's is always a map
                label_set.update(found)
            elif kind is not None and isinstance(found, LabelSelector) and not found.nothing:
                extra = list(found.requirements)
        reqs = [Requirement(k, "In", frozenset((v,))) for k, v in label_set.items()] + extra
        if not reqs:
            return None
        return canonical_selector(reqs)
