"""Assembling a scheduler from a configuration: cache, profiles, queue, algorithm."""

from __future__ import annotations

from typing import Callable

from ..cache.cache import Cache
from ..clock import Clock
from ..framework.config import SchedulerConfig, needs_raw_objects
from ..framework.events import WILDCARD_EVENT, ClusterEvent
from ..framework.handle import ClusterClient
from ..framework.interfaces import EnqueueExtensions
from ..framework.profile import build_profiles
from ..framework.registry import Registry
from ..framework.runtime import Framework
from ..framework.status import Status
from ..objects.pod import PodInfo
from ..plugins.registry import in_tree_registry
from ..queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE, HintRegistration, QueueConfig, SchedulingQueue
from .algorithm import Algorithm
from .extender import EXTENDER_NAME, build_extenders
from .handle import HandleHub
from .metrics import SchedulerMetrics
from .scheduler import Attempt, BindingRunner, DirectBinder, Scheduler

__all__ = ["new_scheduler"]

# The methods of the extension points whose plugins can reject a pod.
_REJECTING_METHODS = ("pre_enqueue", "pre_filter", "filter", "filter_nodes", "reserve", "permit")


def _hints(profiles: dict[str, Framework], extenders: bool = False) -> dict[str, list[HintRegistration]]:
    """Per profile, every plugin's (event, plugin, hint) registrations; with extenders, upstream's
    default registration for ``Extender``: pods extenders rejected retry on any event.

    A plugin that can reject pods (PreEnqueue, PreFilter, Filter, Reserve, Permit) but
    declares no events gets upstream's ``defaultEnqueueExtension``: every event may help.
    """
    out: dict[str, list[HintRegistration]] = {}
    for name, fwk in profiles.items():
        registrations: list[HintRegistration] = []
        for plugin_name, plugin in fwk.instances.items():
            if not isinstance(plugin, EnqueueExtensions):
                if any(callable(getattr(plugin, m, None)) for m in _REJECTING_METHODS):
                    registrations.append((WILDCARD_EVENT, plugin_name, None))
                continue
            for registration in plugin.events_to_register():
                registrations.append((registration.event, plugin_name, registration.hint))
        if extenders:
            registrations.append((WILDCARD_EVENT, EXTENDER_NAME, None))
        out[name] = registrations
    return out


def _evaluation_source(frameworks: list[Framework]) -> Callable[[], dict[tuple[str, str, str], int]]:
    """plugin_evaluation_total's samples, read at scrape time from every profile's counts."""
    def evaluations() -> dict[tuple[str, str, str], int]:
        return {(plugin, point, fwk.profile_name): count for fwk in frameworks
                for (plugin, point), count in fwk.evaluation_counts().items()}

    return evaluations


def new_scheduler(
    config: SchedulerConfig,
    client: ClusterClient,
    clock: Clock,
    registry: Registry | None = None,
    tie_break: str = "heap",
    seed: int | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    run_binding: BindingRunner | None = None,
    hub: HandleHub | None = None,
    metrics: SchedulerMetrics | None = None,
    direct_binder: DirectBinder | None = None,
) -> Scheduler:
    """A scheduler with one framework per profile. ``hub`` lets a driver share object
    stores it feeds (the live informers); by default a fresh one is made."""
    registry = registry or in_tree_registry()
    extenders, config = build_extenders(config)  # may set NodeResourcesFit's ignoredResources
    cache = hub.cache if hub is not None else Cache(keep_raw_objects=needs_raw_objects(config, registry))
    hub = hub if hub is not None else HandleHub(cache, clock, client)
    hub.features = registry.features
    if registry.features.enable_generic_workload:
        hub.enable_pod_groups()
    profiles = build_profiles(config, registry, hub.handle)

    def pre_enqueue(pod: PodInfo) -> Status | None:
        fwk = profiles.get(pod.scheduler_name)
        return fwk.run_pre_enqueue(pod) if fwk is not None else None

    first = next(iter(profiles.values()))
    queue = SchedulingQueue(
        clock,
        less=first.queue_sort,
        config=QueueConfig(config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds,
                           pod_groups=registry.features.enable_generic_workload),
        pre_enqueue=pre_enqueue,
        hints=_hints(profiles, bool(extenders)),
    )
    hub.activate = queue.activate

    def object_changed(event: ClusterEvent, old: object | None, new: object | None) -> None:
        queue.move_all_to_active_or_backoff(event, old, new)

    hub.object_stores.set_sink(object_changed)
    algorithm = Algorithm(config.percentage_of_nodes_to_score, tie_break, seed, extenders,
                          batching=registry.features.enable_opportunistic_batching)
    if metrics is not None:
        if registry.features.enable_generic_workload:
            metrics.enable_pod_groups()
        queue.on_incoming = metrics.incoming
        queue.observe_hints(metrics.queueing_hint)

        def pending() -> dict[str, int]:  # upstream's pending_pods labels
            counts = queue.counts()
            return {"active": counts[ACTIVE], "backoff": counts[BACKOFF], "unschedulable": counts[UNSCHEDULABLE],
                    "gated": counts["gated"]}

        metrics.set_pending_source(pending)
        metrics.set_unschedulable_source(queue.unschedulable_by_plugin)
        for fwk in profiles.values():
            fwk.observe_point = metrics.extension_point_observer(fwk.profile_name)
            fwk.observe_plugin = metrics.plugin
            fwk.plugin_evaluations = {}
        metrics.set_plugin_evaluation_source(_evaluation_source(list(profiles.values())))
    return Scheduler(profiles, cache, queue, algorithm, client, clock, on_attempt, run_binding, hub, metrics,
                     direct_binder)
