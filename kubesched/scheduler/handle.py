"""``SchedulerHandle``: the scheduler's implementation of the plugins' ``Handle``.

One handle per profile; all of them share the cache's read-only snapshot, the
waiting pods, the object stores and the pod handlers (``HandleHub``), so a plugin
enabled in two profiles sees one cluster.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from ..cache.cache import Cache
from ..cache.object_store import ObjectStore, ObjectStores
from ..cache.pod_groups import PodGroupDirectory
from ..clock import Clock
from ..framework.features import DEFAULT_FEATURES, Features
from ..framework.handle import ClusterClient, EventRecorder, PodEventHandler, WaitingPod
from ..framework.podgroups import NO_POD_GROUPS, PodGroupManager
from ..framework.views import PodObserver, SnapshotView
from ..framework.waiting_pods import WaitingPods
from ..objects.pod import PodInfo

__all__ = ["HandleHub", "SchedulerHandle"]


class HandleHub:
    """What every profile's handle shares, and the hooks the scheduler wires up after
    building the profiles (the queue exists only once the QueueSort plugin does)."""

    def __init__(self, cache: Cache, clock: Clock, client: ClusterClient | None,
                 waiting_pods: WaitingPods | None = None, object_stores: ObjectStores | None = None) -> None:
        self.cache = cache
        self.clock = clock
        self.client = client
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods()
        self.object_stores = object_stores if object_stores is not None else ObjectStores()
        self.pod_handlers: list[PodEventHandler] = []
        self.activate: Callable[[Iterable[PodInfo]], None] | None = None
        self.features: Features = DEFAULT_FEATURES  # the scheduler sets its registry's gates
        # PodGroups and their members' states; plugins see them (``pod_group_manager``) only
        # once ``enable_pod_groups`` ran (GenericWorkload), before the profiles are built.
        self.pod_groups = PodGroupDirectory(cache.pod_groups)
        self.pod_group_manager: PodGroupManager = NO_POD_GROUPS

    def enable_pod_groups(self) -> None:
        """GenericWorkload on: the cache tracks pod groups' members and plugins see the groups."""
        self.cache.generic_workload = True
        self.pod_group_manager = self.pod_groups

    def handle(self, profile_name: str) -> "SchedulerHandle":
        return SchedulerHandle(self, profile_name)


class _NoEvents:
    def record_event(self, pod: PodInfo, event_type: str, reason: str, message: str) -> None:
        return None


class SchedulerHandle:
    """``framework.Handle`` over the scheduler's cache, queue and cluster client."""

    __slots__ = ("_hub", "_profile_name")

    def __init__(self, hub: HandleHub, profile_name: str) -> None:
        self._hub = hub
        self._profile_name = profile_name

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def features(self) -> Features:
        return self._hub.features

    def snapshot(self) -> SnapshotView:
        return self._hub.cache.snapshot()

    def now(self) -> float:
        return self._hub.clock.now()

    # -- waiting pods ---------------------------------------------------------------
    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._hub.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        return iter(self._hub.waiting_pods.all())

    def reject_waiting_pod(self, uid: str, plugin: str, message: str) -> bool:
        waiting = self._hub.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject(plugin, message)
        return True

    # -- queue and cluster ------------------------------------------------------------
    def activate(self, pods: Iterable[PodInfo]) -> None:
        if self._hub.activate is not None:
            self._hub.activate(pods)

    @property
    def event_recorder(self) -> EventRecorder:
        return self._hub.client if self._hub.client is not None else _NoEvents()

    @property
    def client(self) -> ClusterClient | None:
        return self._hub.client

    # -- watching -----------------------------------------------------------------------
    def add_pod_observer(self, observer: PodObserver) -> None:
        self._hub.cache.add_observer(observer)

    def add_pod_handler(self, handler: PodEventHandler) -> None:
        if handler not in self._hub.pod_handlers:
            self._hub.pod_handlers.append(handler)

    def object_store(self, api_version: str, kind: str, plural: str) -> ObjectStore:
        return self._hub.object_stores.get_or_create(api_version, kind, plural)

    # -- pod groups -------------------------------------------------------------------
    @property
    def pod_group_manager(self) -> PodGroupManager:
        return self._hub.pod_group_manager
