"""The unschedulable pods of the queue, indexed by the plugins that rejected them.

A cluster event can only wake a pod that one of its rejecting plugins registered the
event for (or a pod with no rejecting plugin, which any event wakes). Filing pods under
``(scheduler name, plugin)`` lets an event look at those pods only, so its cost follows
the pods it may wake, not every waiting pod: 10,000 pods gated by SchedulingGates are
never looked at by a node event.

The pods that are not gated are also kept in a heap by the time they last failed, so
the queue finds the next ``podMaxInUnschedulablePodsDuration`` timeout, and the pods
past it, without walking every waiting pod.
"""

from __future__ import annotations

import heapq
from typing import Iterable, Iterator

from ..framework.queued_pod import QueuedPodInfo

__all__ = ["UnschedulablePods", "rejectors_of"]

RejectorKey = tuple[str, str]  # (scheduler name, plugin name)


def rejectors_of(info: QueuedPodInfo) -> set[str]:
    """The plugins whose events may wake the pod: its gate, or the plugins that rejected it."""
    if info.gated:
        return {info.gating_plugin}
    return info.unschedulable_plugins | info.pending_plugins


class UnschedulablePods:
    """Pods by uid, in arrival order, filed under their rejecting plugins.

    ``indexed`` names the profiles whose plugins registered events; pods of any other
    profile (or without a rejecting plugin) may be woken by every event.
    """

    __slots__ = ("_pods", "_order", "_filed", "_by_rejector", "_anyone", "_indexed", "_next", "_gated", "_stamps")

    def __init__(self, indexed: Iterable[str] = ()) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self._order: dict[str, int] = {}
        self._filed: dict[str, tuple[RejectorKey, ...]] = {}  # uid -> keys it is filed under
        self._by_rejector: dict[RejectorKey, dict[str, None]] = {}
        self._anyone: dict[str, None] = {}
        self._indexed = frozenset(indexed)
        self._next = 0
        self._gated: set[str] = set()  # filed as gated (the flag of a pod can change in place)
        # (timestamp, arrival, uid) of the pods filed as not gated; entries of pods since
        # removed, gated or re-stamped stay until they reach the top (lazy deletion)
        self._stamps: list[tuple[float, int, str]] = []

    # -- as a dict of pods by uid -------------------------------------------------
    def __setitem__(self, uid: str, info: QueuedPodInfo) -> None:
        self.put(uid, info)

    def put(self, uid: str, info: QueuedPodInfo) -> bool:
        """Add the pod, or file it anew (its rejecting plugins or gate may have changed).
        Returns whether it is new here."""
        new = uid not in self._pods
        if new:
            self._order[uid] = self._next
            self._next += 1
        else:
            self._unfile(uid)
        self._pods[uid] = info
        self._file(uid, info)
        return new

    def pop(self, uid: str, default: None = None) -> QueuedPodInfo | None:
        info = self._pods.pop(uid, None)
        if info is not None:
            self._unfile(uid)
            del self._order[uid]
        return info

    def __delitem__(self, uid: str) -> None:
        if self.pop(uid) is None:
            raise KeyError(uid)

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._pods.get(uid)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[str]:
        return iter(self._pods)

    def values(self) -> list[QueuedPodInfo]:
        return list(self._pods.values())

    # -- the index ------------------------------------------------------------------
    def candidates(self, interested: Iterable[RejectorKey]) -> list[QueuedPodInfo]:
        """The pods an event registered by ``interested`` (profile, plugin) pairs may wake,
        plus those any event may wake, in arrival order."""
        if not self._pods:  # the common case while informers sync: nothing waits
            return []
        by_rejector = self._by_rejector
        found = [filed for key in interested if (filed := by_rejector.get(key))]
        if not found and not self._anyone:  # every waiting pod waits for other events (gated pods, say)
            return []
        uids: set[str] = set(self._anyone)
        for filed in found:
            uids.update(filed)
        order = self._order
        return [self._pods[uid] for uid in sorted(uids, key=order.__getitem__)]

    # -- timeouts ---------------------------------------------------------------
    def _live(self, entry: tuple[float, int, str]) -> bool:
        info = self._pods.get(entry[2])
        return info is not None and not info.gated and info.timestamp == entry[0]

    def earliest_timestamp(self) -> float | None:
        """The oldest failure time of the pods that are not gated (None: there are none)."""
        stamps = self._stamps
        while stamps and not self._live(stamps[0]):
            heapq.heappop(stamps)
        return stamps[0][0] if stamps else None

    def timed_out(self, now: float, limit: float) -> list[QueuedPodInfo]:
        """The pods, not gated, with ``now - timestamp > limit``, in arrival order."""
        stamps, found = self._stamps, {}
        while stamps and now - stamps[0][0] > limit:
            entry = heapq.heappop(stamps)
            if self._live(entry):
                found[entry[2]] = self._pods[entry[2]]
        order = self._order
        return [found[uid] for uid in sorted(found, key=order.__getitem__)]

    @property
    def gated(self) -> int:
        """How many of the pods wait for a PreEnqueue plugin (scheduling gates)."""
        return len(self._gated)

    def _file(self, uid: str, info: QueuedPodInfo) -> None:
        if info.gated:
            self._gated.add(uid)
        else:
            heapq.heappush(self._stamps, (info.timestamp, self._order[uid], uid))
            if len(self._stamps) > 2 * len(self._pods) + 64:
                self._stamps = list({e[2]: e for e in self._stamps if self._live(e)}.values())
                heapq.heapify(self._stamps)
        profile = info.pod.scheduler_name
        rejectors = rejectors_of(info)
        if not rejectors or profile not in self._indexed:
            self._anyone[uid] = None
            self._filed[uid] = ()
            return
        keys = tuple((profile, plugin) for plugin in rejectors)
        for key in keys:
            self._by_rejector.setdefault(key, {})[uid] = None
        self._filed[uid] = keys

    def rejector_counts(self) -> dict[tuple[str, str], int]:
        """(plugin, profile) -> how many waiting pods that plugin rejected (upstream's
        ``unschedulable_pods`` gauge; a pod counts once for each plugin that rejected it)."""
        return {(plugin, profile): len(uids) for (profile, plugin), uids in self._by_rejector.items()}

    def _unfile(self, uid: str) -> None:
        self._gated.discard(uid)
        keys = self._filed.pop(uid, ())
        if not keys:
            self._anyone.pop(uid, None)
        for key in keys:
            filed = self._by_rejector.get(key)
            if filed is not None:
                filed.pop(uid, None)
                if not filed:
                    del self._by_rejector[key]
