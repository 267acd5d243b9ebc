"""The records of a pod-group cycle's algorithm and the statuses and messages it builds.

upstream's ``algorithmResult`` and ``podGroupAlgorithmResult``, and the errors and texts
``schedule_one_podgroup.go`` wraps its statuses in. Their own module because both the
algorithm (``podgroup_algorithm.py``) and the cycle that acts on its results
(``podgroup_cycle.py``) read them, and so do the reports that quote the messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..framework.cycle_state import CycleState
from ..framework.placement import Placement
from ..framework.preemption import PreemptionOutcome
from ..framework.queued_pod import QueuedPodInfo
from ..framework.status import Code, Status
from .algorithm import ScheduleResult, Walk
from .attempt import PlacementTrial
from .fit_error import Diagnosis, FitError, PodGroupUnschedulableError

__all__ = [
    "PERMIT_WAIT_MESSAGE",
    "POD_GROUP_UNSCHEDULABLE",
    "WAITING_ON_PREEMPTION",
    "PodGroupAlgorithmResult",
    "PodResult",
    "fit_error_on_node",
    "group_unschedulable",
    "infeasible_reason",
    "status_error_text",
    "wrapped_error",
]

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"  # upstream's errPodGroupUnschedulable
WAITING_ON_PREEMPTION = "pod group is waiting for preemption to complete"
PERMIT_WAIT_MESSAGE = "one or more plugins asked to wait and no plugin rejected pod"


def group_unschedulable(*reasons: str) -> Status:
    """``NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable)``: the error's
    text leads the message."""
    return Status(Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE, *reasons,
                  error=PodGroupUnschedulableError(", ".join((POD_GROUP_UNSCHEDULABLE, *reasons))))


def wrapped_error(message: str, cause: BaseException | None) -> Exception:
    """Go's ``fmt.Errorf("...: %w", err)``: an error whose text is ``message`` (the group's
    condition and its pods' messages read it), with ``cause`` under it."""
    err = RuntimeError(message)
    err.__cause__ = cause
    return err


def fit_error_on_node(pod_key: str, status: Status) -> FitError:
    """upstream's FitError for a member Reserve or Permit rejected on its node: that one node
    with the status, and the rejecting plugin recorded (``Diagnosis.AddPluginStatus``), so
    the member goes back to the queue as unschedulable by it, not as failed by an error."""
    diagnosis = Diagnosis(absent_status=status)
    if status.plugin:
        diagnosis.unschedulable_plugins.add(status.plugin)
        if status.code == Code.PENDING:
            diagnosis.pending_plugins.add(status.plugin)
    return FitError(pod_key, 1, diagnosis)


def infeasible_reason(result: PodGroupAlgorithmResult) -> str:
    """Why a group did not fit a placement, for the explain output: how many of the pods
    tried fit, and the first that did not with its own message (else the group's status)."""
    fit = sum(1 for r in result.pod_results if r.status is None or r.requires_preemption)
    head = f"{fit}/{len(result.pod_results)} pod(s) fit"
    for r in result.pod_results:
        if r.status is not None and not r.requires_preemption:
            message = str(r.error) if r.error is not None else r.status.message
            return f"{head}; the first that did not: {r.queued.pod.key}: {message}"
    status = result.status
    return f"{head}: {status.message}" if status is not None else head


def status_error_text(status: Status) -> str:
    """upstream's ``status.AsError().Error()``: the wrapped error's text, else the message."""
    if isinstance(status.error, PodGroupUnschedulableError):
        return POD_GROUP_UNSCHEDULABLE
    return str(status.error) if status.error is not None else status.message


@dataclass(slots=True)
class PodResult:
    """One pod's try in a pod-group cycle (upstream's ``algorithmResult``)."""

    queued: QueuedPodInfo
    state: CycleState
    status: Status | None = None  # None: the pod fits (and may still wait at Permit)
    result: ScheduleResult | None = None
    host: str = ""  # the node chosen (or nominated, when preemption is required)
    error: Exception | None = None  # what failed it: a FitError, ...
    permit_status: Status | None = None  # None: Permit allowed it; Wait: it would wait
    requires_preemption: bool = False
    nominated: str | None = None  # the nomination to record when it fails ("" clears it)
    post_filter: PreemptionOutcome | None = None
    walk: Walk | None = None
    seconds: float = 0.0  # how long its algorithm took


@dataclass(slots=True)
class PodGroupAlgorithmResult:
    """upstream's ``podGroupAlgorithmResult``: per pod (fewer pods only when the whole group
    failed), the group's status (None: feasible), and whether it waits on preemption."""

    pod_results: list[PodResult] = field(default_factory=list)
    status: Status | None = field(default_factory=lambda: group_unschedulable())
    waiting_on_preemption: bool = False
    placement: Placement | None = None  # the placement chosen, in the placement algorithm
    trials: list[PlacementTrial] = field(default_factory=list)
    tied: list[str] = field(default_factory=list)  # placements tied for the best score (explain output)
    tie_break: str = ""  # how the tie was broken: "first" or "random"
