"""``run_replay``: a trace through kubesched's scheduler on a virtual clock.

The scheduler is the one ``simulate`` runs (``new_scheduler`` over a
``SimulatedCluster``), with the replay's profile (``profile``); the replay plays the
API server and the workload: it adds pods as they arrive, lets the scheduler place
them, delivers the bindings, and deletes pods as they leave.

* ``fgd`` mode: each arriving pod gets one scheduling attempt; a pod that does not fit
  is dropped (deleted), as in the paper's simulator.
* ``timeline`` mode: the virtual clock follows the trace. A pod that does not fit
  waits, as in a cluster, and is retried when a departure may have made room (the
  plugins' queueing hints), after its backoff; the five-minute retry of pods nothing
  woke is left out, since in a replay only departures change the cluster.

After each arrival the GPU requested so far is compared with the levels; at each
level reached the cluster's GPU allocation and fragmentation are recorded.
"""

from __future__ import annotations

import dataclasses
import gc
import random
import time
from typing import Callable

import numpy as np

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.framework import Registry
from kubesched.framework.config import SchedulerConfig
from kubesched.objects import Node, PodInfo
from kubesched.plugins.gpushare import GPU_SHARE, FragmentationModel, typical_pods
from kubesched.plugins.gpushare.share import GpuShare
from kubesched.scheduler.factory import new_scheduler

from .arrivals import ARRIVE, fgd_arrivals, timeline_events
from .event_log import EventLog
from .events import SeriesPoint
from .profile import SCHEDULER_NAME, replay_config, replay_registry
from .spec import LevelPoint, ReplayResult, ReplaySpec, default_levels, plugin_name, policy_name
from .trace import Trace, load_trace

__all__ = ["Progress", "run_replay"]

Progress = Callable[[int, int], None]
"""``progress(pods arrived, pods to arrive)``, called as the replay goes."""
_PROGRESS_EVERY = 64


def run_replay(spec: ReplaySpec, progress: Progress | None = None, record: bool = False) -> ReplayResult:
    """Replay ``spec``; deterministic for its seed. Raises ``TraceError`` for a bad trace.

    ``record``: also keep every pod's events and the cluster after each event against
    virtual time (``ReplayResult.pod_events`` and ``series``; see ``events``)."""
    started = time.perf_counter()
    trace = load_trace(spec.nodes, spec.pods, need_times=spec.mode == "timeline")
    typical = typical_pods(p.shape for p in trace.pods)
    registry = replay_registry()
    config = replay_config(plugin_name(spec.policy), spec.seed, typical, registry)
    capacity = trace.gpu_capacity_milli
    log = EventLog(capacity) if record else None
    world = _World(_ordered(trace.nodes, spec), config, registry, spec, log)
    result = ReplayResult(spec, policy_name(spec.policy), trace.name, len(trace.nodes), capacity / 1000)
    freeze = gc.isenabled()
    if freeze:  # the cluster lives as long as the replay: keep the collector off it
        gc.freeze()
    try:
        if spec.mode == "fgd":
            levels = spec.levels or default_levels(spec.arrival)
            recorder = _Recorder(world, FragmentationModel(typical), capacity, levels, result)
            _replay_fgd(trace, spec, world, recorder, progress)
        else:
            end = sum(p.gpu_milli for p in trace.pods) / capacity if capacity else 1.0
            levels = spec.levels or default_levels(round(end, 2) if end else 1.0)
            recorder = _Recorder(world, FragmentationModel(typical), capacity, levels, result)
            _replay_timeline(trace, world, recorder, progress)
        recorder.finish()
        if spec.mode == "timeline":  # the end state: after the trace's final departures
            result.end = recorder.point(recorder.arrived_milli / capacity if capacity else 0.0)
    finally:
        if freeze:
            gc.unfreeze()
    result.pods_arrived, result.pods_scheduled = recorder.arrived_pods, world.scheduled
    result.pods_failed, result.attempts = world.failed, world.attempts
    if log is not None:
        world.observe("end")
        result.pod_events, result.series = list(log.pods.values()), log.series
    result.seconds = time.perf_counter() - started
    return result


def _ordered(nodes: tuple[Node, ...], spec: ReplaySpec) -> list[Node]:
    """The trace's nodes; with ties broken by name, renamed ``NNNN-<name>`` after a seeded
    random permutation, as the paper's simulator does: ties go to the first node in an
    order random per seed, not always to the same nodes."""
    if spec.tie_break != "name":
        return list(nodes)
    order = list(range(len(nodes)))
    random.Random(f"nodes-{spec.seed}").shuffle(order)
    width = max(4, len(str(len(nodes))))
    return [dataclasses.replace(node, name=f"{rank:0{width}d}-{node.name}") for node, rank in zip(nodes, order)]


