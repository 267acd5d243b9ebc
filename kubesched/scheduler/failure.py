"""The scheduler's one error path: why an attempt failed, recorded, and the pod given back.

Upstream's ``handleSchedulingFailure``: the plugins that rejected the pod (for the
queueing hints), the nomination preemption made, the pod back in the queue as the
informer last saw it, the FailedScheduling event and the PodScheduled condition, and
the attempt's metrics. Every failure of either cycle ends here, so that a pod is never
lost; ``Scheduler`` inherits it (through ``BindingCycle``).
"""

from __future__ import annotations

import logging

from ..clock import Clock
from ..framework.handle import ClusterClient
from ..framework.queued_pod import QueuedPodInfo
from ..framework.runtime import Framework
from ..framework.status import Code, Status
from ..objects.pod import PodInfo
from ..queue.nominator import Nominator
from ..queue.scheduling_queue import SchedulingQueue
from .fit_error import Diagnosis, FitError
from .metrics import RESULT_ERROR, RESULT_UNSCHEDULABLE, SchedulerMetrics

__all__ = ["FailureHandling", "decisions", "log"]

log = logging.getLogger("kubesched.scheduler.scheduler")  # the scheduler's logger, named as before the split
# One line per decision, as upstream logs them at V(2); off unless configured (``run -v 2``).
decisions = logging.getLogger("kubesched.decisions")


class FailureHandling:
    """``_handle_failure`` and the attempt metrics of ``Scheduler``."""

    queue: SchedulingQueue
    client: ClusterClient
    clock: Clock
    nominator: Nominator
    pods: dict[str, PodInfo]
    metrics: SchedulerMetrics | None
    _cycle_started: dict[str, float]

    def _handle_failure(self, fwk: Framework, queued: QueuedPodInfo, status: Status, err: Exception | None,
                        nominated: str | None, binding: bool = False) -> None:
        """The one error path: record why, and give the pod back to the queue."""
        pod = queued.pod
        if isinstance(err, FitError):
            queued.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            queued.pending_plugins = set(err.diagnosis.pending_plugins)
            reason = "Unschedulable"
        elif status.is_rejected():
            if err is None:  # Reserve, Permit or PreBind: upstream reports a FitError on the chosen node
                err = FitError(pod.key, 1, Diagnosis(absent_status=status))
                if status.plugin:  # with the plugin in it (Diagnosis.AddPluginStatus)
                    queued.unschedulable_plugins = {status.plugin}
                    if status.code == Code.PENDING:
                        queued.pending_plugins = {status.plugin}
            # Otherwise (a pod-group member failing with its group's status) upstream has no
            # FitError to take rejectors from: the pod returns with none, as after an error.
            reason = "Unschedulable"
        else:
            reason = "SchedulerError"
        if self.metrics is not None:
            self._record(fwk, pod.uid, RESULT_ERROR if reason == "SchedulerError" else RESULT_UNSCHEDULABLE,
                         self.clock.now())
        # A binding cycle's error reads as its extension point wrote it (upstream: `running Bind
        # plugin "DefaultBinder": ...`), with no prefix of ours.
        message = str(err) if err is not None else status.message
        if reason == "SchedulerError":
            log.warning("Error scheduling pod; retrying", extra={"pod": pod.key, "err": message})
        elif decisions.isEnabledFor(logging.INFO):
            decisions.info("Unable to schedule pod; no fit; waiting", extra={"pod": pod.key, "err": message})
        if nominated is not None and pod.uid in self.pods:
            # upstream's AddNominatedPod: the nomination holds (or, "", is dropped) at once; the
            # pod carries it as the status patch will make the informer report it.
            current = self.pods[pod.uid]
            if current.nominated_node_name != nominated:
                current = self.pods[pod.uid] = current.copy_with(nominated_node_name=nominated)
            self.nominator.add(current, nominated)
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
