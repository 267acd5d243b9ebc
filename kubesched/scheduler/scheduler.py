"""The scheduler: event handlers feeding the cache and queue, and ``schedule_one``.

``schedule_one`` pops a pod and runs the scheduling cycle (PreFilter ... Permit,
assuming the pod in the cache) and then the binding cycle (WaitOnPermit, PreBind,
Bind, PostBind). Every way a cycle can fail goes through ``_handle_failure``, which
puts the pod back in the queue: a pod is never dropped.

The scheduler reaches the cluster only through a ``ClusterClient`` (bind, events,
pod status), so the simulator and the live mode drive the same code.

The binding cycle has two halves: the *work* (PreBind and Bind, plugin code that may
wait on the API server) and its *completion* (confirming or forgetting the assumed
pod, requeueing on failure). A ``BindingRunner`` decides where the work runs: inline
in the simulator, on a worker thread in the live mode, with the completion handed
back to the thread that owns the cache and the queue, as upstream runs the binding
cycle in its own goroutine beside the next scheduling cycle.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

from ..cache.cache import Cache, Snapshot
from ..clock import Clock
from ..framework.cycle_state import PODS_TO_ACTIVATE, CycleState
from ..framework.handle import ClusterClient
from ..framework.runtime import Framework
from ..framework.status import Code, Status
from ..framework.waiting_pods import WaitingPod
from ..objects.node import Node
from ..objects.pod import PodInfo
from ..framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
)
from ..queue.nominator import Nominator
from ..queue.scheduling_queue import SchedulingQueue
from ..framework.preemption import PREEMPTION_OUTCOME, PreemptionOutcome
from ..framework.queued_pod import QueuedPodInfo
from ..plugins.defaultbinder import DefaultBinder
from .algorithm import Algorithm, ScheduleResult
from .extender import BindingObserver, extenders_binding
from .fit_error import Diagnosis, FitError, NodeToStatus, NoNodesAvailableError
from .handle import HandleHub
from .metrics import RESULT_ERROR, RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, SchedulerMetrics, should_sample_plugins
from .preemption import attach_preemption

__all__ = ["Scheduler", "ClusterClient", "Attempt", "BindingRunner", "run_inline"]

BindingWork = Callable[[], "Status | None"]
BindingDone = Callable[["Status | None"], None]
BindingRunner = Callable[[BindingWork, BindingDone], None]
"""Runs a binding cycle's work somewhere and calls its completion with the result on the
scheduler's own thread."""
DirectBinder = Callable[[PodInfo, str, BindingDone], None]
"""Binds a pod as DefaultBinder would (``pods/binding``) without running plugin code, and
calls the completion on the scheduler's own thread: the live mode's way to bind on its
event loop, with no worker thread, when a profile's binding cycle is DefaultBinder alone."""


def run_inline(work: BindingWork, done: BindingDone) -> None:
    """The simulator's runner: bind at once, in the scheduling loop."""
    done(work())

log = logging.getLogger(__name__)
# One line per decision, as upstream logs them at V(2); off unless configured (``run -v 2``).
decisions = logging.getLogger("kubesched.decisions")


@dataclass(slots=True)
class Attempt:
    """One scheduling attempt, as observers (explain output, metrics) see it."""

    pod: PodInfo
    attempt: int
    profile: str
    result: ScheduleResult | None  # set when a node was chosen
    error: Exception | None  # FitError when no node fits, another error otherwise
    node_names: list[str]  # table row -> node name, at the time of the attempt
    started: float
    finished: float
    bound: bool = False
    post_filter: PreemptionOutcome | None = None  # what preemption decided, when it ran


