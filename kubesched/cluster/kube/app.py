"""``kubesched run`` as a process: connection, endpoints, informers, leader election, scheduling.

The order is kube-scheduler's ``app.Run``: the event broadcaster and the health and
metrics endpoints start first, then the informers; once they have synced the process
either schedules at once (``--leader-elect=false``) or campaigns for the Lease and
schedules while it holds it. Losing the Lease ends the process with status 1, as
upstream does, so that a supervisor restarts it as a fresh candidate; SIGTERM ends it
with status 0 after releasing the Lease.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import ssl
import uuid
from dataclasses import dataclass, field
from urllib.parse import urlsplit
from typing import Callable, Coroutine

from ... import __version__
from ...framework.config import SchedulerConfig, versioned_config
from ...framework.features import DEFAULT_FEATURES
from ...framework.registry import Registry
from ...objects.pod import PodInfo
from ...scheduler.metrics import SchedulerMetrics
from .claim_metrics import ClaimMetrics
from .client import ApiClient
from .collector import CollectorSchedule
from .connection import Connection
from .driver import LiveOptions, LiveScheduler
from .endpoints import Endpoints
from .errors import ApiError
from .concurrency import MOST, ConcurrencyLimit
from .events import EventBroadcaster, ObjectRef
from .lease_events import LeaseEventRecorder
from .leader import LeaderElector
from .live_metrics import POD_BINDING, POD_STATUS_PATCH, EventWriterStats, LiveMetrics
from .pod_group_status import register_pod_group_status_metrics
from .pod_groups import pod_group_api_problem
from .pod_resources import resources_exposition
from .zpages import ZPages
from .pod_meta import pod_resource_version

__all__ = ["RunSettings", "StartupError", "run_scheduler", "default_identity", "check_access"]

log = logging.getLogger("kubesched.run")

EXIT_OK = 0
EXIT_FAILED = 1


class StartupError(Exception):
    """kubesched cannot start: the message is one line naming the cause."""


@dataclass(slots=True)
class RunSettings:
    config: SchedulerConfig
    connection: Connection
    registry: Registry | None = None
    bind_address: str = "0.0.0.0"
    port: int = 10251
    tls: ssl.SSLContext | None = None
    identity: str = ""
    startup_timeout: float = 30.0  # how long an unreachable API server is retried before giving up
    options: LiveOptions = field(default_factory=LiveOptions)
    flags: dict[str, str] = field(default_factory=dict)  # the command line, for /flagz


def default_identity() -> str:
    """kube-scheduler's leader-election identity: the host name and a unique suffix."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class _PodEvents:
    """The scheduler's pod events into the events.k8s.io/v1 broadcaster."""

    def __init__(self, broadcaster: EventBroadcaster) -> None:
        self._broadcaster = broadcaster

    def pod_event(self, pod: PodInfo, event_type: str, reason: str, action: str, note: str) -> None:
        # GetReference(pod): with the resourceVersion the scheduler last saw.
        regarding = ObjectRef(kind="Pod", namespace=pod.namespace, name=pod.name, uid=pod.uid, api_version="v1",
                              resource_version=pod_resource_version(pod))
        self._broadcaster.record(regarding, None, event_type, reason, action, note,
                                 reporting_controller=pod.scheduler_name)


