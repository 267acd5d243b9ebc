"""The scheduler: event handlers feeding the cache and queue, and ``schedule_one``.

``schedule_one`` pops a pod and runs the scheduling cycle (PreFilter ... Permit,
assuming the pod in the cache) and then the binding cycle (WaitOnPermit, PreBind,
Bind, PostBind). Every way a cycle can fail goes through ``_handle_failure``, which
puts the pod back in the queue: a pod is never dropped.

The scheduler reaches the cluster only through a ``ClusterClient`` (bind, events,
pod status), so the simulator and the live mode drive the same code.

The binding cycle runs where a ``BindingRunner`` puts it (inline in the simulator, on a
worker thread in the live mode), as upstream runs it in its own goroutine beside the
next scheduling cycle.

The event handlers are in ``event_handlers.py``, the binding cycle in
``binding_cycle.py``, the error path in ``failure.py``; ``Scheduler`` inherits them
and keeps ``schedule_one``'s scheduling cycle here.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from ..cache.cache import Cache, Snapshot
from ..clock import Clock
from ..framework.cycle_state import PODS_TO_ACTIVATE, CycleState
from ..framework.handle import ClusterClient
from ..framework.preemption import PREEMPTION_OUTCOME, PreemptionOutcome
from ..framework.queued_pod import QueuedPodInfo
from ..framework.runtime import Framework
from ..framework.runtime_binding import PERMIT_WAIT_REASONS
from ..framework.status import Code, Status
from ..objects.pod import PodInfo
from ..queue.nominator import Nominator
from ..queue.scheduling_queue import SchedulingQueue
from .algorithm import Algorithm, ScheduleResult
from .attempt import Attempt, PodGroupCycleRecord
from .binding_record import PermitWait, binding_failed, permit_ran
from .binding_cycle import (
    BindingCycle,
    BindingDone,
    BindingRunner,
    BindingWork,
    DirectBinder,
    binds_by_default_binder,
    run_inline,
)
from .event_handlers import EventHandlers
from .fit_error import FitError, NodeToStatus, NoNodesAvailableError
from .handle import HandleHub
from .metrics import SchedulerMetrics, should_sample_plugins
from .podgroup_cycle import GROUP_CYCLE_LOG_SIZE, PodGroupCycle, PodGroupPostFilter
from .podgroup_events import PodGroupEvents
from .podgroup_preemption import workload_aware_preemption
from .preemption import attach_preemption

__all__ = ["Scheduler", "ClusterClient", "Attempt", "BindingRunner", "run_inline", "BindingDone", "BindingWork", "DirectBinder"]

PERMIT_LOG_SIZE = 100_000  # waits kept for reports; a long live run forgets the oldest


class Scheduler(EventHandlers, PodGroupEvents, PodGroupCycle, BindingCycle):
    def __init__(
        self,
        profiles: dict[str, Framework],
        cache: Cache,
        queue: SchedulingQueue,
        algorithm: Algorithm,
        client: ClusterClient,
        clock: Clock,
        on_attempt: Callable[[Attempt], None] | None = None,
        run_binding: BindingRunner | None = None,
        hub: HandleHub | None = None,
        metrics: SchedulerMetrics | None = None,
        direct_binder: DirectBinder | None = None,
    ) -> None:
        self.profiles = profiles
        self.cache = cache
        self.queue = queue
        self.algorithm = algorithm
        self.client = client
        self.clock = clock
        self.on_attempt = on_attempt
        self._run_binding: BindingRunner = run_binding or run_inline
        self._direct_binder = direct_binder
        self._binds_directly = {name: binds_by_default_binder(fwk, algorithm) for name, fwk in profiles.items()}
        self.pods: dict[str, PodInfo] = {}  # pending pods we own, by uid (the informer's view)
        self.hub = hub if hub is not None else HandleHub(cache, clock, client)
        self.waiting_pods = self.hub.waiting_pods
        self.nominator = Nominator()  # pending pods nominated to nodes (by preemption)
        attach_preemption(profiles, algorithm, self.nominator, cache.snapshot(), self._preemption_victims)
        self.metrics = metrics
        algorithm.now = clock.now  # OpportunisticBatching's state ages on the scheduler's clock
        algorithm.metrics = metrics
        self._cycle_started: dict[str, float] = {}  # pod uid -> start of its attempt, while metrics are kept
        self.permit_log: deque[PermitWait] = deque(maxlen=PERMIT_LOG_SIZE)  # pods that waited at Permit, latest last
        # Whether chosen attempts carry their binding record (Reserve ... Bind, for explain
        # output and reports); an owner whose attempt observer never reads it turns it off.
        self.binding_records = True
        # Workload-aware scheduling (GenericWorkload): pods of a pod group are scheduled in
        # pod-group cycles (podgroup_cycle.py); with TopologyAwareWorkloadScheduling, by placements.
        features = self.hub.features
        self.generic_workload = features.enable_generic_workload
        self.gang_scheduling = features.enable_gang_scheduling
        self.placements_enabled = features.enable_topology_aware_workload_scheduling
        self.pod_groups = self.hub.pod_groups
        # WorkloadAwarePreemption: an Unschedulable group asks DefaultPreemption for room (podgroup_preemption.py).
        self.pod_group_post_filter: PodGroupPostFilter | None = (
            workload_aware_preemption(self) if features.enable_workload_aware_preemption else None)
        self.group_cycles: deque[PodGroupCycleRecord] = deque(maxlen=GROUP_CYCLE_LOG_SIZE)
        self._group_from_backoff = False
        # group -> its cycles begun by a member popped from backoffQ while activeQ was empty
        # (SchedulerPopFromBackoffQ retries a failed gang with a FitError member that way).
        self.group_backoff_retries: dict[str, int] = {}

    # -- the loop -----------------------------------------------------------
    def schedule_one(self, block: bool = False, timeout: float | None = None) -> bool:
        """Run one scheduling attempt; False when no pod was ready."""
        queued = self.queue.pop(block, timeout)
        if queued is None:
            return False
        pod = queued.pod
        if pod.pod_group_name is not None and self.generic_workload:
            self._schedule_one_pod_group(queued)
            return True
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None or self._skip(pod):
            self.queue.done(pod.uid)
            return True
        started = self.clock.now()
        if self.metrics is not None:
            self._cycle_started[pod.uid] = started
        state = CycleState()
        if self.metrics is not None:  # upstream samples per-plugin durations in 10% of cycles
            state.record_plugin_metrics = should_sample_plugins()
        state.write(PODS_TO_ACTIVATE, {})
        snapshot = self.cache.snapshot()
        try:
            result = self.algorithm.schedule_pod(fwk, state, pod, snapshot, self.queue.scheduling_cycle)
        except FitError as err:
            nominated, preemption = self._post_filter(fwk, state, pod, err, snapshot)
            self._notify(queued, fwk, None, err, snapshot, started, preemption)
            self._handle_failure(fwk, queued, Status(Code.UNSCHEDULABLE, str(err)), err, nominated)
            return True
        except NoNodesAvailableError as err:
            self._notify(queued, fwk, None, err, snapshot, started)
            self._handle_failure(fwk, queued, Status(Code.UNSCHEDULABLE, str(err)), err, None)
            return True
        except Exception as err:  # FrameworkError, or a plugin that raised: the pod must not be lost
            self._notify(queued, fwk, None, err, snapshot, started)
            self._handle_failure(fwk, queued, Status(Code.ERROR, str(err)), err, None)
            return True
        attempt = self._notify(queued, fwk, result, None, snapshot, started)
        if self.metrics is not None:
            self.metrics.algorithm(self.clock.now() - started)
        self._prepare_for_binding(fwk, state, queued, result.suggested_host, attempt)
        return True

    def _prepare_for_binding(self, fwk: Framework, state: CycleState, queued: QueuedPodInfo, host: str,
                             attempt: Attempt | None) -> None:
        """upstream's ``prepareForBindingCycle`` and the start of the binding cycle: assume the
        pod on ``host``, Reserve, Permit, then bind (or wait at Permit); any failure goes
        through ``_handle_failure``."""
        pod = queued.pod
        assumed = pod.copy_with(node_name=host)
        try:
            self.cache.assume_pod(assumed, host)
        except Exception as err:
            self._handle_failure(fwk, queued, Status.as_error(err), err, "")
            return
        self.nominator.delete(pod)  # placed: its nomination, if any, has served
        try:
            status = fwk.run_reserve(state, assumed, host)
        except Exception as err:  # a plugin that raises fails Reserve
            status = Status.as_error(err)
        if status is not None:
            binding_failed(attempt, "Reserve", status)
            self._undo(fwk, state, assumed, host)
            self._handle_failure(fwk, queued, status, None, "")  # upstream's clearNominatedNode
            return
        try:
            status, waits = fwk.run_permit(state, assumed, host)
        except Exception as err:
            status, waits = Status.as_error(err), {}
        permit_ran(attempt, status, waits, (state.get(PERMIT_WAIT_REASONS) or {}) if waits else {})
        if status is not None and status.code != Code.WAIT:
            binding_failed(attempt, "Permit", status)
            self._undo(fwk, state, assumed, host)
            self._handle_failure(fwk, queued, status, None, "")
            return
        to_activate = state.get(PODS_TO_ACTIVATE)
        if to_activate:  # at the end of a successful scheduling cycle, as upstream; then cleared
            self.queue.activate(list(to_activate.values()))
            to_activate.clear()
        if waits:
            self._wait_on_permit(fwk, state, queued, assumed, host, attempt, waits)
        else:
            self._start_binding(fwk, state, queued, assumed, host, attempt)

    def _preemption_victims(self, count: int) -> None:
        """A preemption's executor acted on ``count`` victims (preemption_victims)."""
        if self.metrics is not None:
            self.metrics.preemption_victims(count)

    def _skip(self, pod: PodInfo) -> bool:
        """upstream's ``skipPodSchedule``: a pod being deleted (said in an event) or already
        assumed is not scheduled; the caller tells the queue it is done with it."""
        if pod.terminating:
            self.client.record_event(pod, "Warning", "FailedScheduling",
                                     f"skip schedule deleting pod: {pod.namespace}/{pod.name}")
            return True
        return self.cache.is_assumed(pod)

    def _notify(self, queued: QueuedPodInfo, fwk: Framework, result: ScheduleResult | None,
                error: Exception | None, snapshot: Snapshot, started: float,
                post_filter: PreemptionOutcome | None = None) -> Attempt | None:
        if self.on_attempt is None:
            return None
        attempt = Attempt(queued.pod, queued.attempts, fwk.profile_name, result, error,
                          snapshot.table.frozen_names(), started, self.clock.now(), post_filter=post_filter,
                          walk=self.algorithm.last_walk)
        if result is not None and self.binding_records:
            attempt.binding = {"result": "pending"}  # filled in by the binding cycle (binding_record.py)
        self.on_attempt(attempt)
        return attempt

    def _post_filter(self, fwk: Framework, state: CycleState, pod: PodInfo, err: FitError,
                     snapshot: Snapshot) -> tuple[str | None, PreemptionOutcome | None]:
        """The node to nominate ("" clears a nomination, None leaves it) and what preemption did."""
        if not fwk.points["postFilter"]:
            return None, None
        table = snapshot.table
        filtered = NodeToStatus(err.diagnosis, table.frozen_names(), table.order)
        result, status = fwk.run_post_filter(state, pod, filtered)
        if status.reasons and status.code != Code.SUCCESS:
            err.diagnosis.post_filter_msg = status.message
        preemption = state.get(PREEMPTION_OUTCOME)
        if preemption is not None and self.metrics is not None:  # preemption_attempts_total (victims: the executor's)
            self.metrics.preemption(None)
        if result is not None and (status.is_success() or status.is_rejected()):
            return result.nominated_node_name, preemption
        return None, preemption
