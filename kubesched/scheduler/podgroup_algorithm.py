"""The pod-group scheduling algorithm (upstream's ``podGroupSchedulingAlgorithm`` and its parts).

One pod-group cycle tries every unscheduled pod of the group, in the group's order, on
one view of the cluster:

* **per pod** (``podGroupPodSchedulingAlgorithm``): the ordinary filter, score and select
  (with PostFilter when the profile has one), then assume and Reserve, then Permit. The pod
  is assumed in the cache (kubesched's snapshot is a view of the cache), so the next pod of
  the group sees it; a pod that needs preemption is assumed on its nominated node;
* **default** (``podGroupSchedulingDefaultAlgorithm``): the pods in turn; pods that fit
  nowhere are passed over, an error stops the cycle; the group is feasible once some pod's
  Permit answers Success (GangScheduling: once assumed plus bound members reach
  ``minCount``; without it the first pod that fits). Every assumed pod is forgotten (and
  un-reserved) before the algorithm returns, last first: binding assumes them again;
* **placements** (``podGroupSchedulingPlacementAlgorithm``, TopologyAwareWorkloadScheduling):
  the PlacementGenerate plugin cuts the cluster into placements, the default algorithm runs
  inside each (the node walk kept to its nodes), and of the feasible placements the
  PlacementScore plugins pick one. Upstream breaks a tie between equal totals with
  ``rand.Int()`` (and tries placements in map order); kubesched tries them in generation
  order and keeps the first of the best, unless the scheduler's tie-break is ``random``.

The results say, per pod, what happened and what the binding cycle needs; the cycle in
``podgroup_cycle.py`` acts on them.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Callable, Sequence

from ..cache.cache import Cache, Snapshot, SnapshotError
from ..clock import Clock
from ..framework.cycle_state import PODS_TO_ACTIVATE, CycleState
from ..framework.placement import Assignment, Placement, PodGroupAssignments
from ..framework.podgroups import QueuedPodGroupInfo
from ..framework.preemption import PreemptionOutcome
from ..framework.queued_pod import QueuedPodInfo
from ..framework.runtime import Framework
from ..framework.runtime_binding import PERMIT_WAIT_REASONS
from ..framework.status import Code, Status
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from ..queue.nominator import Nominator
from ..queue.scheduling_queue import SchedulingQueue
from .algorithm import Algorithm
from .attempt import PlacementTrial
from .fit_error import FitError, NoNodesAvailableError
from .podgroup_results import (
    PERMIT_WAIT_MESSAGE,
    WAITING_ON_PREEMPTION,
    PodGroupAlgorithmResult,
    PodResult,
    fit_error_on_node,
    group_unschedulable,
    infeasible_reason,
    status_error_text,
    wrapped_error,
)
from .metrics import SchedulerMetrics, should_sample_plugins

__all__ = ["PodGroupAlgorithm"]

Revert = Callable[[], None]

_ROW = operator.attrgetter("row")


def _snapshot_owns(by_row: Sequence[NodeInfo | None], rows: list[int], nodes: Sequence[NodeInfo]) -> bool:
    """Whether each of ``nodes`` is the snapshot's own NodeInfo at its row (one C-level pass)."""
    try:
        return all(map(operator.is_, map(by_row.__getitem__, rows), nodes))
    except IndexError:
        return False


def _foreign_placement_problem(snapshot: Snapshot, placement: Placement) -> str:
    """Why upstream's ``Snapshot.AssumePlacement`` refuses a placement holding NodeInfos that
    are not the snapshot's own (a placement plugin's copies): the first such node, by name,
    missing or another instance. "" when it does not look: a placement of as many nodes as
    the snapshot is no restriction at all."""
    if len(placement.nodes) == snapshot.num_nodes:
        return ""
    for info in placement.nodes:
        own = snapshot.get(info.name)
        if own is None:
            return f"node {info.name} in placement is not present in snapshot"
        if own is not info:
            return f"node {info.name} in placement is not the same instance as in the snapshot"
    return ""