async def check_access(api: ApiClient, server: str, timeout: float) -> None:
    """Fail early, in one line, when the API server can't be reached or refuses us; an API
    server that is still starting is retried for ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.5
    while True:
        try:
            await api.request("GET", "/api/v1/pods", params={"limit": "1"}, timeout=10.0)
            await api.request("GET", "/api/v1/nodes", params={"limit": "1"}, timeout=10.0)
            return
        except ApiError as err:
            if err.is_unauthorized():
                raise StartupError(f"the API server at {server} rejected the credentials (401 Unauthorized): "
                                   "the token or certificate is invalid or expired") from None
            if err.is_forbidden():
                raise StartupError(f"forbidden by the API server's RBAC: {err.message} "
                                   "(bind the scheduler's account to system:kube-scheduler; see deploy/)") from None
            if not (err.is_transport() or err.status >= 500 or err.is_too_many_requests()):
                raise StartupError(f"the API server at {server} answered {err.status} {err.reason}: {err.message}") from None
            if loop.time() + delay > deadline:
                raise StartupError(f"cannot reach the API server at {server}: {err.message}") from None
            log.warning("waiting for the API server", extra={"server": server, "err": err.message})
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


async def run_scheduler(settings: RunSettings, *, stop: asyncio.Event | None = None,
                        started: Callable[[LiveScheduler], None] | None = None) -> int:
    """Run until SIGTERM/SIGINT or ``stop`` (0) or the Lease is lost (1); ``StartupError`` when
    it can't start. ``started`` is handed the scheduler once it is built (for embedding)."""
    config = settings.config
    identity = settings.identity or default_identity()
    metrics = SchedulerMetrics()
    live_metrics = LiveMetrics(metrics.registry, urlsplit(settings.connection.server).netloc)
    # Three clients, as kube-scheduler has: the scheduler's (informers, binds, status), the
    # events' and the Lease's, each with its own QPS budget so neither starves the others.
    # The events' and the Lease's requests each have connections of their own (client-go's
    # share one HTTP/2 connection, where no request waits for another's turn), so a backlog
    # of binds delays neither an event nor a renewal.
    async with ApiClient(settings.connection) as api, \
            ApiClient(settings.connection, max_connections=MOST) as events_api, \
            ApiClient(settings.connection) as lease_api:
        for client in (api, events_api, lease_api):
            client.observer = live_metrics.rest
        await check_access(api, settings.connection.server, settings.startup_timeout)
        features = settings.registry.features if settings.registry is not None else DEFAULT_FEATURES
        if features.enable_generic_workload:  # upstream would wait for a PodGroup informer that never syncs
            problem = await pod_group_api_problem(api, settings.connection.server, settings.startup_timeout)
            if problem is not None:
                raise StartupError(problem)
        # Binds, event writes and status patches are scaled together (concurrency.py).
        concurrency = ConcurrencyLimit()
        broadcaster = EventBroadcaster(events_api, qps=0,  # the events client does the throttling
                                       high_water=settings.options.events_high_water, concurrency=concurrency)
        live = LiveScheduler(config, api, _PodEvents(broadcaster), registry=settings.registry,
                             options=settings.options, metrics=metrics, concurrency=concurrency)
        live.build()
        live.event_room = broadcaster
        _instrument(live, broadcaster, live_metrics)
        if started is not None:
            started(live)
        le = config.leader_election
        elector = None
        lease_events: LeaseEventRecorder | None = None
        if le.leader_elect:
            # The first profile's scheduler name is the source, as kube-scheduler's legacy recorder has it.
            recorder = lease_events = LeaseEventRecorder(
                events_api, config.profiles[0].scheduler_name if config.profiles else "default-scheduler",
                namespace=le.resource_namespace, name=le.resource_name)
            elector = LeaderElector(lease_api, namespace=le.resource_namespace, name=le.resource_name, identity=identity,
                                    lease_duration=le.lease_duration, renew_deadline=le.renew_deadline,
                                    retry_period=le.retry_period,
                                    on_lease_event=lambda message: recorder.record(
                                        message, elector.lease if elector is not None else None))
        endpoints = Endpoints(metrics, live_checks=_live_checks(elector),
                              ready_checks={"sched-handler-sync": live.synced},
                              resources=resources_exposition(live.pods_with_limits),
                              zpages=ZPages(lambda: versioned_config(config), flags=settings.flags,
                                            binary_version=__version__))
        try:
            await endpoints.start(settings.bind_address, settings.port, settings.tls)
        except OSError as err:
            raise StartupError(f"cannot serve health and metrics on {settings.bind_address}:{settings.port}: "
                               f"{err.strerror or err}") from None
        log.info("serving health and metrics", extra={"address": f"{settings.bind_address}:{endpoints.port}"})
        events_task = asyncio.create_task(broadcaster.run(), name="events")
        tasks: list[asyncio.Task[None]] = []
        stop = stop if stop is not None else asyncio.Event()
        # delayCacheUntilActive: a standby replica fills its caches only once it leads.
        delay_caches = elector is not None and config.delay_cache_until_active

        loop = asyncio.get_running_loop()
        collector = CollectorSchedule(loop)

        async def sync_informers() -> None:
            tasks.extend(live.start_informers())
            await collector.sync(_until(stop, live.wait_synced()))
            if not stop.is_set():
                collector.start()
                log.info("informers synced", extra={"informers": len(live.informers)})

        outcome = {"code": EXIT_OK}
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, stop.set)
            except (NotImplementedError, RuntimeError):  # not the main thread (tests run it in one)
                pass
        try:
            if not delay_caches:
                await sync_informers()
                if stop.is_set():
                    return EXIT_OK
            if elector is None:
                await _until(stop, live.schedule())
            else:
                def lost() -> None:
                    if not stop.is_set():
                        log.error("leaderelection lost", extra={"lease": f"{le.resource_namespace}/{le.resource_name}"})
                        outcome["code"] = EXIT_FAILED
                    live.stop_scheduling()
                    stop.set()

                def new_leader(holder: str) -> None:
                    log.info("new leader elected", extra={"leader": holder})

                async def lead() -> None:
                    if delay_caches:
                        await sync_informers()
                    await live.schedule()

                await _until(stop, elector.run(lead, lost, new_leader))
            return outcome["code"]
        finally:
            collector.stop()
            live.stop_scheduling()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await live.close()  # bindings under way finish, and record their events
            await broadcaster.shutdown(settings.options.events_grace)
            events_task.cancel()
            await asyncio.gather(events_task, return_exceptions=True)  # counts and logs what is left
            if lease_events is not None:
                await lease_events.drain()  # "stopped leading", written before the clients close
            await endpoints.stop()


