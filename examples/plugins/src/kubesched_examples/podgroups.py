"""What Coscheduling knows of the cluster: PodGroup objects, and each group's pods.

Kept incrementally, so a scheduling cycle reads counts instead of walking every pod:

* ``PodGroups``: the PodGroup objects, parsed once, fed by the object store the
  plugin asked the handle for (the snapshot's PodGroups in ``simulate``).
* ``GroupMembers``: per group, the pods the informer reported (``PodEventHandler``)
  and the pods placed on nodes, assumed or bound (``PodObserver``). A group's size is
  the union of the two, so bound members of a snapshot, which reach the cache without
  passing the pod handlers, still count.

``GroupMembers`` also keeps, per group, a fingerprint of everything placed that is
*not* the group's own (and of node changes): Coscheduling remembers a group that
failed together with that fingerprint, and does not retry it until the fingerprint
changes (see ``coscheduling``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Mapping

from kubesched.framework import JSONObject
from kubesched.objects import NodeInfo, PodInfo, Resource

__all__ = [
    "POD_GROUP_LABEL",
    "GroupKey",
    "GroupMembers",
    "PodGroup",
    "PodGroups",
    "group_key",
    "object_group_key",
    "parse_pod_group",
]

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
"""The label naming a pod's PodGroup (in the pod's namespace)."""

GroupKey = tuple[str, str]
"""(namespace, PodGroup name)."""


def group_key(pod: PodInfo) -> GroupKey | None:
    """The group a pod belongs to, by its label; None for a pod of no group."""
    name = pod.labels.get(POD_GROUP_LABEL, "")
    return (pod.namespace, name) if name else None


def full_name(key: GroupKey) -> str:
    return f"{key[0]}/{key[1]}"


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A PodGroup (``scheduling.x-k8s.io/v1alpha1``) as Coscheduling reads it."""

    namespace: str
    name: str
    min_member: int = 0
    schedule_timeout_seconds: int = 0  # 0: not set, the plugin's permitWaitingTimeSeconds applies
    min_resources: Resource | None = None
    created: float = 0.0  # metadata.creationTimestamp, epoch seconds; 0 when unset (Go's zero time sorts first)
    problem: str = ""  # why the object could not be read; its pods are rejected with it

    @property
    def key(self) -> GroupKey:
        return (self.namespace, self.name)

    @property
    def full_name(self) -> str:
        return full_name(self.key)


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _int(value: object, path: str, problems: list[str]) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"{path} must be a non-negative integer, got {value!r}")
        return 0
    return value


def _timestamp(value: object) -> float:
    if not isinstance(value, str) or not value:
        return 0.0
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def object_group_key(obj: JSONObject) -> GroupKey:
    """A PodGroup object's (namespace, name); a missing namespace is ``default``, as for pods."""
    meta = _mapping(obj.get("metadata"))
    namespace, name = meta.get("namespace"), meta.get("name")
    return (namespace if isinstance(namespace, str) and namespace else "default", name if isinstance(name, str) else "")


def parse_pod_group(obj: JSONObject) -> PodGroup:
    """Read a PodGroup object; a bad field becomes ``problem`` rather than an exception."""
    namespace, name = object_group_key(obj)
    meta = _mapping(obj.get("metadata"))
    spec = _mapping(obj.get("spec"))
    problems: list[str] = []
    min_member = _int(spec.get("minMember"), "spec.minMember", problems)
    timeout = _int(spec.get("scheduleTimeoutSeconds"), "spec.scheduleTimeoutSeconds", problems)
    min_resources: Resource | None = None
    raw_resources = spec.get("minResources")
    if raw_resources is not None:
        if not isinstance(raw_resources, Mapping):
            problems.append("spec.minResources must be a map of resource name to quantity")
        else:
            try:
                min_resources = Resource.from_list(raw_resources)
            except (ValueError, TypeError) as err:
                problems.append(f"spec.minResources: {err}")
    return PodGroup(
        namespace, name, min_member, timeout, min_resources, _timestamp(meta.get("creationTimestamp")), "; ".join(problems)
    )