class Scheduler:
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
        self._binds_directly = {name: _binds_by_default_binder(fwk, algorithm) for name, fwk in profiles.items()}
        self.pods: dict[str, PodInfo] = {}  # pending pods we own, by uid (the informer's view)
        self.hub = hub if hub is not None else HandleHub(cache, clock, client)
        self.waiting_pods = self.hub.waiting_pods
        self.nominator = Nominator()  # pending pods nominated to nodes (by preemption)
        attach_preemption(profiles, algorithm, self.nominator, cache.snapshot())
        self.metrics = metrics
        self._cycle_started: dict[str, float] = {}  # pod uid -> start of its attempt, while metrics are kept

    # -- event handlers (informers call these) ------------------------------
    def responsible_for(self, pod: PodInfo) -> bool:
        return pod.scheduler_name in self.profiles

    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def on_node_update(self, old: Node | None, new: Node) -> None:
        self.cache.update_node(new)
        action = _node_update_action(old, new)
        if action:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE, action), old, new)

    def on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(node.name)

    def on_namespace(self, name: str, labels: dict[str, str] | None) -> None:
        if labels is None:
            self.cache.remove_namespace(name)
            return
        self.cache.set_namespace(name, labels)
        self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NAMESPACE, ActionType.ADD | ActionType.UPDATE), None, name)

    def on_pod_add(self, pod: PodInfo) -> None:
        for handler in self.hub.pod_handlers:
            handler.on_pod_add(pod)
        if pod.node_name:
            self.cache.add_pod(pod)  # the cache keeps its own compact copy, without the raw document
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)
        elif self.responsible_for(pod) and not pod.terminating:
            self.pods[pod.uid] = pod
            self.queue.add(pod)

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None:
        for handler in self.hub.pod_handlers:
            handler.on_pod_update(old, new)
        if new.node_name:
            was_pending = self.pods.pop(new.uid, None)
            if was_pending is not None:
                self.queue.delete(was_pending)
            self.nominator.delete(new)
            self.cache.update_pod(new)  # the cache keeps its own compact copy, without the raw document
            action = ActionType.UPDATE_POD_LABEL if old is not None and old.labels != new.labels else ActionType(0)
            if old is not None and _requests_shrank(old, new):
                action |= ActionType.UPDATE_POD_SCALE_DOWN
            if old is None or not old.node_name:
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, new)
            elif action:
                self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.ASSIGNED_POD, action), old, new)
        elif self.responsible_for(new):
            if new.terminating:
                self.on_pod_delete(new)
                return
            self.pods[new.uid] = new
            self.nominator.update(old, new)
            self.queue.update(old, new)

    def on_pod_delete(self, pod: PodInfo) -> None:
        for handler in self.hub.pod_handlers:
            handler.on_pod_delete(pod)
        if pod.node_name:
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)
        else:
            self.pods.pop(pod.uid, None)
            self.nominator.delete(pod)
            self.queue.delete(pod)

    # -- the loop -----------------------------------------------------------
    def schedule_one(self, block: bool = False, timeout: float | None = None) -> bool:
        """Run one scheduling attempt; False when no pod was ready."""
        queued = self.queue.pop(block=block, timeout=timeout)
        if queued is None:
            return False
        pod = queued.pod
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
            result = self.algorithm.schedule_pod(fwk, state, pod, snapshot)
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
        host = result.suggested_host
        assumed = pod.copy_with(node_name=host)
        try:
            self.cache.assume_pod(assumed, host)
        except Exception as err:
            self._handle_failure(fwk, queued, Status.as_error(err), err, None)
            return True
        self.nominator.delete(pod)  # placed: its nomination, if any, has served
        status = _guarded(fwk.run_reserve, state, assumed, host)
        if status is not None:
            self._undo(fwk, state, assumed, host)
            self._handle_failure(fwk, queued, status, None, None)
            return True
        try:
            status, waits = fwk.run_permit(state, assumed, host)
        except Exception as err:
            status, waits = Status.as_error(err), {}
        if status is not None and status.code != Code.WAIT:
            self._undo(fwk, state, assumed, host)
            self._handle_failure(fwk, queued, status, None, None)
            return True
        to_activate = state.get(PODS_TO_ACTIVATE)
        if to_activate:  # at the end of a successful scheduling cycle, as upstream; then cleared
            self.queue.activate(list(to_activate.values()))
            to_activate.clear()
        if waits:
            self._wait_on_permit(fwk, state, queued, assumed, host, attempt, waits)
        else:
            self._start_binding(fwk, state, queued, assumed, host, attempt)
        return True

    def _wait_on_permit(self, fwk: Framework, state: CycleState, queued: QueuedPodInfo, assumed: PodInfo,
                        host: str, attempt: Attempt | None, waits: dict[str, float]) -> None:
        """Hold the assumed pod until every waiting Permit plugin allows it (then bind) or one rejects it."""
        now = self.clock.now()

        def decided(status: Status | None) -> None:
            self.waiting_pods.remove(assumed.uid)
            if self.metrics is not None:
                code = Code.SUCCESS if status is None else status.code  # upstream labels by the status code
                self.metrics.permit_wait(code.label, self.clock.now() - now)
            if status is None:
                self._start_binding(fwk, state, queued, assumed, host, attempt)
                return
            self._fail_binding(fwk, state, queued, assumed, host, status)

        self.waiting_pods.add(assumed.uid, WaitingPod(assumed, host, {p: now + t for p, t in waits.items()}, decided))

    def expire_waiting_pods(self) -> int:
        """Reject pods whose Permit wait timed out (run periodically; the simulator runs it as time moves)."""
        return self.waiting_pods.expire(self.clock.now())

    def _skip(self, pod: PodInfo) -> bool:
        """Deleted or already assumed pods are not scheduled again."""
        return pod.terminating or self.cache.is_assumed(pod)

    def _notify(self, queued: QueuedPodInfo, fwk: Framework, result: ScheduleResult | None,
                error: Exception | None, snapshot: Snapshot, started: float,
                post_filter: PreemptionOutcome | None = None) -> Attempt | None:
        if self.on_attempt is None:
            return None
        attempt = Attempt(queued.pod, queued.attempts, fwk.profile_name, result, error,
                          snapshot.table.frozen_names(), started, self.clock.now(), post_filter=post_filter)
        self.on_attempt(attempt)
        return attempt

    def _post_filter(self, fwk: Framework, state: CycleState, pod: PodInfo, err: FitError,
                     snapshot: Snapshot) -> tuple[str | None, PreemptionOutcome | None]:
        """The node to nominate ("" clears a nomination, None leaves it) and what preemption did."""
        if not fwk.points["postFilter"]:
            return None, None
        table = snapshot.table
        filtered = NodeToStatus(err.diagnosis, table.frozen_names(), table.order.tolist())
        result, status = fwk.run_post_filter(state, pod, filtered)
        if status.reasons and status.code != Code.SUCCESS:
            err.diagnosis.post_filter_msg = status.message
        preemption = state.get(PREEMPTION_OUTCOME)
        if preemption is not None and self.metrics is not None:  # preemption_attempts_total, preemption_victims
            self.metrics.preemption(len(preemption.victims) if preemption.code == Code.SUCCESS else None)
        if result is not None and (status.is_success() or status.is_rejected()):
            return result.nominated_node_name, preemption
        return None, preemption

    def _start_binding(self, fwk: Framework, state: CycleState, queued: QueuedPodInfo, assumed: PodInfo,
                       host: str, attempt: Attempt | None) -> None:
        def work() -> Status | None:
            status = _guarded(fwk.run_pre_bind, state, assumed, host)
            if status is None:
                status = self._bind(fwk, state, assumed, host)
            return status

        def done(status: Status | None) -> None:
            self._finish_binding(fwk, state, queued, assumed, host, attempt, status)

        if (self._direct_binder is not None and self._binds_directly[fwk.profile_name]
                and fwk.pre_bind_skipped(state, assumed, host)):
            observe = fwk.observe_point
            if observe is not None:  # the Bind point's duration, as fwk.run_bind would report it
                started, finish = time.perf_counter(), done

                def done(status: Status | None) -> None:
                    observe("Bind", (status.code if status is not None else Code.SUCCESS).label,
                            time.perf_counter() - started)
                    finish(status)

            self._direct_binder(assumed, host, done)
        else:
            self._run_binding(work, done)

    def _finish_binding(self, fwk: Framework, state: CycleState, queued: QueuedPodInfo, assumed: PodInfo,
                        host: str, attempt: Attempt | None, status: Status | None) -> None:
        if status is not None and not status.is_success():
            self._fail_binding(fwk, state, queued, assumed, host, status)
            return
        now = self.clock.now()
        self.cache.finish_binding(assumed, now)
        self.pods.pop(assumed.uid, None)
        if self.metrics is not None:
            self._record(fwk, assumed.uid, RESULT_SCHEDULED, now)
            first = queued.initial_attempt_timestamp
            self.metrics.pod_scheduled(queued.attempts, now - first if first is not None else None)
        if attempt is not None:
            attempt.bound = True
        if decisions.isEnabledFor(logging.INFO):
            decisions.info("Successfully bound pod to node", extra={"pod": assumed.key, "node": host})
        self.client.record_event(
            assumed, "Normal", "Scheduled", f"Successfully assigned {assumed.key} to {host}"
        )
        try:
            fwk.run_post_bind(state, assumed, host)
        except Exception as err:  # the pod is bound: nothing to undo
            log.error("PostBind of %s failed: %s", assumed.key, err)
        to_activate = state.get(PODS_TO_ACTIVATE)
        if to_activate:  # added during the binding cycle (Permit allowed, PreBind, ...)
            self.queue.activate(list(to_activate.values()))
        self.queue.done(assumed.uid)

    def _bind(self, fwk: Framework, state: CycleState, assumed: PodInfo, host: str) -> Status | None:
        """An interested binder extender binds instead of the Bind plugins (upstream's ``bind``)."""
        bound, err = extenders_binding(self.algorithm.extenders, assumed, host)
        if not bound:
            return _guarded(fwk.run_bind, state, assumed, host)
        if err is not None:
            return Status.as_error(err)
        if isinstance(self.client, BindingObserver):
            self.client.observe_binding(assumed, host)
        return None

    def _undo(self, fwk: Framework, state: CycleState, assumed: PodInfo, host: str) -> bool:
        """Unreserve and forget an assumed pod; False if the cache could not forget it."""
        try:
            fwk.run_unreserve(state, assumed, host)
        except Exception as err:
            log.error("Unreserve of %s failed: %s", assumed.key, err)
        try:
            self.cache.forget_pod(assumed)
        except Exception as err:  # pragma: no cover - cache invariants broken
            log.error("forgetting %s: %s", assumed.key, err)
            return False
        return True

    def _fail_binding(self, fwk: Framework, state: CycleState, queued: QueuedPodInfo, assumed: PodInfo,
                      host: str, status: Status) -> None:
        """upstream's ``handleBindingCycleError``: forgetting a pod in the binding cycle frees room,
        an AssignedPodDelete for the other pods. After a rejection the event comes once the pod
        is back in the queue (and not for the pod itself, which stays unschedulable); after an
        error it comes first, so it also counts for the pod's own retry."""
        forgotten = self._undo(fwk, state, assumed, host)
        rejected = status.is_rejected()
        if forgotten and not rejected:
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None)
        self._handle_failure(fwk, queued, status, None, None, binding=True)
        if forgotten and rejected:
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != assumed.uid)

    def _handle_failure(self, fwk: Framework, queued: QueuedPodInfo, status: Status, err: Exception | None,
                        nominated: str | None, binding: bool = False) -> None:
        """The one error path: record why, and give the pod back to the queue."""
        pod = queued.pod
        if isinstance(err, FitError):
            queued.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            queued.pending_plugins = set(err.diagnosis.pending_plugins)
            reason = "Unschedulable"
        elif status.is_rejected():
            if status.plugin:
                queued.unschedulable_plugins = {status.plugin}
            if err is None:  # Reserve, Permit or PreBind: upstream reports a FitError on the chosen node
                err = FitError(pod.key, 1, Diagnosis(absent_status=status))
            reason = "Unschedulable"
        else:
            reason = "SchedulerError"
        if self.metrics is not None:
            self._record(fwk, pod.uid, RESULT_ERROR if reason == "SchedulerError" else RESULT_UNSCHEDULABLE,
                         self.clock.now())
        message = str(err) if err is not None else status.message
        if binding and status.code == Code.ERROR:
            message = f"binding rejected: {message}"
        if reason == "SchedulerError":
            log.warning("Error scheduling pod; retrying", extra={"pod": pod.key, "err": message})
        elif decisions.isEnabledFor(logging.INFO):
            decisions.info("Unable to schedule pod; no fit; waiting", extra={"pod": pod.key, "err": message})
        if nominated is not None and pod.uid in self.pods:
            # upstream's AddNominatedPod: the nomination holds at once; the pod carries it
            # as the status patch will make the informer report it.
            self.pods[pod.uid] = self.pods[pod.uid].copy_with(nominated_node_name=nominated)
            self.nominator.add(self.pods[pod.uid], nominated)
        if pod.uid in self.pods:  # still pending and ours: back to the queue, as the informer last saw it
            queued.pod = self.pods[pod.uid]
            self.queue.add_unschedulable_if_not_present(queued, Code.ERROR if reason == "SchedulerError" else status.code)
        else:
            self.queue.done(pod.uid)
        self.client.record_event(pod, "Warning", "FailedScheduling", message)
        self.client.update_pod_condition(pod, reason, message, nominated)

    def _record(self, fwk: Framework, uid: str, result: str, now: float) -> None:
        """An attempt ended: upstream's schedule_attempts_total and scheduling_attempt_duration_seconds."""
        assert self.metrics is not None
        started = self._cycle_started.pop(uid, None)
        if started is not None:
            self.metrics.attempt(result, fwk.profile_name, now - started)