def _trace_name(node: str, spec: ReplaySpec) -> str:
    """The trace's name of a node ``_ordered`` renamed."""
    return node.split("-", 1)[1] if spec.tie_break == "name" else node


class _World:
    """The scheduler, the simulated API server and the pods in the cluster."""

    def __init__(self, nodes: list[Node], config: SchedulerConfig, registry: Registry, spec: ReplaySpec,
                 log: EventLog | None = None) -> None:
        self.clock = VirtualClock()
        self.cluster = SimulatedCluster(self.clock)
        self.spec = spec
        self.log = log
        self.scheduler = new_scheduler(config, self.cluster, self.clock, registry, tie_break=spec.tie_break, seed=spec.seed,
                                       on_attempt=log.attempted if log is not None else None)
        for node in nodes:
            self.scheduler.on_node_add(node)
        plugin = self.scheduler.profiles[SCHEDULER_NAME].plugin(GPU_SHARE)
        if not isinstance(plugin, GpuShare):
            raise TypeError(f"the replay profile has no {GPU_SHARE} plugin")
        self.gpu = plugin
        self.pending: dict[str, PodInfo] = {}
        self.bound: dict[str, PodInfo] = {}
        self.scheduled = 0  # pods that were bound, whether they left since or not
        self.failed = 0  # pods dropped (fgd) or gone before they were ever bound (timeline)
        self.attempts = 0

    def add(self, pod: PodInfo, gpu_milli: int = 0) -> None:
        self.pending[pod.uid] = pod
        if self.log is not None:
            self.log.arrived(pod, gpu_milli, self.clock.now())
        self.scheduler.on_pod_add(pod)

    def drain(self) -> bool:
        """Schedule every pod that is ready, delivering each binding as the informer would;
        whether any pod was bound."""
        scheduler = self.scheduler
        any_bound = False
        while scheduler.queue.has_ready():
            scheduler.schedule_one()
            self.attempts += 1
            for bound in self.cluster.take_updates():
                self.pending.pop(bound.uid, None)
                self.bound[bound.uid] = bound
                self.scheduled += 1
                any_bound = True
                if self.log is not None:
                    placement = self.gpu.devices.placements.get(bound.uid)
                    self.log.bound(bound.uid, self.clock.now(), _trace_name(bound.node_name, self.spec),
                                   placement.devices if placement is not None else ())
                scheduler.on_pod_update(None, bound)
        return any_bound

    def remove(self, uid: str, why: str = "") -> None:
        """The pod leaves: deleted from the cluster if bound, from the queue if pending
        (``why``: the failure the event log gives a pod that never ran)."""
        pod = self.bound.pop(uid, None)
        was_bound = pod is not None
        if pod is None:
            pod = self.pending.pop(uid, None)
            if pod is None:
                return
            self.failed += 1
        if self.log is not None:
            self.log.left(uid, self.clock.now(), was_bound, why)
        self.scheduler.on_pod_delete(pod)

    def observe(self, event: str) -> None:
        """A point of the recorded series: the cluster now (nothing without ``record``)."""
        log = self.log
        if log is None:
            return
        table = self.scheduler.cache.table
        rows = np.asarray(table.order, dtype=np.int64)
        cpu_total = int(table.alloc_cpu[rows].sum())
        allocated = self.gpu.devices.allocated_milli()
        log.series.append(SeriesPoint(
            time=self.clock.now(), event=event, pods_arrived=len(log.pods), pods_running=log.running,
            pods_pending=log.pending, pods_failed=log.failed, allocated_gpus=allocated / 1000,
            gpu_allocation_ratio=allocated / log.capacity if log.capacity else 0.0,
            cpu_allocation_ratio=int(table.req_cpu[rows].sum()) / cpu_total if cpu_total else 0.0,
            arrived_gpu_ratio=log.arrived_milli / log.capacity if log.capacity else 0.0,
        ))

    def settle(self, until: float) -> None:
        """Retry backing-off pods as their backoff ends, up to virtual time ``until``."""
        queue = self.scheduler.queue
        while queue.backoff_count():
            wake = queue.next_wakeup()
            if wake is None or wake > until or wake <= self.clock.now():
                return
            self.clock.advance_to(wake)
            queue.run_due_flushes()
            if self.drain():
                self.observe("retry")


