"""The framework runner: calls a profile's plugins at each extension point.

Mirrors upstream's ``frameworkImpl``: the order of plugins, PreFilter's merging of
node sets and its Skip bookkeeping, Filter stopping at a node's first failing
plugin, Score's normalisation and weighting. Filters and scores run over the node
table in one go for batch plugins and node by node for per-node ones.

Each point's runs live by job: Filter in ``runtime_filter.py``, PreScore and Score in
``runtime_score.py``, Reserve through PostBind in ``runtime_binding.py``, a pod-group
cycle's PlacementGenerate and PlacementScore in ``runtime_placement.py``, its
PodGroupPostFilter (workload-aware preemption) in ``podgroup_post_filter.py``; ``Framework``
inherits them and keeps the plugin lists, introspection, PreEnqueue, PreFilter and
PostFilter here.
"""

from __future__ import annotations

from time import perf_counter
from typing import cast

from ..objects.pod import PodInfo
from .cycle_state import CycleState
from .interfaces import (
    BindPlugin,
    NodeToStatusReader,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    PermitPlugin,
    QueueSortPlugin,
    ReservePlugin,
)
from .measured import (
    MEASURED_METHODS,
    PluginObserver,
    PointObserver,
    SkipTally,
    code_label,
    count_evaluations,
    measured,
    second_status,
)
from .outcomes import EXTENSION_POINTS, POINT_METHODS, FilterOutcome, FrameworkError, ScoreOutcome, go_list
from .podgroup_post_filter import PodGroupPostFilterRuns
from .runtime_binding import BindingRuns
from .runtime_filter import FilterRuns
from .runtime_placement import PlacementRuns
from .runtime_score import ScoreRuns
from .runtime_sign import SignRuns
from .status import SKIP, Code, Status
from .views import SnapshotView

_ALL_NODES = PreFilterResult()  # immutable in effect: ``merge`` returns a new result or one of its inputs
_SKIP_CODE, _SUCCESS_CODE = Code.SKIP, Code.SUCCESS
_SKIP_SETS: dict[tuple[str, ...], frozenset[str]] = {}


def _skip_set(skipped: list[str]) -> frozenset[str]:
    """The plugins PreFilter skipped, as a set shared by every pod skipped alike (a profile
    has few such combinations; a frozenset per cycle costs more than looking one up)."""
    key = tuple(skipped)
    found = _SKIP_SETS.get(key)
    if found is None:
        if len(_SKIP_SETS) >= 1024:
            _SKIP_SETS.clear()
        found = _SKIP_SETS[key] = frozenset(skipped)
    return found


__all__ = ["Framework", "FilterOutcome", "ScoreOutcome", "FrameworkError", "go_list", "EXTENSION_POINTS", "POINT_METHODS"]