def _binds_by_default_binder(fwk: Framework, algorithm: Algorithm) -> bool:
    """The profile binds with DefaultBinder's API call alone: no other Bind plugin, no binder
    extender (whether its PreBind plugins have work is asked per pod, by their pre-flight)."""
    binders = fwk.points["bind"]
    return (len(binders) == 1 and type(binders[0]) is DefaultBinder
            and not any(ext.is_binder() for ext in algorithm.extenders))


def _guarded(run: Callable[..., Status | None], *args: object) -> Status | None:
    """Run an extension point; a plugin that raises fails it with an error status."""
    try:
        return run(*args)
    except Exception as err:
        return Status.as_error(err)


def _node_update_action(old: Node | None, new: Node) -> ActionType:
    if old is None:
        return ActionType.ADD
    action = ActionType(0)
    if old.allocatable != new.allocatable:
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        action |= ActionType.UPDATE_NODE_LABEL
    if old.taints != new.taints or old.unschedulable != new.unschedulable:
        action |= ActionType.UPDATE_NODE_TAINT
    return action


def _requests_shrank(old: PodInfo, new: PodInfo) -> bool:
    a, b = old.requests.requests, new.requests.requests
    return b.milli_cpu < a.milli_cpu or b.memory < a.memory or b.ephemeral_storage < a.ephemeral_storage
