"""``LiveScheduler``: the scheduler core driven by a real API server.

One asyncio event loop owns the cache and the queue: informer events are applied to
them as they arrive, scheduling cycles run between them, and binding completions come
back to it from the binding workers. The loop never waits on the API server inside a
cycle, so a slow bind delays only its own pod.

The order of things follows kube-scheduler's ``app.Run``: informers start at once (a
standby replica keeps a warm cache), scheduling starts only once they have synced and,
with leader election, only while this process holds the Lease; losing it stops
scheduling at once.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Callable

from ...clock import RealClock
from ...framework.config import SchedulerConfig, needs_raw_objects
from ...framework.registry import Registry
from ...framework.handle import JSONObject
from ...objects.node import Node, parse_node
from ...objects.pod import PodInfo, parse_pod
from ...objects.podgroup import PodGroup
from ...scheduler.factory import new_scheduler
from ...scheduler.handle import HandleHub
from ...scheduler.metrics import SchedulerMetrics
from ...scheduler.scheduler import Attempt, Scheduler
from ...cache.cache import Cache
from .binding import BindingPool, EventRoom
from .client import ApiClient
from .cluster_client import KubeClusterClient, PodEventSink
from .concurrency import ConcurrencyLimit
from .handlers import NamespaceInfo, NamespaceEvents, NodeEvents, ObjectEvents, PodEvents, parse_namespace
from .informer import Informer, Resource
from .pod_groups import pod_group_informer
from .pod_resources import limit_parts, limits_of

__all__ = ["EventRoom", "LiveScheduler", "LiveOptions", "collection_path", "POD_FIELD_SELECTOR"]

log = logging.getLogger("kubesched.scheduler")

# Upstream's scheduler watches every pod that is not terminal (``NewInformerFactory``).
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"
# Scheduling cycles run back to back before the loop lets I/O in (each is well under a millisecond).
_CYCLES_PER_TURN = 32
# The longest the loop sleeps with nothing to do: the queue's backoff flush period.
_IDLE_WAIT = 1.0
# How often assumed pods are checked for expiry (upstream's cache ``cleanAssumedPeriod``). The
# TTL is upstream's ``durationToExpireAssumedPod``, 0 since v1.23 (kubernetes#106361): they
# never expire unless the cache is given one.
_CLEAN_ASSUMED_PERIOD = 1.0


@dataclass(slots=True)
class LiveOptions:
    binding_workers: int = 32
    # On stop, how long queued events are written before what is left is dropped (counted
    # and logged); with the bindings' 5 s, well inside a pod's default 30 s grace period.
    events_grace: float = 10.0
    # Event writes queued before producers (the scheduling loop, binding completions) wait.
    events_high_water: int = 10_000
    page_size: int = 500
    watch_list: bool = True
    on_attempt: Callable[[Attempt], None] | None = None


def collection_path(api_version: str, plural: str) -> str:
    """The cluster-wide collection of a resource: core ``v1`` under /api, groups under /apis."""
    if "/" in api_version:
        return f"/apis/{api_version}/{plural}"
    return f"/api/{api_version}/{plural}"


_NO_LIMITS: Mapping[str, float] = {}


def _parse_pod(raw: dict[str, object], keep_raw_objects: bool) -> PodInfo:
    # Pending pods keep their document (their PodScheduled condition decides whether a
    # status patch is needed); bound ones are parsed compact unless a needs_raw plugin reads
    # them. (The informer has already dropped metadata.managedFields, as kube-scheduler's
    # TransformStripManagedFields.)
    spec = raw.get("spec")
    bound = isinstance(spec, dict) and bool(spec.get("nodeName"))
    return parse_pod(raw, keep_raw=keep_raw_objects or not bound)


class LiveScheduler:
    def __init__(self, config: SchedulerConfig, api: ApiClient, events: PodEventSink, *,
                 registry: Registry | None = None, options: LiveOptions | None = None,
                 metrics: SchedulerMetrics | None = None, concurrency: ConcurrencyLimit | None = None) -> None:
        self.config = config
        self.api = api
        self.events = events
        self.registry = registry
        self.options = options or LiveOptions()
        self.metrics = metrics
        # How many binds (and status patches, and the run app's event writes) are under way at once.
        self.concurrency = concurrency or ConcurrencyLimit()
        self.informers: list[Informer[Node] | Informer[NamespaceInfo] | Informer[dict[str, object]]
                             | Informer[JSONObject] | Informer[PodInfo] | Informer[PodGroup]] = []
        self.scheduler: Scheduler | None = None
        self.client: KubeClusterClient | None = None
        self.bindings: BindingPool | None = None
        self._wake: asyncio.Event | None = None
        self._leading = False
        self.cycles = 0
        self.event_room: EventRoom | None = None  # set by the run app: the event writer's back-pressure
        self.pod_limits: dict[str, dict[str, object]] = {}  # pod uid -> limit_parts, for pods that set limits
        self._keep_raw = False  # whether bound pods keep their documents: set by build

    # -- assembling ---------------------------------------------------------------
    def _keep_raw_objects(self) -> bool:
        """Nodes and bound pods keep their documents when a plugin declares ``needs_raw``
        (or extenders are configured)."""
        if self.registry is None:
            return bool(self.config.extenders)
        return needs_raw_objects(self.config, self.registry)

    def _node_parser(self) -> Callable[[dict[str, object]], Node]:
        keep = self._keep_raw_objects()
        return lambda raw: parse_node(raw, keep_raw=keep)

    def build(self) -> Scheduler:
        """The scheduler and its informers (on the running event loop)."""
        loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        clock = RealClock()
        self.client = KubeClusterClient(self.api, loop, self.events, concurrency=self.concurrency)
        self.client.start()
        self.bindings = BindingPool(loop, self.options.binding_workers, self.wake, self.metrics)
        self._keep_raw = self._keep_raw_objects()
        cache = Cache(keep_raw_objects=self._keep_raw)
        hub = HandleHub(cache, clock, self.client)
        scheduler = new_scheduler(self.config, self.client, clock, self.registry, on_attempt=self.options.on_attempt,
                                  run_binding=self.bindings, hub=hub, metrics=self.metrics,
                                  direct_binder=self.bindings.direct(self.client.bind_async, self.concurrency))
        self.scheduler = scheduler
        if self.metrics is not None:
            self.metrics.set_cache_size_source(lambda: cache_sizes(cache))
        page, watch_list = self.options.page_size, self.options.watch_list
        self.informers = [
            Informer(self.api, Resource("/api/v1/nodes", "Node"), self._node_parser(), NodeEvents(scheduler, self.wake),
                     page_size=page, watch_list=watch_list, name="nodes"),
            Informer(self.api, Resource("/api/v1/namespaces", "Namespace"), parse_namespace,
                     NamespaceEvents(scheduler, self.wake), page_size=page, watch_list=watch_list, name="namespaces"),
        ]
        for store in hub.object_stores.all():  # Services, ReplicaSets, ... and the kinds plugins asked for
            plural = store.plural
            self.informers.append(Informer(
                self.api, Resource(collection_path(store.api_version, plural), store.kind), _identity,
                ObjectEvents(store, self.wake, self.metrics), page_size=page, watch_list=watch_list, name=plural))
        if scheduler.generic_workload:  # upstream's PodGroup informer exists only with GenericWorkload
            self.informers.append(pod_group_informer(self.api, scheduler, self.wake, self.metrics,
                                                     page_size=page, watch_list=watch_list))
        # Pods last: their handlers find the nodes already in the cache.
        self.informers.append(Informer(
            self.api, Resource("/api/v1/pods", "Pod", field_selector=POD_FIELD_SELECTOR), self._parse_pod,
            PodEvents(scheduler, self.wake), page_size=page, watch_list=watch_list, name="pods"))
        return scheduler

    def _parse_pod(self, raw: dict[str, object]) -> PodInfo:
        """The pod as the scheduler keeps it; its limits noted aside (bound pods lose their
        document in the cache unless a plugin needs it, ``/metrics/resources`` reports them)."""
        pod = _parse_pod(raw, self._keep_raw)
        parts = limit_parts(raw)  # parsed at scrape time only: parsing quantities costs
        if parts is not None:
            self.pod_limits[pod.uid] = parts
        return pod

    def pods_with_limits(self) -> list[tuple[PodInfo, Mapping[str, float]]]:
        """Every pod the scheduler holds, pending or bound, with its limits (``/metrics/resources``)."""
        s = self.scheduler
        if s is None:
            return []
        pods = [*s.pods.values(), *s.cache.pods()]
        live = {pod.uid for pod in pods}
        for uid in [uid for uid in self.pod_limits if uid not in live]:  # pods gone since the last scrape
            del self.pod_limits[uid]
        return [(pod, limits_of(self.pod_limits[pod.uid]) if pod.uid in self.pod_limits else _NO_LIMITS)
                for pod in pods]

    def wake(self) -> None:
        if self._wake is not None:
            self._wake.set()

    # -- readiness ------------------------------------------------------------------
    def synced(self) -> bool:
        return bool(self.informers) and all(i.has_synced() for i in self.informers)

    async def wait_synced(self) -> None:
        await asyncio.gather(*(i.wait_synced() for i in self.informers))

    def start_informers(self) -> list[asyncio.Task[None]]:
        return [asyncio.get_running_loop().create_task(i.run(), name=f"informer-{i.name}") for i in self.informers]

    # -- scheduling ---------------------------------------------------------------------
    async def schedule(self) -> None:
        """Schedule until cancelled or ``stop_scheduling`` (leadership lost)."""
        assert self.scheduler is not None and self._wake is not None
        s, queue, wake = self.scheduler, self.scheduler.queue, self._wake
        self._leading = True
        log.info("scheduling started", extra={"profiles": ",".join(s.profiles)})
        cleaned = s.clock.now()
        room = self.event_room
        if self.bindings is not None:
            self.bindings.room = room  # binding completions record events too: they wait alike
        while self._leading:
            if room is not None and not room.has_room():
                await room.room()  # the event writer is far behind: wait rather than drop events
                continue
            queue.run_due_flushes()
            if s.clock.now() - cleaned >= _CLEAN_ASSUMED_PERIOD:
                cleaned = s.clock.now()
                for pod in s.cache.cleanup_assumed_pods(cleaned):
                    log.info("assumed pod expired", extra={"pod": pod.key, "node": pod.node_name})
            ran = 0
            while ran < _CYCLES_PER_TURN and self._leading and queue.has_ready():
                s.schedule_one()
                ran += 1
            self.cycles += ran
            if ran:
                await asyncio.sleep(0)  # let watch events and binding completions in
                continue
            s.expire_waiting_pods()
            if queue.has_ready():
                continue
            wake.clear()
            try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation
                async with asyncio.timeout(self._idle_timeout(s)):
                    await wake.wait()
            except TimeoutError:
                pass

    def _idle_timeout(self, s: Scheduler) -> float:
        now = s.clock.now()
        until = _IDLE_WAIT
        wakeup = s.queue.next_wakeup()
        if wakeup is not None:
            until = min(until, wakeup - now)
        deadline = s.waiting_pods.next_deadline()
        if deadline is not None:
            until = min(until, deadline - now)
        return max(until, 0.001)

    def stop_scheduling(self) -> None:
        """Leadership lost: no new cycle starts (the one running, if any, is the caller's)."""
        self._leading = False
        self.wake()

    async def close(self, drain_timeout: float = 5.0) -> None:
        if self.bindings is not None:
            self.bindings.drop_unsent()
            await self.bindings.drain(drain_timeout)
            self.bindings.shutdown()
        if self.client is not None:
            await self.client.stop()


def cache_sizes(cache: Cache) -> dict[str, int]:
    """``scheduler_cache_size``: nodes, pods and assumed pods in the cache."""
    assumed = sum(1 for pod in cache.pods() if cache.is_assumed(pod))  # read at scrape time only
    return {"nodes": len(cache.node_names()), "pods": cache.pod_count, "assumed_pods": assumed}


def _identity(raw: dict[str, object]) -> dict[str, object]:
    return raw