class PodGroupAlgorithm:
    """The algorithm half of ``Scheduler``'s pod-group cycle."""

    cache: Cache
    algorithm: Algorithm
    queue: SchedulingQueue
    nominator: Nominator
    clock: Clock
    metrics: SchedulerMetrics | None

    if TYPE_CHECKING:  # the scheduler's own (``Scheduler``, ``BindingCycle``); declared, not shadowed
        def _post_filter(self, fwk: Framework, state: CycleState, pod: PodInfo, err: FitError,
                         snapshot: Snapshot) -> tuple[str | None, PreemptionOutcome | None]: ...

        def _undo(self, fwk: Framework, state: CycleState, assumed: PodInfo, host: str) -> bool: ...

    def _pod_group_algorithm(self, fwk: Framework, group_state: CycleState, info: QueuedPodGroupInfo,
                             run_post_filters: bool = True, placements: bool = False) -> PodGroupAlgorithmResult:
        """``podGroupSchedulingAlgorithm``: with placements (TopologyAwareWorkloadScheduling)
        or without."""
        if placements:
            return self._placement_algorithm(fwk, group_state, info, run_post_filters)
        return self._default_algorithm(fwk, group_state, info, run_post_filters)

    # -- placements -------------------------------------------------------------------
    def _placement_algorithm(self, fwk: Framework, group_state: CycleState, info: QueuedPodGroupInfo,
                             run_post_filters: bool) -> PodGroupAlgorithmResult:
        snapshot = self.cache.snapshot()
        group_state.record_plugin_metrics = True  # upstream always records them here, for now
        nodes = snapshot.node_tuple()  # the parent: one tuple for as long as the nodes stay as they are
        placements, status = fwk.run_placement_generate(group_state, info, nodes)
        if status is not None and not status.is_success():
            return PodGroupAlgorithmResult(status=status)
        first: PodGroupAlgorithmResult | None = None
        feasible: list[tuple[Placement, PodGroupAlgorithmResult]] = []
        trials: list[PlacementTrial] = []
        by_row = snapshot.node_infos
        for placement in placements:
            if placement.nodes is nodes:  # the parent itself: every node, no restriction
                snapshot.forget_placement()
            else:
                rows = list(map(_ROW, placement.nodes))
                if _snapshot_owns(by_row, rows, placement.nodes):
                    try:
                        snapshot.assume_placement(placement.name, rows)
                    except SnapshotError as err:
                        return PodGroupAlgorithmResult(status=Status(
                            Code.ERROR, f"failed to assume pod group placement: {err}"))
                else:
                    problem = _foreign_placement_problem(snapshot, placement)
                    if problem:
                        return PodGroupAlgorithmResult(status=Status(
                            Code.ERROR, f"failed to assume pod group placement: {problem}"))
                    snapshot.forget_placement()  # as many nodes as the snapshot: no restriction
            try:
                result = self._default_algorithm(fwk, group_state, info, run_post_filters)
            finally:
                snapshot.forget_placement()
            if result.status is not None and result.status.code == Code.ERROR:
                return result
            if first is None:
                first = result
            ok = result.status is None or result.waiting_on_preemption
            trials.append(PlacementTrial(placement.name, len(placement.nodes), ok,
                                         reason="" if ok else infeasible_reason(result)))
            if ok:
                result.placement = placement
                feasible.append((placement, result))
        if first is None:  # no placement at all: nothing was tried
            return PodGroupAlgorithmResult(status=group_unschedulable(), trials=trials)
        if not feasible:
            previous = first.status or group_unschedulable()
            first.status = Status(Code.UNSCHEDULABLE, f"0/{len(placements)} placements are available, "
                                                      f"first placement status: {status_error_text(previous)}")
            first.trials = trials
            return first
        if len(feasible) == 1:
            feasible[0][1].trials = trials
            return feasible[0][1]
        best, status = self._find_best_placement(fwk, group_state, info, feasible, trials)
        if best is None:
            return PodGroupAlgorithmResult(status=status, trials=trials)
        best.trials = trials
        return best

    def _find_best_placement(self, fwk: Framework, group_state: CycleState, info: QueuedPodGroupInfo,
                             feasible: list[tuple[Placement, PodGroupAlgorithmResult]],
                             trials: list[PlacementTrial]) -> tuple[PodGroupAlgorithmResult | None, Status | None]:
        assignments = [
            PodGroupAssignments(placement, [Assignment(r.queued.pod, r.host) for r in result.pod_results if r.host])
            for placement, result in feasible
        ]
        scores, status = fwk.run_placement_score(group_state, info, assignments)
        if status is not None and not status.is_success():
            return None, status
        totals = [s.total_score for s in scores]
        by_name = {t.name: t for t in trials}
        for (placement, _), total, plugin_scores in zip(feasible, totals, scores):
            trial = by_name.get(placement.name)
            if trial is not None:
                trial.score = total
                trial.plugin_scores = {p.name: p.score for p in plugin_scores.scores}
        top = max(totals)
        best = [i for i, total in enumerate(totals) if total == top]
        chosen = best[0]
        if len(best) > 1 and self.algorithm.tie_break == "random":
            chosen = best[self.algorithm.rng.randrange(len(best))]
        result = feasible[chosen][1]
        if len(best) > 1:
            result.tied = [feasible[i][0].name for i in best]
            result.tie_break = "random" if self.algorithm.tie_break == "random" else "first"
        return result, None

    # -- the pods in turn ---------------------------------------------------------------
    def _default_algorithm(self, fwk: Framework, group_state: CycleState, info: QueuedPodGroupInfo,
                           run_post_filters: bool) -> PodGroupAlgorithmResult:
        result = PodGroupAlgorithmResult()
        reverts: list[Revert] = []
        requires_preemption = False
        try:
            for queued in info.queued_pods:
                pod_result, revert = self._group_pod_algorithm(fwk, group_state, queued, run_post_filters)
                result.pod_results.append(pod_result)
                status = pod_result.status
                if status is not None and not status.is_success() and not pod_result.requires_preemption:
                    if status.is_rejected():
                        continue  # the group may still be feasible without this pod
                    message = "failed to schedule other pod from a pod group: " + status_error_text(status)
                    result.status = Status(Code.ERROR, message, error=wrapped_error(message, status.error))
                    result.waiting_on_preemption = False
                    break
                if revert is not None:
                    reverts.append(revert)
                requires_preemption = requires_preemption or pod_result.requires_preemption
                if pod_result.permit_status is None:  # Permit allowed it: the group is feasible
                    if requires_preemption:
                        result.status = group_unschedulable(WAITING_ON_PREEMPTION)
                        result.waiting_on_preemption = True
                    else:
                        result.status = None
        finally:
            for revert in reversed(reverts):  # upstream's deferred reverts: last assumed first
                revert()
        return result

    def _group_pod_algorithm(self, fwk: Framework, group_state: CycleState, queued: QueuedPodInfo,
                             run_post_filters: bool) -> tuple[PodResult, Revert | None]:
        """``podGroupPodSchedulingAlgorithm``: the pod's result and, when it was assumed (it
        fits, or needs preemption), how to forget it again."""
        pod = queued.pod
        state = CycleState()
        if self.metrics is not None:
            state.record_plugin_metrics = should_sample_plugins()
        state.write(PODS_TO_ACTIVATE, {})
        state.pod_group_cycle_state = group_state
        state.skip_all_post_filter_plugins = not run_post_filters
        out = PodResult(queued, state)
        started = self.clock.now()
        snapshot = self.cache.snapshot()
        try:
            try:
                out.result = self.algorithm.schedule_pod(fwk, state, pod, snapshot, self.queue.scheduling_cycle)
                out.host = out.result.suggested_host
            finally:
                out.walk = self.algorithm.last_walk
        except FitError as err:
            nominated, out.post_filter = self._post_filter(fwk, state, pod, err, snapshot)
            out.status, out.error, out.nominated = Status(Code.UNSCHEDULABLE, str(err)), err, nominated
            if not nominated:
                out.seconds = self.clock.now() - started
                return out, None
            out.host, out.requires_preemption = nominated, True  # assumed where preemption makes room
        except NoNodesAvailableError as err:
            out.status, out.error, out.nominated = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err)), err, ""
            out.seconds = self.clock.now() - started
            return out, None
        except Exception as err:  # FrameworkError, or a plugin that raised
            out.status, out.error, out.nominated = Status.as_error(err), err, ""
            out.seconds = self.clock.now() - started
            return out, None
        revert = self._assume_and_reserve(fwk, out)
        if revert is not None:
            self._permit(fwk, out)
            if out.permit_status is not None and out.permit_status.code != Code.WAIT:
                revert()
                revert = None
                out.status, out.host, out.nominated = out.permit_status, "", ""
                out.permit_status, out.requires_preemption = None, False
        out.seconds = self.clock.now() - started
        return out, revert

    def _assume_and_reserve(self, fwk: Framework, out: PodResult) -> Revert | None:
        """Assume the pod on ``out.host`` and run Reserve; how to undo both, or None (and
        ``out`` failed) when either failed."""
        pod, host, state = out.queued.pod, out.host, out.state
        assumed = pod.copy_with(node_name=host)
        try:
            self.cache.assume_pod(assumed, host)
        except Exception as err:
            out.status, out.error, out.host, out.nominated = Status.as_error(err), err, "", ""
            out.requires_preemption = False
            return None
        # upstream's assume: DeleteNominatedPodIfExists, whatever the pod says; the revert puts
        # back only the nomination the pod itself carries (status.nominatedNodeName)
        nominated = pod.nominated_node_name
        self.nominator.delete(pod)

        def revert() -> None:
            self._undo(fwk, state, assumed, host)
            if nominated:  # the nomination holds again
                self.nominator.add(pod, nominated)

        try:
            status = fwk.run_reserve(state, assumed, host)
        except Exception as err:
            status = Status.as_error(err)
        if status is not None:
            revert()
            out.status, out.error, out.host, out.nominated = status, None, "", ""
            out.requires_preemption = False
            if status.is_rejected():  # upstream: a FitError naming only this node
                out.error = fit_error_on_node(pod.key, status)
            return None
        return revert

    def _permit(self, fwk: Framework, out: PodResult) -> None:
        """Permit on the assumed pod: ``out.permit_status`` None (allowed), Wait with upstream's
        message (the last waiting plugin's reason and the framework's), or the rejection."""
        state = out.state
        assumed = out.queued.pod.copy_with(node_name=out.host)
        try:
            status, waits = fwk.run_permit(state, assumed, out.host)
        except Exception as err:
            status, waits = Status.as_error(err), {}
        if status is not None and status.code == Code.WAIT:
            reasons = state.get(PERMIT_WAIT_REASONS) or {}
            last = list(reasons.values())[-1] if reasons else ""
            out.permit_status = Status(Code.WAIT, *(r for r in (last, PERMIT_WAIT_MESSAGE) if r),
                                       plugin=list(waits)[-1] if waits else "")
            return
        out.permit_status = status
        if status is not None and status.is_rejected():
            out.error = fit_error_on_node(out.queued.pod.key, status)