class _Recorder:
    """Counts arrived GPU and records a ``LevelPoint`` at each level it reaches."""

    def __init__(self, world: _World, model: FragmentationModel, capacity: int, levels: tuple[float, ...],
                 result: ReplayResult) -> None:
        self.world, self.model, self.capacity, self.result = world, model, capacity, result
        self.levels = sorted(levels)
        self.next = 0
        self.arrived_milli = 0
        self.arrived_pods = 0

    def arrived(self, gpu_milli: int) -> None:
        self.arrived_milli += gpu_milli
        self.arrived_pods += 1
        while self.next < len(self.levels) and self.arrived_milli >= self.levels[self.next] * self.capacity - 1e-6:
            self.record(self.levels[self.next])
            self.next += 1

    def finish(self) -> None:
        """The end of the replay stands for every level not reached yet (fgd stops just
        short of its target); a replay that reached them all gets one last point."""
        if self.next >= len(self.levels):
            if not self.result.points or self.result.points[-1].arrived * self.capacity < self.arrived_milli - 1e-6:
                self.record(self.arrived_milli / self.capacity if self.capacity else 0.0)
            return
        for level in self.levels[self.next:]:
            self.record(level)
        self.next = len(self.levels)

    def record(self, level: float) -> None:
        self.result.points.append(self.point(level))

    def point(self, level: float) -> LevelPoint:
        """The cluster now, as the point of ``level``."""
        world = self.world
        table = world.scheduler.cache.table
        devices = world.gpu.devices
        devices.sync(table)
        rows = np.asarray(table.order, dtype=np.int64)
        left = np.asarray(table.alloc_cpu[rows] - table.req_cpu[rows], dtype=np.int64)
        stats = self.model.stats(devices.free[rows])
        fragmentation = float(self.model.fragmentation(stats, left, self.model.access(table)[rows]).sum())
        idle = int(stats.total.sum())
        allocated = self.capacity - idle
        return LevelPoint(
            level=level,
            arrived=self.arrived_milli / self.capacity if self.capacity else 0.0,
            allocation_ratio=allocated / self.capacity if self.capacity else 0.0,
            allocated_gpus=allocated / 1000,
            unallocated_gpus=idle / 1000,
            fragmentation_gpus=fragmentation / 1000,
            fragmentation_ratio=fragmentation / idle if idle else 0.0,
            pods_arrived=self.arrived_pods,
            pods_scheduled=world.scheduled,
            pods_failed=world.failed,
            time=world.clock.now(),
        )


def _replay_fgd(trace: Trace, spec: ReplaySpec, world: _World, recorder: _Recorder, progress: Progress | None) -> None:
    arrivals = fgd_arrivals(trace.pods, trace.gpu_capacity_milli, spec.arrival, random.Random(spec.seed))
    total = len(arrivals)
    for done, arrival in enumerate(arrivals, start=1):
        pod = arrival.pod.info.copy_with(name=arrival.name, uid=arrival.name)
        world.add(pod, arrival.pod.gpu_milli)
        world.drain()
        if pod.uid in world.pending:  # did not fit: dropped, never retried
            world.remove(pod.uid, "dropped: did not fit when it arrived")
        world.observe("arrival")
        recorder.arrived(arrival.pod.gpu_milli)
        if progress is not None and (done % _PROGRESS_EVERY == 0 or done == total):
            progress(done, total)


def _replay_timeline(trace: Trace, world: _World, recorder: _Recorder, progress: Progress | None) -> None:
    events = timeline_events(trace.pods)
    total = len(trace.pods)
    done = 0
    for i, (when, kind, index) in enumerate(events):
        world.clock.advance_to(when)
        world.scheduler.queue.flush_backoff_completed()
        pod = trace.pods[index]
        if kind == ARRIVE:
            world.add(pod.info, pod.gpu_milli)
        else:
            world.remove(pod.info.uid, "left before it was scheduled")
        world.drain()
        world.observe("arrival" if kind == ARRIVE else "departure")
        following = events[i + 1][0] if i + 1 < len(events) else float("inf")
        world.settle(until=following)
        if kind == ARRIVE:
            recorder.arrived(pod.gpu_milli)
            done += 1
            if progress is not None and (done % _PROGRESS_EVERY == 0 or done == total):
                progress(done, total)
    world.failed += len(world.pending)  # still waiting when the trace ended
    if world.log is not None:
        world.log.still_pending()
