"""Queueing hints: which way a cluster event sends a waiting pod (upstream's ``isPodWorthRequeuing``).

A pod waits because some plugins rejected it (or a PreEnqueue plugin gates it). An event
can only help if one of those plugins registered it; its hint, if it has one, then says
QUEUE or SKIP. A plugin that reported the pod *pending* (it waits for something, not
rejected) sends it straight to activeQ; a rejecting one sends it through its backoff.
"""

from __future__ import annotations

from time import perf_counter
from typing import Any, Callable, Iterable

from ..framework.events import ActionType, ClusterEvent, EventResource, QueueingHint, QueueingHintFn
from ..framework.queued_pod import QueuedPodInfo
from ..objects.pod import PodInfo
from .in_flight import EventRecord
from .labels import event_label

__all__ = ["Hints", "HintRegistration", "SKIP", "AFTER_BACKOFF", "IMMEDIATELY"]

HintRegistration = tuple[ClusterEvent, str, QueueingHintFn | None]
"""(event of interest, plugin name, the plugin's hint or None for always-queue)."""

SKIP, AFTER_BACKOFF, IMMEDIATELY = 0, 1, 2  # upstream's queueSkip, queueAfterBackoff, queueImmediately

HintObserver = Callable[[str, str, str, float], None]
"""(plugin, event label, Queue / QueueSkip / Error, seconds): each hint function run
(``scheduler_queueing_hint_execution_duration_seconds``)."""


class Hints:
    """The profiles' hint registrations, by scheduler name."""

    __slots__ = ("_registrations", "_interest", "observer")

    def __init__(self, registrations: dict[str, list[HintRegistration]]) -> None:
        self._registrations = registrations
        self._interest: dict[tuple[str, ActionType], list[tuple[str, str]]] = {}  # event -> (profile, plugin)
        self.observer: HintObserver | None = None

    def profiles(self) -> list[str]:
        return list(self._registrations)

    def strategy(self, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> int:
        """SKIP, AFTER_BACKOFF or IMMEDIATELY for this pod and event."""
        if info.gated:
            rejectors = {info.gating_plugin}
        else:
            rejectors = info.unschedulable_plugins | info.pending_plugins
        if not rejectors:
            return AFTER_BACKOFF
        if event.resource == EventResource.WILDCARD:
            # A wildcard event carrying a pod (ForceActivate for one pod) is for that pod only.
            if new is not None and (not isinstance(new, PodInfo) or new.uid != info.uid):
                return SKIP
            return AFTER_BACKOFF
        registrations = self._registrations.get(info.pod.scheduler_name)
        if registrations is None:
            return AFTER_BACKOFF
        strategy = SKIP
        for interest, plugin, hint in registrations:
            if plugin not in rejectors or not interest.matches(event):
                continue
            if hint is not None:
                observer = self.observer
                started = perf_counter() if observer is not None else 0.0
                failed = False
                try:
                    answer = hint(info.pod, old, new)
                except Exception:  # a failing hint must not strand the pod
                    answer, failed = QueueingHint.QUEUE, True
                if observer is not None:
                    outcome = "Error" if failed else "QueueSkip" if answer == QueueingHint.SKIP else "Queue"
                    observer(plugin, event_label(event), outcome, perf_counter() - started)
                if answer == QueueingHint.SKIP:
                    continue
            if plugin in info.pending_plugins or info.gated:
                return IMMEDIATELY
            strategy = AFTER_BACKOFF
        return strategy

    def replay(self, info: QueuedPodInfo, seen: Iterable[EventRecord] | None) -> int:
        """The strategy for a pod whose attempt failed, from the events seen while it was
        in flight (``determineSchedulingHintForInFlightPod``); ``seen`` None: it was not."""
        if not (info.unschedulable_plugins or info.pending_plugins):
            return AFTER_BACKOFF
        if seen is None:
            return SKIP
        strategy = SKIP
        for event, old, new in seen:
            if event.resource == EventResource.POD and getattr(new, "uid", info.uid) != info.uid:
                continue  # another pending pod's own update
            answer = self.strategy(info, event, old, new)
            if answer == IMMEDIATELY:
                return IMMEDIATELY
            strategy = max(strategy, answer)
        return strategy

    def interested(self, event: ClusterEvent) -> list[tuple[str, str]]:
        """The (profile, plugin) pairs with a registration matching ``event``."""
        key = (event.resource, event.action)
        found = self._interest.get(key)
        if found is None:
            found = sorted({(profile, plugin) for profile, registrations in self._registrations.items()
                            for interest, plugin, _ in registrations if interest.matches(event)})
            self._interest[key] = found
        return found
