"""A small fake of the pod-group side of ``Handle`` for the workload plugins' specifications.

``FakePodGroups`` is a ``PodGroupManager`` that keeps each group's pods in three states as
upstream's cache does (``podgroupstate.go``): a pod added with a node is assigned, without one
unscheduled; ``assume`` moves it to assumed with its node, ``forget`` back. ``group_handle``
makes a scheduler handle over it whose activations are recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.cache.cache import Cache
from kubesched.clock import VirtualClock
from kubesched.framework import PodGroupStateLister
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.objects.pod import PodInfo
from kubesched.objects.podgroup import PodGroup
from kubesched.scheduler.handle import HandleHub, SchedulerHandle

from ..helpers import make_pod


def group(name: str, min_count: int | None = None, namespace: str = "default", topology: str | None = None) -> PodGroup:
    """A PodGroup: a gang of ``min_count`` (None: the basic policy), optionally topology-constrained."""
    return PodGroup(namespace, name, f"uid-pg-{namespace}-{name}", 1, "1", min_count,
                    topology_keys=(topology,) if topology else ())


def member(name: str, group_name: str | None, namespace: str = "default", node_name: str = "", **kwargs: object) -> PodInfo:
    """A pod of ``group_name`` (None: of no group), uid ``name``."""
    pod = make_pod(name, namespace=namespace, uid=name, node_name=node_name or None, **kwargs)
    return pod.copy_with(pod_group_name=group_name)


@dataclass
class FakeGroupState:
    pods: dict[str, PodInfo] = field(default_factory=dict)  # uid -> pod (the assumed copy when assumed)
    unscheduled: list[str] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)
    assigned: list[str] = field(default_factory=list)

    def all_pods(self) -> frozenset[str]:
        return frozenset(self.pods)

    def all_pods_count(self) -> int:
        return len(self.pods)

    def unscheduled_pods(self) -> list[PodInfo]:
        return [self.pods[uid] for uid in self.unscheduled]

    def assumed_pods(self) -> frozenset[str]:
        return frozenset(self.assumed)

    def assigned_pods(self) -> frozenset[str]:
        return frozenset(self.assigned)

    def scheduled_pods(self) -> list[PodInfo]:
        return [self.pods[uid] for uid in self.assigned + self.assumed]

    def scheduled_pods_count(self) -> int:
        return len(self.assigned) + len(self.assumed)


class FakePodGroups:
    """A ``PodGroupManager`` over groups and pods given by hand."""

    def __init__(self, groups: tuple[PodGroup, ...] = (), pods: tuple[PodInfo, ...] = ()) -> None:
        self.groups = {(g.namespace, g.name): g for g in groups}
        self.states: dict[tuple[str, str], FakeGroupState] = {}
        for pod in pods:
            self.add_pod(pod)

    # PodGroupManager
    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self.groups.get((namespace, name))

    def pod_group_states(self) -> PodGroupStateLister:
        return self

    def get(self, namespace: str, name: str) -> FakeGroupState | None:
        return self.states.get((namespace, name))

    # the cache's side
    def add_pod(self, pod: PodInfo) -> None:
        assert pod.pod_group_name is not None
        state = self.states.setdefault((pod.namespace, pod.pod_group_name), FakeGroupState())
        state.pods[pod.uid] = pod
        (state.assigned if pod.node_name else state.unscheduled).append(pod.uid)

    def assume(self, pod: PodInfo, node_name: str) -> PodInfo:
        assert pod.pod_group_name is not None
        state = self.states[(pod.namespace, pod.pod_group_name)]
        assumed = pod.copy_with(node_name=node_name)
        state.pods[pod.uid] = assumed
        state.unscheduled.remove(pod.uid)
        state.assumed.append(pod.uid)
        return assumed

    def forget(self, pod: PodInfo) -> None:
        assert pod.pod_group_name is not None
        state = self.states[(pod.namespace, pod.pod_group_name)]
        state.assumed.remove(pod.uid)
        state.pods[pod.uid] = pod.copy_with(node_name="")
        state.unscheduled.append(pod.uid)


@dataclass
class GroupHandle:
    """A scheduler handle over ``groups``, with what it was asked to do."""

    hub: HandleHub
    handle: SchedulerHandle
    groups: FakePodGroups
    activated: list[PodInfo] = field(default_factory=list)
    decided: dict[str, str] = field(default_factory=dict)  # uid -> "allowed" or the rejection

    def wait_at_permit(self, pod: PodInfo, node_name: str, plugin: str = "GangScheduling") -> None:
        """Hold ``pod`` at Permit as the scheduler does after a Wait."""
        def done(status: object) -> None:
            self.decided[pod.uid] = "allowed" if status is None else str(status)
            self.hub.waiting_pods.remove(pod.uid)
        self.hub.waiting_pods.add(pod.uid, WaitingPod(pod, node_name, {plugin: 300.0}, done))


def group_handle(groups: FakePodGroups, cache: Cache | None = None) -> GroupHandle:
    hub = HandleHub(cache or Cache(), VirtualClock(), None)
    hub.pod_group_manager = groups
    out = GroupHandle(hub, hub.handle("default-scheduler"), groups)
    hub.activate = out.activated.extend
    return out
