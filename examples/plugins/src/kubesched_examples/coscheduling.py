"""Coscheduling: gang scheduling of PodGroups, as kubernetes-sigs/scheduler-plugins does it.

A pod joins a group with the label ``scheduling.x-k8s.io/pod-group: <name>``; the group
is a PodGroup object in the pod's namespace::

    apiVersion: scheduling.x-k8s.io/v1alpha1
    kind: PodGroup
    metadata: {name: train, namespace: ml}
    spec:
      minMember: 4                 # bind nobody until 4 members have a node
      scheduleTimeoutSeconds: 30   # how long placed members wait for the rest (optional)
      minResources: {cpu: "8"}     # the cluster must have this free for the group (optional)

The group binds all together or not at all. Each member is placed as usual, then waits
at Permit, assumed on its node, until ``minMember`` of the group have a node; then all
of them bind. If the group cannot complete, the waiting members are rejected and give
their room back. The extension points, as upstream's plugin:

* **QueueSort**: priority, then the PodGroup's creation time (a pod of no group: its
  own), then the group's full name (a pod of no group: its key), then the pod's key, so
  a group's members reach the head of the queue one after the other.
* **PreFilter** rejects a pod whose PodGroup does not exist, whose group has fewer pods
  than ``minMember`` ("cannot find enough sibling pods"), whose group is backing off
  after a failure (``podGroupBackoffSeconds``), or whose ``minResources`` the cluster
  cannot hold.
* **PostFilter**: when a member fits no node and the group is more than 10% short of
  its quorum, reject the group's waiting members (they release their nodes) and back the
  group off.
* **Permit**: wait (``scheduleTimeoutSeconds``, else ``permitWaitingTimeSeconds``) until
  ``minMember`` of the group are assumed or bound, then allow every waiting sibling. The
  first member to wait asks for its pending siblings to be activated.
* **Reserve/Unreserve**: when a member is unreserved (its wait timed out, it was
  rejected, its binding failed) its waiting siblings are rejected too, so the group
  leaves together. Idempotent.
* **EnqueueExtensions**: a pod of the group added (the group may now be complete), its
  PodGroup added or updated; and, for a group that failed, changes that may let it fit.

Where this differs from upstream, on purpose:

* A group that failed (rejected in PostFilter, or its waiting members unreserved before
  it completed) is not tried again until something it could use changes: another pod is
  placed or removed, a node changes, or its PodGroup is updated. Upstream retries it at
  once (kubernetes-sigs/scheduler-plugins#429: a group that cannot fit, fragmented over
  the nodes, is placed and rejected forever); a simulation would never settle.
* A pod whose PodGroup does not exist is rejected in PreFilter, not at Permit, so it
  never holds a node.
* A new pending member is seen by a pod handler: once its group has ``minMember`` pods,
  the members rejected for lack of siblings are activated (kubesched raises no event
  for a new pending pod).
* A pod of no group is ordered by its ``creationTimestamp`` rather than its first
  attempt: the scheduler's clock (monotonic live, virtual in ``simulate``) cannot be
  compared with a PodGroup's creation time; a pod is queued moments after its creation,
  so the order is the same. A pod without one sorts after those with one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from kubesched.framework import (
    PODS_TO_ACTIVATE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    JSONObject,
    NodeToStatusReader,
    PluginSpec,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    QueueingHint,
    SnapshotView,
    StateKey,
    Status,
)
from kubesched.objects import PodInfo, Resource

from .podgroups import (
    POD_GROUP_LABEL,
    GroupKey,
    GroupMembers,
    PodGroup,
    PodGroups,
    full_name,
    group_key,
    object_group_key,
)

__all__ = ["NAME", "API_VERSION", "KIND", "PLURAL", "POD_GROUP_LABEL", "Coscheduling", "CoschedulingArgs", "new", "spec"]

NAME = "Coscheduling"
API_VERSION = "scheduling.x-k8s.io/v1alpha1"
KIND = "PodGroup"
PLURAL = "podgroups"

WAITED: StateKey[bool] = StateKey("kubesched-examples/Coscheduling/waited")
"""Written when Permit answers Wait: Unreserve then knows the group's wait failed."""