class PodGroups:
    """PodGroups by (namespace, name); an ``ObjectHandler`` of the PodGroup store."""

    def __init__(self) -> None:
        self._groups: dict[GroupKey, PodGroup] = {}
        self._lock = threading.Lock()

    def get(self, key: GroupKey) -> PodGroup | None:
        return self._groups.get(key)

    def on_object_add(self, obj: JSONObject) -> None:
        group = parse_pod_group(obj)
        with self._lock:
            self._groups[group.key] = group

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self.on_object_add(new)

    def on_object_delete(self, obj: JSONObject) -> None:
        with self._lock:
            self._groups.pop(object_group_key(obj), None)


class GroupMembers:
    """Each group's pods: the ones the informer reported, and the ones placed on nodes.

    A ``PodEventHandler`` (every pod the scheduler sees, pending or bound) and a
    ``PodObserver`` (pods placed on nodes, assumed ones included) at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reported: dict[GroupKey, dict[str, PodInfo]] = {}  # uid -> latest version
        self._reported_in: dict[str, GroupKey] = {}  # uid -> group
        self._placed: dict[GroupKey, set[str]] = {}
        # Fingerprint of what is placed: XOR of every placed pod's hash, per group and in all.
        self._placed_hash = 0
        self._group_hash: dict[GroupKey, int] = {}
        self._node_changes = 0

    # -- PodEventHandler ----------------------------------------------------------
    def on_pod_add(self, pod: PodInfo) -> None:
        self._report(pod)

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None:
        self._report(new)

    def on_pod_delete(self, pod: PodInfo) -> None:
        with self._lock:
            self._forget(pod.uid)

    def _report(self, pod: PodInfo) -> None:
        key = group_key(pod)
        with self._lock:
            self._forget(pod.uid)
            if key is not None and not pod.terminating:
                self._reported.setdefault(key, {})[pod.uid] = pod
                self._reported_in[pod.uid] = key

    def _forget(self, uid: str) -> None:
        key = self._reported_in.pop(uid, None)
        if key is not None:
            pods = self._reported.get(key)
            if pods is not None:
                pods.pop(uid, None)
                if not pods:
                    del self._reported[key]

    # -- PodObserver ----------------------------------------------------------------
    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None:
        self._placement(pod, node, True)

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None:
        self._placement(pod, node, False)

    def nodes_changed(self) -> None:
        with self._lock:
            self._node_changes += 1

    def _placement(self, pod: PodInfo, node: NodeInfo, added: bool) -> None:
        key = group_key(pod)
        h = hash((pod.uid, node.name))
        with self._lock:
            self._placed_hash ^= h
            if key is None:
                return
            self._group_hash[key] = self._group_hash.get(key, 0) ^ h
            placed = self._placed.setdefault(key, set())
            if added:
                placed.add(pod.uid)
            else:
                placed.discard(pod.uid)
                if not placed:
                    del self._placed[key]
                    self._group_hash.pop(key, None)

    # -- reading ----------------------------------------------------------------------
    def count(self, key: GroupKey) -> int:
        """Pods of the group: reported by the informer or placed on a node."""
        with self._lock:
            reported = self._reported.get(key, {})
            placed = self._placed.get(key, set())
            return len(reported) + sum(1 for uid in placed if uid not in reported)

    def placed(self, key: GroupKey) -> frozenset[str]:
        """Uids of the group's pods on nodes, assumed (waiting at Permit, say) or bound."""
        with self._lock:
            return frozenset(self._placed.get(key, ()))

    def pending(self, key: GroupKey) -> list[PodInfo]:
        """The group's pods the informer reported that are on no node, in name order."""
        with self._lock:
            placed = self._placed.get(key, set())
            pods = [p for uid, p in self._reported.get(key, {}).items() if not p.node_name and uid not in placed]
        return sorted(pods, key=lambda p: p.name)

    def others_fingerprint(self, key: GroupKey) -> tuple[int, int]:
        """What is placed on nodes apart from the group's own pods, and how often nodes changed.

        It changes when another pod is placed or removed, or a node is added, updated or
        removed; never when the group's own pods come and go.
        """
        with self._lock:
            return (self._node_changes, self._placed_hash ^ self._group_hash.get(key, 0))
