"""The binding cycle: WaitOnPermit, PreBind, Bind and PostBind, and undoing an assumed pod.

The cycle has two halves: the *work* (PreBind and Bind, plugin code that may wait on the
API server) and its *completion* (confirming or forgetting the assumed pod, requeueing
on failure). A ``BindingRunner`` decides where the work runs: inline in the simulator,
on a worker thread in the live mode, with the completion handed back to the thread that
owns the cache and the queue; a ``DirectBinder`` binds without plugin code when
DefaultBinder alone would. Its own module because it is the second of the scheduler's
two cycles; ``Scheduler`` inherits it.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Callable

from ..cache.cache import Cache
from ..framework.cycle_state import PODS_TO_ACTIVATE, CycleState
from ..framework.events import ASSIGNED_POD_DELETE
from ..framework.queued_pod import QueuedPodInfo
from ..framework.interfaces import BindingExplainer
from ..framework.measured import code_label
from ..framework.runtime import Framework
from ..framework.runtime_binding import PERMIT_WAIT_REASONS
from ..framework.status import Code, Status
from ..framework.waiting_pods import WaitingPod, WaitingPods
from ..objects.pod import PodInfo
from ..plugins.defaultbinder import DefaultBinder
from .algorithm import Algorithm
from .attempt import Attempt
from .binding_record import PermitWait, binding_bound, binding_failed, wait_ended
from .extender import BindingObserver, extenders_binding
from .failure import FailureHandling, decisions, log
from .metrics import RESULT_SCHEDULED

__all__ = ["BindingCycle", "BindingDone", "BindingRunner", "BindingWork", "DirectBinder", "binds_by_default_binder",
           "guarded", "run_inline"]

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


class BindingCycle(FailureHandling):
    """The binding cycle of ``Scheduler``, from a Permit wait to PostBind or a requeue."""

    cache: Cache
    algorithm: Algorithm
    waiting_pods: WaitingPods
    _run_binding: BindingRunner
    _direct_binder: DirectBinder | None
    _binds_directly: dict[str, bool]
    permit_log: "deque[PermitWait]"

    def _wait_on_permit(self, fwk: Framework, state: CycleState, queued: QueuedPodInfo, assumed: PodInfo,
                        host: str, attempt: Attempt | None, waits: dict[str, float]) -> None:
        """Hold the assumed pod until every waiting Permit plugin allows it (then bind) or one rejects it."""
        now = self.clock.now()

        reasons: dict[str, str] = state.get(PERMIT_WAIT_REASONS) or {}

        def decided(status: Status | None) -> None:
            self.waiting_pods.remove(assumed.uid)
            waited = self.clock.now() - now
            if self.metrics is not None:
                code = Code.SUCCESS if status is None else status.code  # upstream labels by the status code
                self.metrics.permit_wait(code.label, waited)
            wait_ended(attempt, status, waited)
            self.permit_log.append(PermitWait(assumed.key, reasons, "allowed" if status is None else "rejected",
                                              status.message if status is not None else "", waited))
            if status is None:
                self._start_binding(fwk, state, queued, assumed, host, attempt)
                return
            binding_failed(attempt, "Permit", status)
            self._fail_binding(fwk, state, queued, assumed, host, status)

        self.waiting_pods.add(assumed.uid, WaitingPod(assumed, host, {p: now + t for p, t in waits.items()}, decided,
                                                          waits))

    def expire_waiting_pods(self) -> int:
        """Reject pods whose Permit wait timed out (run periodically; the simulator runs it as time moves)."""
        return self.waiting_pods.expire(self.clock.now())

    def _start_binding(self, fwk: Framework, state: CycleState, queued: QueuedPodInfo, assumed: PodInfo,
                       host: str, attempt: Attempt | None) -> None:
        if self._run_binding is run_inline and self._direct_binder is None:
            # The simulator's binding cycle, at once: the same work and completion as below,
            # without the closures a runner on another thread needs.
            status, failed_at = self._binding_work(fwk, state, assumed, host)
            if status is not None and not status.is_success():
                binding_failed(attempt, failed_at, status)
            self._finish_binding(fwk, state, queued, assumed, host, attempt, status)
            return
        if (self._direct_binder is not None and self._binds_directly[fwk.profile_name]
                and fwk.pre_bind_skipped(state, assumed, host)):
            observe = fwk.observe_point
            started = time.perf_counter() if observe is not None else 0.0

            def done(status: Status | None) -> None:
                if observe is not None:  # the Bind point's duration, as fwk.run_bind would report it
                    observe("Bind", code_label(status), time.perf_counter() - started)
                if status is not None and not status.is_success():
                    binding_failed(attempt, "Bind", status)
                self._finish_binding(fwk, state, queued, assumed, host, attempt, status)

            self._direct_binder(assumed, host, done)
            return
        stage = ["Bind"]  # where a failure happened, for the attempt's record

        def work() -> Status | None:
            status, stage[0] = self._binding_work(fwk, state, assumed, host)
            return status

        def finish(status: Status | None) -> None:
            if status is not None and not status.is_success():
                binding_failed(attempt, stage[0], status)
            self._finish_binding(fwk, state, queued, assumed, host, attempt, status)

        self._run_binding(work, finish)

    def _binding_explainers(self, fwk: Framework) -> list[BindingExplainer]:
        """The profile's plugins that explain their binding work (looked up once per profile)."""
        cache: dict[str, list[BindingExplainer]] | None = getattr(self, "_explainers", None)
        if cache is None:
            cache = {}
            self._explainers = cache
        found = cache.get(fwk.profile_name)
        if found is None:
            found = cache[fwk.profile_name] = [p for p in fwk.instances.values() if isinstance(p, BindingExplainer)]
        return found

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
            if attempt.binding is not None:  # before the record is written (binding_bound)
                for explainer in self._binding_explainers(fwk):
                    found = explainer.explain_binding(state, assumed, host)
                    if found:
                        attempt.binding.update(found)
            binding_bound(attempt)
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

    def _binding_work(self, fwk: Framework, state: CycleState, assumed: PodInfo, host: str) -> tuple[Status | None, str]:
        """PreBind, then Bind: the status of the first that failed (None: bound) and that stage's name."""
        try:
            status = fwk.run_pre_bind(state, assumed, host)
        except Exception as err:  # a plugin that raises fails the point
            return Status.as_error(err), "PreBind"
        if status is not None:
            return status, "PreBind"
        return self._bind(fwk, state, assumed, host), "Bind"

    def _bind(self, fwk: Framework, state: CycleState, assumed: PodInfo, host: str) -> Status | None:
        """An interested binder extender binds instead of the Bind plugins (upstream's ``bind``)."""
        if not self.algorithm.extenders:
            return guarded(fwk.run_bind, state, assumed, host)
        bound, err = extenders_binding(self.algorithm.extenders, assumed, host)
        if not bound:
            return guarded(fwk.run_bind, state, assumed, host)
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
        self._handle_failure(fwk, queued, status, None, "", binding=True)  # upstream's clearNominatedNode
        if forgotten and rejected:
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != assumed.uid)


def binds_by_default_binder(fwk: Framework, algorithm: Algorithm) -> bool:
    """The profile binds with DefaultBinder's API call alone: no other Bind plugin, no binder
    extender (whether its PreBind plugins have work is asked per pod, by their pre-flight)."""
    binders = fwk.points["bind"]
    return (len(binders) == 1 and type(binders[0]) is DefaultBinder
            and not any(ext.is_binder() for ext in algorithm.extenders))


def guarded(run: Callable[..., Status | None], *args: object) -> Status | None:
    """Run an extension point; a plugin that raises fails it with an error status."""
    try:
        return run(*args)
    except Exception as err:
        return Status.as_error(err)