class Framework(FilterRuns, ScoreRuns, BindingRuns, SignRuns, PlacementRuns, PodGroupPostFilterRuns):
    """One profile's plugins, in order, with their score weights (``weights`` for Score,
    ``placement_weights`` for PlacementScore); ``workload_aware_preemption`` (the gate) gives
    the profile's DefaultPreemption the PodGroupPostFilter point."""

    def __init__(
        self,
        profile_name: str,
        points: dict[str, list[Plugin]],
        weights: dict[str, int],
        percentage_of_nodes_to_score: int | None = None,
        instances: dict[str, Plugin] | None = None,
        placement_weights: dict[str, int] | None = None,
        workload_aware_preemption: bool = False,
    ) -> None:
        self.profile_name = profile_name
        self.points: dict[str, list[Plugin]] = {p: list(points.get(p, [])) for p in EXTENSION_POINTS}
        self.weights = dict(weights)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.instances: dict[str, Plugin] = instances or {}
        self._observe_point: PointObserver | None = None
        self.observe_point = None  # extension-point timings (the live mode's metrics)
        self.observe_plugin: PluginObserver | None = None  # per-plugin timings, in sampled cycles
        self._plugin_evaluations: dict[tuple[str, str], int] | None = None
        self._pre_filter_tally: SkipTally | None = None
        self._pre_score_tally: SkipTally | None = None
        self._score_tally: SkipTally | None = None
        self._filter_tally: SkipTally | None = None
        # Each point's plugins as the protocol the point calls (build_framework checked them).
        pts = self.points
        self._pre_enqueue = cast(list[PreEnqueuePlugin], pts["preEnqueue"])
        sort = cast(list[QueueSortPlugin], pts["queueSort"])
        self.queue_sort: QueueSortPlugin | None = sort[0] if sort else None
        self._pre_filter = cast(list[PreFilterPlugin], pts["preFilter"])
        self._init_filters(pts["filter"])
        self._post_filter = cast(list[PostFilterPlugin], pts["postFilter"])
        self._init_scores(cast(list[PreScorePlugin], pts["preScore"]), pts["score"])
        self._reserve = cast(list[ReservePlugin], pts["reserve"])
        self._permit = cast(list[PermitPlugin], pts["permit"])
        self._pre_bind = cast(list[PreBindPlugin], pts["preBind"])
        self._init_pre_flights()
        self._bind = cast(list[BindPlugin], pts["bind"])
        self._post_bind = cast(list[PostBindPlugin], pts["postBind"])
        self._init_signing(pts)
        self._init_placements(pts["placementGenerate"], pts["placementScore"], placement_weights or {})
        self._init_pod_group_post_filter(self.instances, workload_aware_preemption)

    @property
    def observe_point(self) -> PointObserver | None:
        """Told of each extension point's run (point, status code, seconds); None: nothing is timed."""
        return self._observe_point

    @observe_point.setter
    def observe_point(self, observer: PointObserver | None) -> None:
        # Without an observer each point's method is its undecorated body, bound on the
        # instance: the timing wrapper's call is spared at every point of every cycle.
        self._observe_point = observer
        cls = type(self)
        for name in MEASURED_METHODS:
            body = getattr(getattr(cls, name, None), "__wrapped__", None)
            if body is None:
                continue
            if observer is None:
                self.__dict__[name] = body.__get__(self, cls)
            else:
                self.__dict__.pop(name, None)

    @property
    def plugin_evaluations(self) -> dict[tuple[str, str], int] | None:
        """Upstream's plugin_evaluation_total counted by this profile, (plugin, extension point)
        -> evaluations; None (simulate) counts nothing. Setting a dict turns counting on:
        the hot points then tally by skip set (``SkipTally``), and ``evaluation_counts``
        adds the tallies to what this dict counted plugin by plugin."""
        return self._plugin_evaluations

    @plugin_evaluations.setter
    def plugin_evaluations(self, evaluations: dict[tuple[str, str], int] | None) -> None:
        self._plugin_evaluations = evaluations
        on = evaluations is not None
        self._pre_filter_tally = SkipTally("PreFilter", [p.name for p in self._pre_filter]) if on else None
        self._pre_score_tally = SkipTally("PreScore", [p.name for p in self._pre_score]) if on else None
        self._score_tally = SkipTally("Score", [p.name for p in self._scores]) if on else None
        self._filter_tally = SkipTally("Filter", [p.name for p in self._filters]) if on else None

    def evaluation_counts(self) -> dict[tuple[str, str], int]:
        """Every evaluation counted so far, (plugin, extension point) -> count (empty when
        nothing is counted); read at scrape time."""
        if self._plugin_evaluations is None:
            return {}
        counted = dict(list(self._plugin_evaluations.items()))
        out: dict[tuple[str, str], int] = {}
        # In cycle order, point by point and plugin by plugin, as the counts first appear.
        for tally in (self._pre_filter_tally, self._filter_tally, self._pre_score_tally, self._score_tally):
            if tally is None:
                continue
            for name, count in tally.per_plugin().items():
                key = (name, tally.point)
                if count or key in counted:
                    out[key] = count + counted.pop(key, 0)
        out.update(counted)
        return out

    # -- introspection ------------------------------------------------------
    def plugin(self, name: str) -> Plugin | None:
        return self.instances.get(name)

    def plugin_names(self, point: str) -> list[str]:
        return [p.name for p in self.points[point]]

    def list_plugins(self) -> dict[str, list[dict[str, object]]]:
        out: dict[str, list[dict[str, object]]] = {}
        for point in EXTENSION_POINTS:
            entries: list[dict[str, object]] = []
            for p in self.points[point]:
                entry: dict[str, object] = {"name": p.name}
                if point == "score":
                    entry["weight"] = self.weights.get(p.name, 1)
                elif point == "placementScore":
                    entry["weight"] = self.placement_weights.get(p.name, 1)
                entries.append(entry)
            if entries:
                out[point] = entries
        return out

    # -- queueing -----------------------------------------------------------
    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for plugin in self._pre_enqueue:
            status = plugin.pre_enqueue(pod)
            if status is not None and not status.is_success():
                return status.with_plugin(plugin.name)
        return None

    # -- PreFilter ----------------------------------------------------------
    @measured("PreFilter", second_status)
    def run_pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView
    ) -> tuple[PreFilterResult, Status | None, list[str]]:
        """Returns the merged node set, the rejecting status (if any) and the plugins that narrowed."""
        result = _ALL_NODES
        skipped: list[str] = []
        narrowing: list[str] = []
        rejected: Status | None = None
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._pre_filter:
            started = perf_counter() if observe is not None else 0.0
            try:
                res, status = plugin.pre_filter(state, pod, snapshot)
            except Exception as err:  # a plugin bug must not lose the pod
                self._count_pre_filter_stop(plugin, skipped)
                return result, Status.as_error(err, plugin.name), narrowing
            if observe is not None:
                observe(plugin.name, "PreFilter", code_label(status), perf_counter() - started)
            if status is None:
                if res is None:  # the common answer: nothing to narrow, nothing to say
                    continue
            elif status.code == _SKIP_CODE:  # the other common answer: nothing to do for this pod
                skipped.append(plugin.name)
                continue
            elif status.code != _SUCCESS_CODE:
                status = status.with_plugin(plugin.name)
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    self._count_pre_filter_stop(plugin, skipped)
                    return result, status, narrowing
                if status.code == Code.UNSCHEDULABLE:
                    rejected = status
                    continue
                self._count_pre_filter_stop(plugin, skipped)
                return result, Status(
                    Code.ERROR, f'running PreFilter plugin "{plugin.name}": {status.message}', plugin=plugin.name
                ), narrowing
            if res is not None and not res.all_nodes():
                narrowing.append(plugin.name)
            result = result.merge(res)
            if not result.all_nodes() and not result.node_names:
                if len(narrowing) == 1:
                    msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) {go_list(sorted(narrowing))} simultaneously"
                self._count_pre_filter_stop(plugin, skipped)
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), narrowing
        skip = state.skip_filter_plugins = _skip_set(skipped)
        tally = self._pre_filter_tally
        if tally is not None:  # every plugin but the skipped ones evaluated (upstream: a Skip is no evaluation)
            by_skip = tally.by_skip
            by_skip[skip] = by_skip.get(skip, 0) + 1
        return result, rejected, narrowing

    def _count_pre_filter_stop(self, stopped_at: PreFilterPlugin, skipped: list[str]) -> None:
        """PreFilter stopped at ``stopped_at`` (rejected, failed or raised): the plugins up to
        it that did not Skip were evaluated, it included."""
        evaluations = self._plugin_evaluations
        if evaluations is None:
            return
        for plugin in self._pre_filter:
            if plugin.name not in skipped:
                count_evaluations(evaluations, plugin.name, "PreFilter", 1)
            if plugin is stopped_at:
                break


    # -- PostFilter ---------------------------------------------------------
    @measured("PostFilter", second_status)
    def run_post_filter(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        if state.skip_all_post_filter_plugins:  # a pod-group cycle's dry run (workload-aware preemption)
            return None, Status(Code.UNSCHEDULABLE, "All PostFilter plugins are skipped")
        reasons: list[str] = []
        # A rejecting plugin's result still counts (the last one given): preemption that found
        # no candidate answers "" to clear the pod's nomination, which must not be lost.
        kept: PostFilterResult | None = None
        for plugin in self._post_filter:
            result, status = plugin.post_filter(state, pod, filtered)
            if status is None or status.is_success():
                return result, Status(Code.SUCCESS, plugin=plugin.name)
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result, status.with_plugin(plugin.name)
            if status.code != Code.UNSCHEDULABLE:
                return None, Status.as_error(RuntimeError(status.message), plugin.name)
            if result is not None:
                kept = result
            reasons.extend(status.reasons)
        return kept, Status(Code.UNSCHEDULABLE, *reasons)
