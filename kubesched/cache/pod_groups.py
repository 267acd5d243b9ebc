"""Pod-group state: which members of each PodGroup the scheduler knows, and where they stand.

Upstream's ``backend/cache/podgroupstate.go`` (GenericWorkload): for every group, every
member pod the scheduler has seen, split into *unscheduled* (pending, not assumed),
*assumed* (picked a node in a scheduling cycle, binding not confirmed) and *assigned*
(bound). GangScheduling's PreEnqueue counts all members against ``minCount``, its Permit
counts the assumed and assigned ones, the queue pops a group's unscheduled members
together, and the placement generator reads where the scheduled ones run.

Upstream keeps a copy of these states in each cycle's snapshot and assumes a group
cycle's pods there only; kubesched's snapshot is a view of the cache, so a group cycle
assumes its pods in the cache itself and forgets them before it ends (see
``scheduler/podgroup_cycle.py``), and one set of states serves both readers.

The cache updates the states as pods are added, assumed, forgotten, bound and removed;
the event handlers add and remove pending members (upstream's ``AddPodGroupMember`` and
friends), since pending pods never reach the cache otherwise.
"""

from __future__ import annotations

import itertools
from typing import Iterator, KeysView

from ..objects.pod import PodInfo
from ..objects.podgroup import PodGroup

__all__ = ["PodGroupDirectory", "PodGroupState", "PodGroupStates"]

# One counter for every state, so that a group deleted and made again never reuses a
# generation (upstream's nextPodGroupGeneration).
_generations = itertools.count(1)


class PodGroupState:
    """The members of one pod group, by uid (upstream's ``podGroupStateData``).

    Readers return members in the order the scheduler first saw them (assumed ones in the
    order assumed), where upstream's maps have no order: a simulation must not depend on
    hash order."""

    __slots__ = ("namespace", "name", "generation", "_all", "_unscheduled", "_assumed", "_assigned")

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace = namespace
        self.name = name
        self.generation = 0  # moves on every change
        self._all: dict[str, PodInfo] = {}  # every known member, as last seen
        self._unscheduled: set[str] = set()
        self._assumed: dict[str, PodInfo] = {}  # uid -> the assumed pod (its node set), in assume order
        self._assigned: set[str] = set()

    # -- changes (the cache and the event handlers) -------------------------------------
    def add_pod(self, pod: PodInfo) -> None:
        """A member seen: assigned if it has a node, else unscheduled."""
        self.generation = next(_generations)
        self._all[pod.uid] = pod
        if pod.node_name:
            self._assigned.add(pod.uid)
        else:
            self._unscheduled.add(pod.uid)

    def update_pod(self, old: PodInfo, new: PodInfo) -> None:
        """A member changed; one that got a node is assigned from now on."""
        self.generation = next(_generations)
        self._all[new.uid] = new
        if not old.node_name and new.node_name:
            self._assigned.add(new.uid)
            self._unscheduled.discard(new.uid)
            self._assumed.pop(new.uid, None)

    def delete_pod(self, uid: str) -> None:
        self.generation = next(_generations)
        self._all.pop(uid, None)
        self._unscheduled.discard(uid)
        self._assumed.pop(uid, None)
        self._assigned.discard(uid)

    def assume_pod(self, pod: PodInfo) -> None:
        """The member picked a node in a scheduling cycle; a pod not known here is ignored
        (it may have been deleted meanwhile)."""
        stored = self._all.get(pod.uid)
        if stored is None:
            return
        self.generation = next(_generations)
        if stored.node_name:
            self._assigned.add(pod.uid)
        else:
            self._assumed[pod.uid] = pod
        self._unscheduled.discard(pod.uid)

    def forget_pod(self, uid: str) -> None:
        """An assumed member back to unscheduled (or assigned, if it was bound meanwhile)."""
        stored = self._all.get(uid)
        if stored is None:
            return
        self.generation = next(_generations)
        self._assumed.pop(uid, None)
        if stored.node_name:
            self._assigned.add(uid)
        else:
            self._unscheduled.add(uid)

    # -- reading (framework's PodGroupState) ------------------------------------------
    def all_pods(self) -> KeysView[str]:
        """The uids of every member the scheduler knows (a copy, in the order first seen)."""
        return dict.fromkeys(self._all).keys()

    def all_pods_count(self) -> int:
        return len(self._all)

    def unscheduled_pods(self) -> list[PodInfo]:
        """Members neither assumed nor assigned, in the order first seen."""
        unscheduled = self._unscheduled
        if not unscheduled:
            return []
        return [pod for uid, pod in self._all.items() if uid in unscheduled]

    def assumed_pods(self) -> KeysView[str]:
        """The uids of members past Reserve whose binding is not confirmed (a copy, in assume
        order: GangScheduling allows the waiting ones in this order)."""
        return dict.fromkeys(self._assumed).keys()

    def assigned_pods(self) -> KeysView[str]:
        """The uids of members bound to a node (a copy, in the order first seen)."""
        assigned = self._assigned
        return dict.fromkeys(uid for uid in self._all if uid in assigned).keys()

    def scheduled_pods(self) -> list[PodInfo]:
        """Assigned members (in the order first seen), then assumed ones (as assumed, on their node)."""
        assigned = self._assigned
        out = [pod for uid, pod in self._all.items() if uid in assigned] if assigned else []
        out.extend(self._assumed.values())
        return out

    def scheduled_pods_count(self) -> int:
        return len(self._assumed) + len(self._assigned)

    def is_empty(self) -> bool:
        return not self._all

    def __repr__(self) -> str:
        return (f"PodGroupState({self.namespace}/{self.name}: {len(self._unscheduled)} unscheduled, "
                f"{len(self._assumed)} assumed, {len(self._assigned)} assigned)")


