"""Cluster events and informer updates for the scheduling queue: which waiting pods wake.

Upstream's ``MoveAllToActiveOrBackoffQueue`` (only the unschedulable pods whose
rejecting plugins registered the event, each asked its queueing hint), ``Activate``
(``podsToActivate``, ForceActivate for a pod in flight), and a pending pod updated or
deleted. Apart from the queue's adding and popping because this is the part that
reacts to the cluster; ``SchedulingQueue`` inherits it.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..framework.events import FORCE_ACTIVATE, ClusterEvent, EventResource
from ..objects.pod import PodInfo
from .hints import IMMEDIATELY, SKIP
from .labels import FORCE_ACTIVATE as FORCE_ACTIVATE_LABEL
from .labels import UNSCHEDULABLE_Q, UNSCHEDULED_POD_UPDATE, event_label, pod_update_label
from .moves import UNSCHEDULABLE, PodMoves
from .pod_changes import pod_scheduling_properties_change

__all__ = ["ClusterEventMoves"]


class ClusterEventMoves(PodMoves):
    """``SchedulingQueue``'s answers to cluster events, activations and informer updates."""

    def move_all_to_active_or_backoff(
        self, event: ClusterEvent, old: Any = None, new: Any = None, pre_check: Callable[[PodInfo], bool] | None = None
    ) -> int:
        """A cluster event: wake the unschedulable pods it may help. Returns how many moved."""
        with self._lock:
            moved = 0
            if not len(self._unschedulable):  # nothing waits (an informer's first sync): nothing to wake
                waiting = []
            elif event.resource == EventResource.WILDCARD:
                # Every pod, but gated pods only if their gate registered a wildcard event
                # (upstream skips a gated pod whose GatingPluginEvents do not match).
                hears = set(self._hints.interested(event))
                waiting = [i for i in self._unschedulable.values()
                           if not i.gated or (i.pod.scheduler_name, i.gating_plugin) in hears]
            else:  # only the pods whose rejecting plugins registered this event (or nothing)
                waiting = self._unschedulable.candidates(self._hints.interested(event))
            label = event_label(event) if waiting and self.on_incoming is not None else ""
            for info in waiting:
                if pre_check is not None and not pre_check(info.pod):
                    continue
                strategy = self._hints.strategy(info, event, old, new)
                if strategy == SKIP:
                    continue
                if info.gated and self._run_pre_enqueue(info) is False:
                    # Still gated, perhaps by another plugin now: filed anew. Upstream takes
                    # it out and puts it back, so it counts as incoming again.
                    self._unschedulable[info.uid] = info
                    if self.on_incoming is not None:
                        self.on_incoming(UNSCHEDULABLE_Q, label)
                    continue
                del self._unschedulable[info.uid]
                where = self._requeue(info, strategy, label)
                moved += where != UNSCHEDULABLE
            self._in_flight.record(event, old, new)
            self._move_request_cycle = self.scheduling_cycle
            if moved:
                self._cond.notify()
            return moved

    def activate(self, pods: Iterable[PodInfo]) -> None:
        """Move these pods to activeQ now, wherever they wait (``podsToActivate``).

        A pod being scheduled right now gets upstream's ForceActivate event instead,
        aimed at it alone: if its attempt fails, it is requeued rather than left to wait
        for a cluster event."""
        with self._lock:
            for pod in pods:
                info = self._unschedulable.get(pod.uid)  # left there: a pod still gated stays as it was filed
                if info is not None:
                    self._move_to_active(info, FORCE_ACTIVATE_LABEL)
                elif (info := self._backoff.remove(pod.uid)) is not None:
                    self._move_to_active(info, FORCE_ACTIVATE_LABEL, from_backoff=True)
                elif pod.uid in self._in_flight:
                    self._in_flight.record(FORCE_ACTIVATE, None, pod)
                    self._move_request_cycle = self.scheduling_cycle
            self._cond.notify()

    def update(self, old: PodInfo | None, new: PodInfo) -> None:
        with self._lock:
            uid = new.uid
            for heap in (self._active, self._backoff):
                info = heap.get(uid)
                if info is not None:
                    info.pod = new
                    heap.push(info)  # re-ordered: the new pod may sort differently
                    return
            info = self._unschedulable.get(uid)
            if info is not None:
                info.pod = new
                label = pod_update_label(old, new) if self.on_incoming is not None else ""
                if info.gated and self._run_pre_enqueue(info):
                    del self._unschedulable[uid]
                    self._requeue(info, IMMEDIATELY, label)
                elif info.gated:
                    self._unschedulable[uid] = info  # still gated, perhaps by another plugin: file it anew
                else:
                    # One event per kind of change; an update that changes nothing scheduling
                    # reads (our own PodScheduled condition) is the generic update, which
                    # wakes the pod only for a plugin registered for it.
                    for event in pod_scheduling_properties_change(old, new):
                        strategy = self._hints.strategy(info, event, old, new)
                        if strategy != SKIP:
                            del self._unschedulable[uid]
                            self._requeue(info, strategy, label)
                            break
                self._cond.notify()
                return
            if uid in self._in_flight:
                # Replayed if this attempt fails: the update may be what makes the pod schedulable.
                for event in pod_scheduling_properties_change(old, new):
                    self._in_flight.record(event, old, new)
                return
            self._add(new, UNSCHEDULED_POD_UPDATE)

    def delete(self, pod: PodInfo) -> None:
        with self._lock:
            self._active.remove(pod.uid)
            self._backoff.remove(pod.uid)
            self._unschedulable.pop(pod.uid, None)