QUORUM_GAP = 0.1
"""PostFilter leaves a group alone when it lacks at most this share of its quorum."""


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    """``pluginConfig`` args (upstream's ``CoschedulingArgs``)."""

    permit_waiting_time_seconds: int = 60
    """How long placed members wait for the rest, when the PodGroup sets no ``scheduleTimeoutSeconds``."""
    pod_group_backoff_seconds: int = 0
    """After PostFilter rejects a group, reject its pods in PreFilter for this long (0: no backoff)."""

    def validate(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if self.permit_waiting_time_seconds < 0:
            problems.append(("permitWaitingTimeSeconds", "must not be negative"))
        if self.pod_group_backoff_seconds < 0:
            problems.append(("podGroupBackoffSeconds", "must not be negative"))
        return problems


class Coscheduling:
    """QueueSort, PreFilter, PostFilter, Reserve, Permit and EnqueueExtensions for PodGroups."""

    name = NAME

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self._args = args
        self._handle = handle
        self._groups = PodGroups()
        self._members = GroupMembers()
        self._store = handle.object_store(API_VERSION, KIND, PLURAL)
        self._store.add_handler(self._groups)
        watcher = _Watcher(self)
        self._store.add_handler(watcher)
        handle.add_pod_handler(self._members)
        handle.add_pod_handler(watcher)
        handle.add_pod_observer(self._members)
        self._backoff_until: dict[GroupKey, float] = {}
        self._failed: dict[GroupKey, tuple[int, int]] = {}  # group -> others' fingerprint when it failed
        self._permitted_until: dict[GroupKey, float] = {}  # minResources checked, until then

    # -- QueueSort ------------------------------------------------------------------
    def sort_key(self, queued: QueuedPodInfo) -> tuple[int, float, str, str]:
        """The order ``less`` defines, as a key (kubesched's queue uses it when present)."""
        pod = queued.pod
        key = group_key(pod)
        group = self._groups.get(key) if key is not None else None
        if group is not None:
            return (-pod.priority, group.created, group.full_name, pod.key)
        created = pod.creation_timestamp
        return (-pod.priority, created if created is not None else math.inf, pod.key, pod.key)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.sort_key(a) < self.sort_key(b)

    # -- PreFilter ------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView
    ) -> tuple[PreFilterResult | None, Status | None]:
        key = group_key(pod)
        if key is None:
            return None, None
        reason = self._blocked(pod, key)
        group = self._groups.get(key)
        if reason is None and group is not None and group.min_resources is not None:
            reason = self._check_min_resources(group, snapshot)
        if reason is not None:
            # UnschedulableAndUnresolvable, as upstream: preemption cannot help.
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
        return None, None

    def _blocked(self, pod: PodInfo, key: GroupKey) -> str | None:
        """Why PreFilter rejects the pod now (all but the minResources check), or None."""
        group = self._groups.get(key)
        if group is None:
            return f"PodGroup {full_name(key)} not found"
        if group.problem:
            return f"PodGroup {group.full_name} is invalid: {group.problem}"
        if self._backoff_until.get(key, -math.inf) > self._handle.now():
            return f"podGroup {group.full_name} failed recently"
        if self._still_failed(key):
            return f"podGroup {group.full_name} failed and nothing it could use has changed since"
        count = self._members.count(key)
        if count < group.min_member:
            return (
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {count}, minMember of group: {group.min_member}"
            )
        return None

    def _check_min_resources(self, group: PodGroup, snapshot: SnapshotView) -> str | None:
        """Upstream's ``CheckClusterResource``: room for ``minResources`` (and ``minMember``
        pods) on the nodes, counting the room the group's own pods use as free."""
        now = self._handle.now()
        if self._permitted_until.get(group.key, -math.inf) > now:
            return None
        assert group.min_resources is not None
        want = _amounts(group.min_resources)
        if group.min_member > 0:
            want["pods"] = group.min_member
        placed = self._members.placed(group.key)
        for info in snapshot.list():
            own = [info.pods[uid] for uid in placed if uid in info.pods]
            for name in list(want):
                if name == "pods":
                    free = info.allocatable.allowed_pod_number - (len(info.pods) - len(own))
                else:
                    used = info.requested.get(name) - sum(p.requests.requests.get(name) for p in own)
                    free = info.allocatable.get(name) - used
                want[name] -= max(free, 0)
                if want[name] <= 0:
                    del want[name]
            if not want:
                break
        if want:
            return "resource gap: " + ", ".join(f"{name}: {_quantity(name, n)}" for name, n in sorted(want.items()))
        self._permitted_until[group.key] = now + self._args.permit_waiting_time_seconds
        return None

    # -- PostFilter -----------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status | None]:
        key = group_key(pod)
        group = self._groups.get(key) if key is not None else None
        if group is None:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE, "can not find pod group")
        assigned = len(self._members.placed(group.key))
        if assigned >= group.min_member:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)  # the group has its quorum: leave it be
        if (group.min_member - assigned) / group.min_member <= QUORUM_GAP:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)  # nearly there: later members may still fit
        # If one member fits nowhere, its siblings very likely will not either: give their nodes back.
        self._reject_waiting(group.key, "", "optimistic rejection in PostFilter")
        if self._members.count(group.key) >= group.min_member:
            now = self._handle.now()
            if self._args.pod_group_backoff_seconds > 0 and self._backoff_until.get(group.key, -math.inf) <= now:
                self._backoff_until[group.key] = now + self._args.pod_group_backoff_seconds
            self._mark_failed(group.key)
        self._permitted_until.pop(group.key, None)
        return PostFilterResult(), Status(
            Code.UNSCHEDULABLE,
            f"PodGroup {group.full_name} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter",
        )

    # -- Reserve / Permit -------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        key = group_key(pod)
        group = self._groups.get(key) if key is not None else None
        if group is None:
            return
        if state.get(WAITED) and len(self._members.placed(group.key) | {pod.uid}) < group.min_member:
            self._mark_failed(group.key)  # a member that waited leaves before the group completed
        self._reject_waiting(group.key, pod.uid, "rejection in Unreserve")
        self._permitted_until.pop(group.key, None)

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        key = group_key(pod)
        if key is None:
            return None, 0.0
        group = self._groups.get(key)
        if group is None:
            return Status(Code.UNSCHEDULABLE, "PodGroup not found"), 0.0
        placed = self._members.placed(key)  # assumed pods count, this one included
        if len(placed | {pod.uid}) >= group.min_member:
            for waiting in self._handle.iterate_over_waiting_pods():
                if group_key(waiting.pod) == key:
                    waiting.allow(self.name)
            return None, 0.0
        if not placed - {pod.uid}:
            # The first member to wait brings its pending siblings back from the
            # unschedulable and backoff queues (once, not at every member:
            # kubernetes-sigs/scheduler-plugins#682).
            to_activate = state.get(PODS_TO_ACTIVATE)
            if to_activate is not None:
                for sibling in self._members.pending(key):
                    if sibling.uid != pod.uid:
                        to_activate[sibling.uid] = sibling
        state.write(WAITED, True)
        timeout = group.schedule_timeout_seconds or self._args.permit_waiting_time_seconds
        return Status(Code.WAIT), float(timeout)

    # -- EnqueueExtensions ------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # A member added: the group may now have its pods, or its quorum (upstream's Pod/Add).
            # kubesched announces bound pods only; _Watcher sees the pending ones.
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), self._hint_sibling_added),
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), self._hint_sibling_added),
            # The PodGroup created, or its spec changed.
            ClusterEventWithHint(
                ClusterEvent(self._store.resource, ActionType.ADD | ActionType.UPDATE), self._hint_pod_group_changed
            ),
            # Room freed or added: a group that failed may fit now.
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), self._hint_room_freed),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
                ),
                self._hint_room_added,
            ),
        ]

    def _hint_sibling_added(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        if isinstance(new, PodInfo) and new.uid != pod.uid and group_key(new) == group_key(pod):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_pod_group_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        if isinstance(new, Mapping) and object_group_key(new) == group_key(pod):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_room_freed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        key = group_key(pod)
        if key is None or not isinstance(old, PodInfo) or group_key(old) == key:
            return QueueingHint.SKIP  # the group's own pods leaving is no news
        return QueueingHint.QUEUE if self._blocked(pod, key) is None else QueueingHint.SKIP

    def _hint_room_added(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        key = group_key(pod)
        if key is None:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE if self._blocked(pod, key) is None else QueueingHint.SKIP

    # -- helpers ------------------------------------------------------------------------
    def _reject_waiting(self, key: GroupKey, skip_uid: str, message: str) -> None:
        for waiting in self._handle.iterate_over_waiting_pods():
            if waiting.pod.uid != skip_uid and group_key(waiting.pod) == key:
                waiting.reject(self.name, message)

    def _mark_failed(self, key: GroupKey) -> None:
        self._failed[key] = self._members.others_fingerprint(key)

    def _still_failed(self, key: GroupKey) -> bool:
        """Whether the group failed and nothing placed around it, nor any node, changed since."""
        mark = self._failed.get(key)
        if mark is None:
            return False
        if mark == self._members.others_fingerprint(key):
            return True
        self._failed.pop(key, None)
        return False

    def forget_failure(self, key: GroupKey) -> None:
        """Let a group that failed be tried again (its PodGroup changed)."""
        self._failed.pop(key, None)
        self._permitted_until.pop(key, None)

    def pod_joined(self, pod: PodInfo) -> None:
        """A pending pod was added: if it completes its group's count, activate its siblings."""
        key = group_key(pod)
        group = self._groups.get(key) if key is not None else None
        if key is not None and group is not None and self._members.count(key) == group.min_member:
            self._handle.activate(p for p in self._members.pending(key) if p.uid != pod.uid)


class _Watcher:
    """Pod and PodGroup changes the queue hears nothing of, or hears too late.

    kubesched raises no cluster event when a pending pod is added: once a new pod
    completes its group's count, the members rejected for lack of siblings are
    activated here. A PodGroup update forgets the group's last failure (before the
    update's cluster event asks the hints).
    """

    def __init__(self, plugin: Coscheduling) -> None:
        self._plugin = plugin

    def on_pod_add(self, pod: PodInfo) -> None:
        if not pod.node_name:
            self._plugin.pod_joined(pod)

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None:
        if old is None or old.labels.get(POD_GROUP_LABEL) != new.labels.get(POD_GROUP_LABEL):
            self.on_pod_add(new)

    def on_pod_delete(self, pod: PodInfo) -> None:
        return None

    def on_object_add(self, obj: JSONObject) -> None:
        return None

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self._plugin.forget_failure(object_group_key(new))

    def on_object_delete(self, obj: JSONObject) -> None:
        self._plugin.forget_failure(object_group_key(obj))


def _amounts(resource: Resource) -> dict[str, int]:
    """A ``Resource``'s non-zero amounts by resource name (cpu in millicores)."""
    out = {"cpu": resource.milli_cpu, "memory": resource.memory, "ephemeral-storage": resource.ephemeral_storage}
    out.update(resource.scalar)
    return {name: amount for name, amount in out.items() if amount > 0}


def _quantity(name: str, amount: int) -> str:
    return f"{amount}m" if name == "cpu" else str(amount)


def new(args: CoschedulingArgs, handle: Handle) -> Coscheduling:
    return Coscheduling(args, handle)


spec: PluginSpec[CoschedulingArgs] = PluginSpec(
    NAME, new, args_type=CoschedulingArgs, object_kinds=((API_VERSION, KIND),)
)
"""The entry point (``kubesched.plugins`` group, name ``coscheduling``)."""