class PodGroupStates:
    """Every known group's state, by (namespace, name): upstream's ``cache.podGroupStates``
    and its ``PodGroupStateLister``. Only pods naming a group reach it, and only while the
    GenericWorkload gate is on (the cache checks)."""

    __slots__ = ("_states",)

    def __init__(self) -> None:
        self._states: dict[tuple[str, str], PodGroupState] = {}

    def get(self, namespace: str, name: str) -> PodGroupState | None:
        """The group's state; None when the scheduler knows no member of it."""
        return self._states.get((namespace, name))

    def of(self, pod: PodInfo) -> PodGroupState | None:
        """The state of the pod's group (None for a pod of no group, or an unknown group)."""
        name = pod.pod_group_name
        return self._states.get((pod.namespace, name)) if name is not None else None

    def __iter__(self) -> Iterator[PodGroupState]:
        return iter(list(self._states.values()))

    def __len__(self) -> int:
        return len(self._states)

    # -- upstream's {add,update,remove,assume,forget}PodGroupMember -------------------------
    def add_member(self, pod: PodInfo) -> None:
        name = pod.pod_group_name
        assert name is not None
        key = (pod.namespace, name)
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = PodGroupState(pod.namespace, name)
        state.add_pod(pod)

    def update_member(self, old: PodInfo, new: PodInfo) -> None:
        """A member changed; a group never seen is left alone (a missed add, as upstream logs)."""
        state = self.of(new)
        if state is not None:
            state.update_pod(old, new)

    def remove_member(self, pod: PodInfo) -> None:
        """The member is gone; an emptied group is dropped."""
        name = pod.pod_group_name
        if name is None:
            return
        key = (pod.namespace, name)
        state = self._states.get(key)
        if state is None:
            return
        state.delete_pod(pod.uid)
        if state.is_empty():
            del self._states[key]

    def assume_member(self, pod: PodInfo) -> None:
        """The member was assumed; a group never seen starts with it (upstream's assumePodGroupMember)."""
        name = pod.pod_group_name
        assert name is not None
        key = (pod.namespace, name)
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = PodGroupState(pod.namespace, name)
            state._all[pod.uid] = pod
        state.assume_pod(pod)

    def forget_member(self, pod: PodInfo) -> None:
        state = self.of(pod)
        if state is not None:
            state.forget_pod(pod.uid)


class PodGroupDirectory:
    """The scheduler's ``PodGroupManager``: the PodGroup objects (upstream's informer lister),
    fed by the snapshot in ``simulate`` and by an informer in ``run``, beside the cache's
    member states."""

    __slots__ = ("_groups", "_states")

    def __init__(self, states: PodGroupStates) -> None:
        self._groups: dict[tuple[str, str], PodGroup] = {}
        self._states = states

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self._groups.get((namespace, name))

    def pod_group_states(self) -> PodGroupStates:
        return self._states

    def upsert(self, group: PodGroup) -> PodGroup | None:
        """Store the group; the version it replaces, if any."""
        key = (group.namespace, group.name)
        old = self._groups.get(key)
        self._groups[key] = group
        return old

    def remove(self, namespace: str, name: str) -> PodGroup | None:
        return self._groups.pop((namespace, name), None)

    def groups(self) -> list[PodGroup]:
        """Every stored group, in the order first stored."""
        return list(self._groups.values())
