"""Assembling a scheduler from a configuration: cache, profiles, queue, algorithm."""

from __future__ import annotations

from typing import Any, Callable

from ..cache.cache import Cache
from ..clock import Clock
from ..framework.config import SchedulerConfig
from ..framework.handle import FrameworkHandle
from ..framework.waiting_pods import WaitingPods
from ..framework.profile import build_profiles
from ..framework.registry import Registry
from ..framework.runtime import Framework
from ..objects.pod import PodInfo
from ..plugins.registry import in_tree_registry
from ..queue.scheduling_queue import QueueConfig, SchedulingQueue
from .algorithm import Algorithm
from .scheduler import Attempt, ClusterClient, Scheduler

__all__ = ["new_scheduler"]


def _hints(profiles: dict[str, Framework]) -> dict[str, list]:
    """Per profile, every plugin's (event, plugin, hint) registrations."""
    out: dict[str, list] = {}
    for name, fwk in profiles.items():
        registrations = []
        for plugin_name, plugin in fwk.instances.items():
            register = getattr(plugin, "events_to_register", None)
            if register is None:
                continue
            for event, hint in register():
                registrations.append((event, plugin_name, hint))
        out[name] = registrations
    return out


def new_scheduler(
    config: SchedulerConfig,
    client: ClusterClient,
    clock: Clock,
    registry: Registry | None = None,
    tie_break: str = "random",
    seed: int | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    run_binding: Callable | None = None,
    informers: Any = None,
) -> Scheduler:
    registry = registry or in_tree_registry()
    cache = Cache()
    waiting_pods = WaitingPods()
    handle = FrameworkHandle(cache, clock, binder=client.bind, informers=informers, waiting_pods=waiting_pods)
    profiles = build_profiles(config, registry, handle)

    def pre_enqueue(pod: PodInfo):
        fwk = profiles.get(pod.scheduler_name)
        return fwk.run_pre_enqueue(pod) if fwk is not None else None

    first = next(iter(profiles.values()))
    queue = SchedulingQueue(
        clock,
        less=first.queue_sort,
        config=QueueConfig(config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds),
        pre_enqueue=pre_enqueue,
        hints=_hints(profiles),
    )
    algorithm = Algorithm(config.percentage_of_nodes_to_score, tie_break, seed)
    return Scheduler(profiles, cache, queue, algorithm, client, clock, on_attempt, run_binding, waiting_pods)
