"""Pod groups as the framework and its plugins see them (workload-aware scheduling, KEP-4671).

Upstream splits these between ``k8s.io/kube-scheduler/framework`` (``PodGroupInfo``,
``PodGroupState``, ``PodGroupStateLister``, ``PodGroupManager``, ``PodGroupLister``,
``PodGroupCycleState``) and ``pkg/scheduler/framework`` (the concrete ``PodGroupInfo`` and
``QueuedPodGroupInfo``). Here they are one module: records the scheduler builds for a
pod-group cycle, and read-only views of what the cache knows of each group, which
plugins reach through ``Handle.pod_group_manager``:

* ``pod_group_states().get(namespace, name)``: the group's pods, unscheduled, assumed
  or bound. kubesched's snapshot is a view of the cache and a pod-group cycle assumes
  its pods in the cache (reverting those it does not bind), so this one lister is both
  upstream's cache lister (PreEnqueue, queueing hints, a pod-by-pod Permit) and its
  snapshot lister (``SnapshotSharedLister().PodGroupStates()``, read inside a group cycle);
* ``pod_group(namespace, name)``: the ``PodGroup`` object itself (upstream's informer lister).

A ``None`` from either is upstream's not-found error.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from typing import Protocol

from ..objects.pod import PodInfo
from ..objects.podgroup import PodGroup
from .cycle_state import PodGroupCycleState
from .queued_pod import QueuedPodInfo

__all__ = [
    "NO_POD_GROUPS",
    "NoPodGroups",
    "PodGroupCycleState",
    "PodGroupInfo",
    "PodGroupLister",
    "PodGroupManager",
    "PodGroupState",
    "PodGroupStateLister",
    "QueuedPodGroupInfo",
    "pod_group_state_not_found",
]

@dataclass(slots=True)
class PodGroupInfo:
    """A pod group and the pods of it one pod-group cycle tries (upstream's ``PodGroupInfo``).

    ``unscheduled_pods`` are in the order the cycle tries them (priority descending, then
    the time each first entered the queue); pods already assumed or bound are not among
    them: read those from the pod-group state.
    """

    namespace: str
    name: str
    unscheduled_pods: list[PodInfo] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class QueuedPodGroupInfo(PodGroupInfo):
    """A pod group popped from the queue for one cycle (upstream's ``QueuedPodGroupInfo``):
    its queued members as the queue tracks them, in the cycle's order.

    Keep ``unscheduled_pods`` equal to the pods of ``queued_pods``: change both through
    ``set_queued_pods``.
    """

    queued_pods: list[QueuedPodInfo] = field(default_factory=list)

    def set_queued_pods(self, queued: Sequence[QueuedPodInfo]) -> None:
        self.queued_pods = list(queued)
        self.unscheduled_pods = [q.pod for q in self.queued_pods]


class PodGroupState(Protocol):
    """One pod group's pods as the scheduler knows them (upstream's ``PodGroupState``).

    A member is in exactly one of three states: unscheduled (neither assumed nor bound),
    assumed (passed Reserve, not bound yet) or assigned (bound to a node). Sets are of
    pod uids.
    """

    def all_pods(self) -> Set[str]:
        """Every member the scheduler knows, whatever its state."""
        ...

    def all_pods_count(self) -> int: ...

    def unscheduled_pods(self) -> list[PodInfo]:
        """Members neither assumed nor bound, in the order the scheduler learnt of them."""
        ...

    def assumed_pods(self) -> Set[str]: ...

    def assigned_pods(self) -> Set[str]: ...

    def scheduled_pods(self) -> list[PodInfo]:
        """Members bound, then members assumed, each with its ``node_name`` set (an assumed
        pod as it was assumed)."""
        ...

    def scheduled_pods_count(self) -> int:
        """``len(assumed_pods()) + len(assigned_pods())``."""
        ...


class PodGroupStateLister(Protocol):
    """Pod-group states by group (upstream's ``PodGroupStateLister``)."""

    def get(self, namespace: str, name: str) -> PodGroupState | None:
        """The group's state; None when the scheduler knows no pod of it."""
        ...


class PodGroupLister(Protocol):
    """``PodGroup`` objects (``scheduling.k8s.io/v1alpha2``) by namespace and name (upstream's
    ``PodGroupLister``): read from the snapshot in ``simulate``, through an informer in ``run``."""

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        """The PodGroup; None when the cluster has none of that name (yet)."""
        ...


class PodGroupManager(PodGroupLister, Protocol):
    """What the scheduler knows of pod groups (upstream's ``PodGroupManager``, with the
    PodGroup lister beside it): the objects and their pods' state."""

    def pod_group_states(self) -> PodGroupStateLister: ...


def pod_group_state_not_found(namespace: str, name: str) -> str:
    """Upstream's error when a lister knows no state of the group."""
    return f"pod group state not found for pod group {namespace}/{name}"


class _NoStates:
    def get(self, namespace: str, name: str) -> PodGroupState | None:
        return None


class NoPodGroups:
    """The ``PodGroupManager`` of a scheduler that tracks no pod group (GenericWorkload off):
    every lookup answers not found."""

    __slots__ = ()

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return None

    def pod_group_states(self) -> PodGroupStateLister:
        return _NO_STATES


_NO_STATES = _NoStates()
NO_POD_GROUPS = NoPodGroups()