def _instrument(live: LiveScheduler, broadcaster: EventBroadcaster, live_metrics: LiveMetrics) -> None:
    """The background work's metrics: status patches and binds (the API dispatcher's), events,
    DynamicResources' claim creations and binding-condition waits."""
    client, bindings = live.client, live.bindings
    assert client is not None and bindings is not None
    features = live.registry.features if live.registry is not None else DEFAULT_FEATURES
    claim_metrics = ClaimMetrics(live_metrics.registry, features)
    if features.enable_generic_workload:
        register_pod_group_status_metrics(live_metrics.registry, client.pod_group_status)
    client.on_claim_created = claim_metrics.claim_created
    client.on_binding_conditions = claim_metrics.binding_conditions
    calls = live_metrics.async_calls
    client.on_call = calls.executed
    calls.set_pending_source(POD_STATUS_PATCH, lambda: client.pending_status_patches)
    calls.set_pending_source(POD_BINDING, lambda: bindings.in_flight)
    stats = broadcaster.stats
    live_metrics.watch_events(EventWriterStats(recorded=lambda: stats.recorded, written=lambda: stats.written,
                                               dropped=lambda: stats.dropped, queued=lambda: broadcaster.backlog))


async def _until(stop: asyncio.Event, work: Coroutine[object, object, object]) -> None:
    """Run ``work`` until it ends or ``stop`` is set (then cancel it and wait for it to unwind)."""
    task = asyncio.ensure_future(work)
    stopper = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in (task, stopper):
            if not t.done():
                t.cancel()
        await asyncio.gather(task, stopper, return_exceptions=True)
    if task.done() and not task.cancelled():
        error = task.exception()
        if error is not None:
            raise error


def _live_checks(elector: LeaderElector | None) -> dict[str, Callable[[], bool | str]]:
    if elector is None:
        return {}
    return {"leaderElection": elector.healthz_check(timeout=20.0)}
