"""The simulated cluster: a snapshot in memory, a virtual clock, and the loop that drives the scheduler.

``SimulatedCluster`` plays the API server's part for the scheduler: it accepts
bindings, records events and pod conditions, and reports each binding back as an
informer would (the pod, now bound, is delivered as an update after the binding
cycle). ``Simulation`` runs scheduling attempts until the queue settles; the clock
moves only when no pod is ready, straight to the next moment a flush could make
one ready, so a snapshot's first pass is a single pass in queue order.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable

from ..cache.object_store import ObjectStores
from ..clock import VirtualClock
from ..framework.config import SchedulerConfig
from ..framework.events import ClusterEvent
from ..framework.handle import JSONObject
from ..framework.registry import Registry
from ..objects.pod import PodInfo
from ..objects.podgroup import PodGroup, PodGroupCondition
from ..scheduler.factory import new_scheduler
from ..scheduler.fit_error import FitError
from ..scheduler.scheduler import Attempt, Scheduler
from .simulated_claims import SimulatedClaims, create_template_claims
from .snapshot import ClusterSnapshot, gc_paused

__all__ = ["SimulatedCluster", "Simulation", "SimulationResult", "PodOutcome", "LIVELOCK_ATTEMPTS_PER_POD"]

# Attempts per pending pod, with no binding or object change between them, after which a
# simulation stops as livelocked.
LIVELOCK_ATTEMPTS_PER_POD = 20


@dataclass(slots=True)
class PodOutcome:
    pod: str
    node: str | None = None
    attempts: int = 0
    message: str = ""
    scheduled_at: float | None = None
    gated: bool = False  # held back by a PreEnqueue plugin (scheduling gates): never attempted
    preempted_by: str | None = None  # placed, then evicted by this preemptor's preemption


@dataclass(slots=True)
class SimulationResult:
    outcomes: dict[str, PodOutcome]  # by pod key, in queue order of first attempt
    placements: list[tuple[str, str]]  # (pod key, node) in binding order
    virtual_seconds: float
    attempts: int
    ignored_pods: list[str] = field(default_factory=list)  # pending pods of no profile
    livelocked: bool = False  # stopped: pods kept being tried and failing with nothing binding
    preemptions: list[tuple[str, str, str]] = field(default_factory=list)  # (victim, preemptor, node) keys
    # Pod groups retried from backoffQ while activeQ was empty (SchedulerPopFromBackoffQ), with
    # how many times. Upstream retries such a failed group back to back for as long as
    # activeQ stays empty; a simulation retries it only after the cluster changed.
    group_backoff_retries: dict[str, int] = field(default_factory=dict)

    @property
    def scheduled(self) -> list[PodOutcome]:
        return [o for o in self.outcomes.values() if o.node]

    @property
    def unschedulable(self) -> list[PodOutcome]:
        return [o for o in self.outcomes.values() if not o.node and not o.gated and not o.preempted_by]

    @property
    def gated(self) -> list[PodOutcome]:
        return [o for o in self.outcomes.values() if o.gated]


class SimulatedCluster(SimulatedClaims):
    """The API server's side of the calls the scheduler makes, in memory (ResourceClaims: see
    ``SimulatedClaims``)."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.events: list[tuple[str, str, str, str]] = []  # (pod, type, reason, message)
        self.conditions: dict[str, tuple[str, str]] = {}  # pod key -> (reason, message)
        self.nominated: dict[str, str] = {}
        self.bindings: list[tuple[PodInfo, str]] = []
        self._pending_updates: list[PodInfo] = []
        # (victim, preemptor, node): the preemptor is a pod, or a PodGroup (workload-aware preemption)
        self.preemptions: list[tuple[PodInfo, PodInfo | PodGroup, str]] = []
        self._pending_deletions: list[PodInfo] = []
        self._pending_status: list[tuple[PodInfo, PodInfo]] = []  # (old, new) status-only changes
        self.bind_hook: Callable[[PodInfo, str], None] | None = None
        self.on_failure: Callable[[PodInfo, str], None] | None = None
        self.object_stores: ObjectStores | None = None  # set by Simulation: the PV controller writes there
        self.extended_claim_statuses: dict[str, JSONObject] = {}  # pod key -> extendedResourceClaimStatus
        self._pending_group_updates: list[tuple[PodGroup, PodGroup]] = []  # (old, new) PodGroups written
        self.pod_group_writes = 0  # PodGroup status writes (the PodGroupScheduled condition)

    def bind(self, pod: PodInfo, node_name: str) -> None:
        if self.bind_hook is not None:
            self.bind_hook(pod, node_name)
        # The pod handed to bind is the assumed one, already on ``node_name``: no copy needed.
        bound = pod if pod.node_name == node_name else pod.copy_with(node_name=node_name)
        self.bindings.append((bound, node_name))
        self._pending_updates.append(bound)

    def observe_binding(self, pod: PodInfo, node_name: str) -> None:
        """A binding an HTTP extender made (in a live cluster the informer would report it)."""
        bound = pod.copy_with(node_name=node_name)
        self.bindings.append((bound, node_name))
        self._pending_updates.append(bound)

    def record_event(self, pod: PodInfo, event_type: str, reason: str, message: str) -> None:
        self.events.append((pod.key, event_type, reason, message))

    def update_pod_condition(self, pod: PodInfo, reason: str, message: str, nominated_node_name: str | None) -> None:
        self.conditions[pod.key] = (reason, message)
        if self.on_failure is not None:
            self.on_failure(pod, message)
        if nominated_node_name:
            self.nominated[pod.key] = nominated_node_name

    def write_storage_objects(self, objects: list[JSONObject]) -> None:
        """PVs and claims as the PV controller and provisioners leave them after VolumeBinding's
        PreBind (``simulate`` plays their part): stored at once, each change a cluster event."""
        if self.object_stores is None:
            return
        for obj in objects:
            store = self.object_stores.find(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
            if store is not None:
                store.upsert(obj)

    def patch_pod_group_conditions(self, group: PodGroup, conditions: tuple[PodGroupCondition, ...]) -> None:
        """The PodGroupScheduled condition written (``PodGroupStatusWriter``): a condition new
        or whose status changed is stamped with the virtual clock, and the PodGroup's informer
        reports the change after the cycle."""
        stamp = _rfc3339(self.clock.now())
        stamped = tuple(c if c.last_transition_time is not None else replace(c, last_transition_time=stamp)
                        for c in conditions)
        self.pod_group_writes += 1
        self._pending_group_updates.append((group, replace(group, conditions=stamped)))

    def take_pod_group_updates(self) -> list[tuple[PodGroup, PodGroup]]:
        updates, self._pending_group_updates = self._pending_group_updates, []
        return updates

    def take_updates(self) -> list[PodInfo]:
        updates, self._pending_updates = self._pending_updates, []
        return updates

    def preempt_pod(self, victim: PodInfo, preemptor: PodInfo, node_name: str,
                    done: Callable[[bool], None] | None = None) -> None:
        """A preemption's eviction: the victim is deleted at once (no grace period on the
        virtual clock) and the deletion reported as the informer would."""
        self.preemptions.append((victim, preemptor, node_name))
        self._pending_deletions.append(victim)
        if done is not None:
            done(True)

    def preempt_pod_for_group(self, victim: PodInfo, group: PodGroup, scheduler_name: str,
                              done: Callable[[bool], None] | None = None) -> None:
        """A pod group's preemption evicts ``victim`` (deleted at once, as ``preempt_pod``); the
        node recorded is the victim's own, the group's domain being the whole cluster."""
        self.preemptions.append((victim, group, victim.node_name))
        self._pending_deletions.append(victim)
        if done is not None:
            done(True)

    def clear_nominated_node_name(self, pod: PodInfo) -> None:
        if pod.nominated_node_name:
            self._pending_status.append((pod, pod.copy_with(nominated_node_name="")))

    def take_deletions(self) -> tuple[list[tuple[PodInfo, PodInfo]], list[PodInfo]]:
        """Status changes and deletions since the last call, in the order to report them."""
        status, self._pending_status = self._pending_status, []
        deletions, self._pending_deletions = self._pending_deletions, []
        return status, deletions


class Simulation:
    """Load a snapshot into a fresh scheduler and schedule its pending pods until the queue settles."""

    def __init__(
        self,
        snapshot: ClusterSnapshot,
        config: SchedulerConfig,
        registry: Registry | None = None,
        tie_break: str = "heap",
        seed: int | None = None,
        on_attempt: Callable[[Attempt], None] | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.clock = VirtualClock()
        self.cluster = SimulatedCluster(self.clock)
        self._user_on_attempt = on_attempt
        self.cluster.on_failure = self._failed
        self.scheduler: Scheduler = new_scheduler(
            config, self.cluster, self.clock, registry, tie_break, seed, on_attempt=self._on_attempt
        )
        self.scheduler.binding_records = on_attempt is not None  # only an observer of attempts reads them
        self.outcomes: dict[str, PodOutcome] = {}
        self._changes = 0  # bumps on every binding: a retry can only differ after one
        self._scheduled = 0  # outcomes with a node, for progress reports
        self._failed_at: dict[str, int] = {}
        # The backing-off pods that failed since the last change (``_fresh_epoch`` is the
        # ``_changes`` they belong to; a change empties the set by moving past it).
        self._fresh: set[str] = set()
        self._fresh_epoch = 0
        self.attempts = 0
        self.ignored: list[str] = []
        self.scheduler.hub.object_stores.set_sink(self._object_changed)
        self.cluster.object_stores = self.scheduler.hub.object_stores
        self.scheduler.queue.watch_backoff(self._backoff_changed)
        with gc_paused():  # loading builds a cluster's worth of objects and no cycles
            self._load()

    def _load(self) -> None:
        s = self.scheduler
        # the resourceclaim controller's part, before any cycle
        create_template_claims(self.snapshot, s.hub.features.enable_dra_workload_resource_claims)
        for name, labels in self.snapshot.namespaces.items():
            s.cache.set_namespace(name, labels)
        for node in self.snapshot.nodes:
            s.cache.add_node(node)
        handlers = s.hub.pod_handlers
        for pod in self.snapshot.bound_pods:
            for handler in handlers:  # plugins that index pods see the bound ones too
                handler.on_pod_add(pod)
            s.cache.add_pod(pod)
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for obj in self.snapshot.workloads:  # Services, ReplicaSets, ...: PodTopologySpread's defaults
            by_kind.setdefault(str(obj.get("kind")), []).append(obj)
        for kind, objs in self.snapshot.objects.items():  # PodGroups and the like
            by_kind.setdefault(kind, []).extend(objs)
        for store in s.hub.object_stores.all():  # the kinds plugins asked for
            for obj in by_kind.get(store.kind, []):
                if obj.get("apiVersion", store.api_version) == store.api_version:
                    store.upsert(obj)
        for group in self.snapshot.pod_groups:  # scheduling.k8s.io/v1alpha2 (read only with GenericWorkload)
            s.on_pod_group_add(group)
        for pod in self.snapshot.pending_pods:
            if s.responsible_for(pod):
                self.outcomes[pod.key] = PodOutcome(pod.key)
                s.on_pod_add(pod)
            else:
                self.ignored.append(pod.key)
        self._note_gated()

    def _note_gated(self) -> None:
        """Pods a PreEnqueue plugin holds back (scheduling gates, a gang short of members), as
        the queue has them now: their outcome says so, with the gate's message."""
        s = self.scheduler
        for pod in s.pods.values():
            outcome = self.outcomes.get(pod.key)
            if outcome is None or outcome.node:
                continue
            gated = s.queue.is_gated(pod.uid)
            if gated and outcome.attempts == 0:
                status = s.profiles[pod.scheduler_name].run_pre_enqueue(pod)
                outcome.gated, outcome.message = True, status.message if status is not None else ""
            elif outcome.gated and not gated:
                outcome.gated, outcome.message = False, ""

    def _on_attempt(self, attempt: Attempt) -> None:
        self.attempts += 1
        key = attempt.pod.key
        outcome = self.outcomes.get(key)
        if outcome is None:
            outcome = self.outcomes[key] = PodOutcome(key)
        outcome.attempts = attempt.attempt
        if attempt.result is None:
            outcome.message = str(attempt.error) if attempt.error is not None else ""
            self._mark_failed(attempt.pod.uid)
        if self._user_on_attempt is not None:
            self._user_on_attempt(attempt)

    def _object_changed(self, event: ClusterEvent, old: object | None, new: object | None) -> None:
        """A plugin-kind object changed (a PodGroup, ...): pods that failed before may fit now."""
        self._changes += 1
        self.scheduler.queue.move_all_to_active_or_backoff(event, old, new)

    def _failed(self, pod: PodInfo, message: str) -> None:
        """Any failed attempt (filtering, Reserve, Permit, binding): retrying it is pointless
        until the cluster changes. The failure's message is the pod's outcome until it binds
        (a pod rejected while it waited at Permit has no attempt record saying why)."""
        self._mark_failed(pod.uid)
        outcome = self.outcomes.get(pod.key)
        if outcome is not None and not outcome.node:
            outcome.message = message

    def _deliver(self) -> None:
        status, deletions = self.cluster.take_deletions()
        for _, cleared in status:
            current = self.scheduler.pods.get(cleared.uid)
            if current is not None:  # still pending
                self.scheduler.on_pod_update(current, current.copy_with(nominated_node_name=""))
        preemptors = {v.uid: p.key for v, p, _ in self.cluster.preemptions[-len(deletions):]} if deletions else {}
        for victim in deletions:
            self._changes += 1
            self.scheduler.on_pod_delete(victim)
            outcome = self.outcomes.get(victim.key)
            if outcome is not None and outcome.node:  # placed during this run, then preempted
                self._scheduled -= 1
                outcome.node = None
                outcome.preempted_by = preemptors.get(victim.uid)
                outcome.message = f"preempted by {outcome.preempted_by}"
        for old, new in self.cluster.take_pod_group_updates():
            self.scheduler.on_pod_group_update(old, new)
        for bound in self.cluster.take_updates():
            self._changes += 1
            outcome = self.outcomes.get(bound.key)
            if outcome is not None:
                if not outcome.node:
                    self._scheduled += 1
                outcome.node = bound.node_name
                outcome.message = ""
                outcome.scheduled_at = self.clock.now()
            self.scheduler.on_pod_update(None, bound)

    def _mark_failed(self, uid: str) -> None:
        """The pod failed on today's cluster (it is returned to the queue before its failure
        is reported, so it may be backing off already)."""
        self._failed_at[uid] = self._changes
        if self.scheduler.queue.in_backoff(uid):
            self._fresh_set().add(uid)

    def _fresh_set(self) -> set[str]:
        if self._fresh_epoch != self._changes:
            self._fresh.clear()
            self._fresh_epoch = self._changes
        return self._fresh

    def _backoff_changed(self, uid: str, entered: bool) -> None:
        """The queue's backoffQ gained or lost a pod: keep the fresh set a subset of it."""
        if entered:
            if self._failed_at.get(uid, -1) == self._changes:
                self._fresh_set().add(uid)
        elif self._fresh_epoch == self._changes:
            self._fresh.discard(uid)

    def _settled(self) -> bool:
        """No pod is ready, and every backing-off pod already failed on today's cluster
        (O(1): the backing-off pods that did are counted as they come and go)."""
        backing_off = self.scheduler.queue.backoff_count()
        return backing_off == 0 or len(self._fresh_set()) == backing_off

    def run(self, progress: Callable[[int, int], None] | None = None, max_attempts: int | None = None) -> SimulationResult:
        # The loaded cluster (nodes, bound pods, indexes) lives as long as the run: keep
        # the cyclic collector from walking it again and again (about 8% of the run).
        freeze = gc.isenabled()
        if freeze:
            gc.freeze()
        try:
            return self._run(progress, max_attempts)
        finally:
            if freeze:
                gc.unfreeze()

    def _run(self, progress: Callable[[int, int], None] | None, max_attempts: int | None) -> SimulationResult:
        s = self.scheduler
        total = len(self.outcomes)
        livelocked = False
        last_change, attempts_at_change = self._changes, self.attempts
        while max_attempts is None or self.attempts < max_attempts:
            if self._changes != last_change:
                last_change, attempts_at_change = self._changes, self.attempts
            elif self.attempts - attempts_at_change > LIVELOCK_ATTEMPTS_PER_POD * max(total, 1) + 100:
                # Pods keep waking each other (a gang that times out, frees room for
                # another that times out in turn, ...) and nothing binds: upstream would
                # go on forever; a simulation reports it instead.
                livelocked = True
                break
            if s.queue.has_ready() and not self._retry_pointless():
                s.schedule_one()
                self._deliver()
                if progress is not None:
                    progress(self._scheduled, total)
                continue
            permit_deadline = s.waiting_pods.next_deadline()
            if self._settled() and permit_deadline is None:
                break
            wake = s.queue.next_wakeup() if not self._settled() else None
            if permit_deadline is not None:
                wake = permit_deadline if wake is None else min(wake, permit_deadline)
            if wake is None:
                break
            self.clock.advance_to(wake)
            s.expire_waiting_pods()
            self._deliver()
            s.queue.run_due_flushes()
        self._note_gated()
        placements = [(pod.key, node) for pod, node in self.cluster.bindings]
        preemptions = [(v.key, p.key, node) for v, p, node in self.cluster.preemptions]
        return SimulationResult(self.outcomes, placements, self.clock.now(), self.attempts, self.ignored, livelocked,
                                preemptions, dict(s.group_backoff_retries))

    def _retry_pointless(self) -> bool:
        """Only backing-off pods are ready, and nothing changed since each of them failed."""
        queue = self.scheduler.queue
        if queue.num_active():
            return False
        return self._settled()

    def node_usage(self) -> list[dict[str, Any]]:
        """Per node: requested and allocatable cpu (millicores), memory (bytes) and pods."""
        table = self.scheduler.cache.table
        rows = table.order.tolist()
        return [
            {
                "node": table.names[r],
                "cpu": (int(table.req_cpu[r]), int(table.alloc_cpu[r])),
                "memory": (int(table.req_mem[r]), int(table.alloc_mem[r])),
                "pods": (int(table.pod_count[r]), int(table.alloc_pods[r])),
            }
            for r in rows
        ]


def _rfc3339(seconds: float) -> str:
    """A virtual instant as an API timestamp (the simulation's clock starts at the epoch)."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fit_message(error: Exception | None) -> str:
    return error.message() if isinstance(error, FitError) else str(error or "")
