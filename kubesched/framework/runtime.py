"""The framework runner: calls a profile's plugins at each extension point.

Mirrors upstream's ``frameworkImpl``: the order of plugins, PreFilter's merging of
node sets and its Skip bookkeeping, Filter stopping at a node's first failing
plugin, Score's normalisation and weighting. Filters and scores run over the node
table in one go for batch plugins and node by node for per-node ones.
"""

from __future__ import annotations

from time import perf_counter
from typing import cast

import numpy as np

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from .cycle_state import CycleState
from .interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BatchFilterPlugin,
    BatchScorePlugin,
    BindPlugin,
    FilterPlugin,
    NodeToStatusReader,
    NodeVerdicts,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreBindPreFlight,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    PermitPlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from .outcomes import (
    EXTENSION_POINTS,
    MAX_PERMIT_TIMEOUT,
    POINT_METHODS,
    FilterOutcome,
    FrameworkError,
    ScoreOutcome,
    go_list,
    no_rejections,
)
from .measured import PluginObserver, PointObserver, code_label, first_status, measured, no_status, own_status, second_status
from .status import Code, Status
from .views import BoolArray, RowArray, SnapshotView

__all__ = ["Framework", "FilterOutcome", "ScoreOutcome", "FrameworkError", "go_list", "EXTENSION_POINTS", "POINT_METHODS"]


class Framework:
    """One profile's plugins, in order, with their score weights."""

    def __init__(
        self,
        profile_name: str,
        points: dict[str, list[Plugin]],
        weights: dict[str, int],
        percentage_of_nodes_to_score: int | None = None,
        instances: dict[str, Plugin] | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.points: dict[str, list[Plugin]] = {p: list(points.get(p, [])) for p in EXTENSION_POINTS}
        self.weights = dict(weights)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.instances: dict[str, Plugin] = instances or {}
        self.observe_point: PointObserver | None = None  # extension-point timings (the live mode's metrics)
        self.observe_plugin: PluginObserver | None = None  # per-plugin timings, in sampled cycles
        # Each point's plugins as the protocol the point calls (build_framework checked them).
        pts = self.points
        self._pre_enqueue = cast(list[PreEnqueuePlugin], pts["preEnqueue"])
        sort = cast(list[QueueSortPlugin], pts["queueSort"])
        self.queue_sort: QueueSortPlugin | None = sort[0] if sort else None
        self._pre_filter = cast(list[PreFilterPlugin], pts["preFilter"])
        self._filters = pts["filter"]
        self._post_filter = cast(list[PostFilterPlugin], pts["postFilter"])
        self._pre_score = cast(list[PreScorePlugin], pts["preScore"])
        self._scores = pts["score"]
        self._reserve = cast(list[ReservePlugin], pts["reserve"])
        self._permit = cast(list[PermitPlugin], pts["permit"])
        self._pre_bind = cast(list[PreBindPlugin], pts["preBind"])
        self._bind = cast(list[BindPlugin], pts["bind"])
        self._post_bind = cast(list[PostBindPlugin], pts["postBind"])
        # Filters in order: (position, name, batch form or None, per-node form or None).
        self._filter_forms: list[tuple[int, str, BatchFilterPlugin | None, FilterPlugin | None]] = [
            (i, p.name, p if isinstance(p, BatchFilterPlugin) else None, None if isinstance(p, BatchFilterPlugin) else cast(FilterPlugin, p))
            for i, p in enumerate(self._filters)
        ]
        self._node_filters = [(i, name, f) for i, name, _, f in self._filter_forms if f is not None]
        self._node_filter_names = frozenset(name for _, name, _ in self._node_filters)
        self._score_forms: list[tuple[str, BatchScorePlugin | None, ScorePlugin | None, ScoreExtensions | None]] = [
            (
                p.name,
                p if isinstance(p, BatchScorePlugin) else None,
                None if isinstance(p, BatchScorePlugin) else cast(ScorePlugin, p),
                p if isinstance(p, ScoreExtensions) else None,
            )
            for p in self._scores
        ]
        self._weight_columns: dict[tuple[str, ...], np.ndarray] = {}  # active score plugins -> weights

    # -- introspection ------------------------------------------------------
    def plugin(self, name: str) -> Plugin | None:
        return self.instances.get(name)

    def plugin_names(self, point: str) -> list[str]:
        return [p.name for p in self.points[point]]

    def has_filter_plugins(self) -> bool:
        return bool(self._filters)

    def has_node_filters(self, state: CycleState | None = None) -> bool:
        """Whether a filter plugin has only the per-node form (then filtering is windowed).

        With ``state``, only the plugins PreFilter did not skip for this pod count: a pod
        that every per-node plugin skips (no volumes, say) is filtered in batch alone.
        """
        if state is None or not state.skip_filter_plugins:
            return bool(self._node_filters)
        return not self._node_filter_names <= state.skip_filter_plugins

    def has_score_plugins(self) -> bool:
        return bool(self._scores)

    def list_plugins(self) -> dict[str, list[dict[str, object]]]:
        out: dict[str, list[dict[str, object]]] = {}
        for point in EXTENSION_POINTS:
            entries: list[dict[str, object]] = []
            for p in self.points[point]:
                entry: dict[str, object] = {"name": p.name}
                if point == "score":
                    entry["weight"] = self.weights.get(p.name, 1)
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
        result = PreFilterResult()
        skipped: set[str] = set()
        narrowing: list[str] = []
        rejected: Status | None = None
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._pre_filter:
            started = perf_counter() if observe is not None else 0.0
            try:
                res, status = plugin.pre_filter(state, pod, snapshot)
            except Exception as err:  # a plugin bug must not lose the pod
                return result, Status.as_error(err, plugin.name), narrowing
            if observe is not None:
                observe(plugin.name, "PreFilter", code_label(status), perf_counter() - started)
            if status is not None and status.is_skip():
                skipped.add(plugin.name)
                continue
            if status is not None and not status.is_success():
                status = status.with_plugin(plugin.name)
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return result, status, narrowing
                if status.code == Code.UNSCHEDULABLE:
                    rejected = status
                    continue
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
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), narrowing
        state.skip_filter_plugins = frozenset(skipped)
        return result, rejected, narrowing

    # -- Filter -------------------------------------------------------------
    def run_filters(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> FilterOutcome:
        """Filter every candidate row; a row stops at its first failing plugin.

        ``candidates`` is a bool mask over table rows (live nodes the PreFilter allowed).
        Per-node plugins run on every candidate here; ``run_batch_filters`` and
        ``run_node_filters`` split the work so that they run only on a window.
        """
        outcome = self.run_batch_filters(state, pod, snapshot, candidates)
        if self.has_node_filters(state):
            self.run_node_filters(state, pod, snapshot, outcome, np.flatnonzero(candidates))
        return outcome

    def run_batch_filters(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> FilterOutcome:
        """The batch-form filters over all candidate rows, in order; per-node ones are left
        for ``run_node_filters``. ``passed`` then means "no batch filter rejected the row"."""
        size = len(candidates)
        status_index: np.ndarray | None = None  # allocated at the first rejection
        rejected_at: np.ndarray | None = None
        if self.has_node_filters(state):
            rejected_at = np.full(size, len(self._filters), dtype=np.int16)
        statuses: list[Status] = []
        undecided = candidates  # never written in place: a new array whenever rows drop out
        shrunk = True  # whether to check for an empty ``undecided`` before the next plugin
        skip = state.skip_filter_plugins
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for position, name, batch, _ in self._filter_forms:
            if batch is None or (skip and name in skip):
                continue
            if shrunk:
                if not undecided.any():
                    break
                shrunk = False
            started = perf_counter() if observe is not None else 0.0
            try:
                verdicts = batch.filter_nodes(state, pod, snapshot, undecided)
            except Exception as err:
                raise FrameworkError(f'running "{name}" filter plugin: {err}') from err
            if observe is not None:  # one observation per batch call (upstream: one per node asked)
                observe(name, "Filter", "Success", perf_counter() - started)
            if not verdicts.statuses:
                continue  # no status to fail with: every row passes
            codes = verdicts.codes[:size]
            for k, status in enumerate(verdicts.statuses, start=1):
                if status.code == Code.ERROR and (undecided & (codes == k)).any():
                    raise FrameworkError(f'running "{name}" filter plugin: {status.message}')
            failed = undecided & (codes > 0)
            if failed.any():
                if status_index is None:
                    status_index = np.full(size, -1, dtype=np.int32)
                base = len(statuses)
                statuses.extend(s.with_plugin(name) for s in verdicts.statuses)
                status_index[failed] = codes[failed] - 1 + base
                if rejected_at is not None:
                    rejected_at[failed] = position
                undecided = undecided & ~failed
                shrunk = True
        if status_index is None:
            status_index = no_rejections(size)
        return FilterOutcome(status_index, statuses, undecided, rejected_at)

    def run_node_filters(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, outcome: FilterOutcome, rows: RowArray
    ) -> None:
        """Run the per-node filters on ``rows`` (candidates), updating ``outcome`` in place.

        A per-node plugin is asked about a row only if no plugin before it in filter
        order rejected the row, so the row's status is upstream's first failing plugin.
        """
        if not self._node_filters or not len(rows):
            return
        rejected_at = outcome.rejected_at
        if rejected_at is None:  # pragma: no cover - run_batch_filters always sets it
            raise FrameworkError("run_node_filters needs an outcome of run_batch_filters")
        if not outcome.owns_arrays:
            outcome.status_index = outcome.status_index.copy() if outcome.status_index.flags.writeable else np.full(
                len(outcome.passed), -1, dtype=np.int32)
            outcome.passed = outcome.passed.copy()
            outcome.owns_arrays = True
        status_index, passed, statuses = outcome.status_index, outcome.passed, outcome.statuses
        node_infos = snapshot.node_infos
        skip = state.skip_filter_plugins
        memo: dict[Status, int] = {}
        for position, name, plugin in self._node_filters:
            if skip and name in skip:
                continue
            asked = rows[rejected_at[rows] > position].tolist()  # rows no earlier plugin rejected
            check = plugin.filter
            try:  # candidate rows are live: their node infos exist
                answers = [check(state, pod, node_infos[row]) for row in asked]
            except Exception as err:
                raise FrameworkError(f'running "{name}" filter plugin: {err}') from err
            for row, status in zip(asked, answers):
                if status is None or status.code == Code.SUCCESS:
                    continue
                if status.code == Code.ERROR:
                    raise FrameworkError(f'running "{name}" filter plugin: {status.message}')
                status = status.with_plugin(name)
                idx = memo.get(status)
                if idx is None:
                    idx = memo[status] = len(statuses)
                    statuses.append(status)
                status_index[row] = idx
                rejected_at[row] = position
                passed[row] = False

    def run_filters_on_node(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: SnapshotView) -> Status | None:
        """Every filter on one node, in order (used by preemption's what-if checks)."""
        mask = np.zeros(snapshot.table.size, dtype=bool)
        mask[node.row] = True
        outcome = self.run_filters(state, pod, snapshot, mask)
        return outcome.status_of(node.row)

    # -- PostFilter ---------------------------------------------------------
    @measured("PostFilter", second_status)
    def run_post_filter(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        reasons: list[str] = []
        for plugin in self._post_filter:
            result, status = plugin.post_filter(state, pod, filtered)
            if status is None or status.is_success():
                return result, Status(Code.SUCCESS, plugin=plugin.name)
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result, status.with_plugin(plugin.name)
            if status.code != Code.UNSCHEDULABLE:
                return None, Status.as_error(RuntimeError(status.message), plugin.name)
            reasons.extend(status.reasons)
        return None, Status(Code.UNSCHEDULABLE, *reasons)

    # -- PreScore / Score ---------------------------------------------------
    @measured("PreScore", own_status)
    def run_pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        skipped = set()
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._pre_score:
            started = perf_counter() if observe is not None else 0.0
            status = plugin.pre_score(state, pod, snapshot, rows)
            if observe is not None:
                observe(plugin.name, "PreScore", code_label(status), perf_counter() - started)
            if status is None or status.is_success():
                continue
            if status.is_skip():
                skipped.add(plugin.name)
                continue
            return Status(Code.ERROR, f'running PreScore plugin "{plugin.name}": {status.message}', plugin=plugin.name)
        state.skip_score_plugins = frozenset(skipped)
        return None

    @measured("Score", no_status)
    def run_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> ScoreOutcome:
        outcome = ScoreOutcome(rows=rows)
        count = len(rows)
        node_infos = snapshot.node_infos
        skip = state.skip_score_plugins
        names: list[str] = []
        results: list[np.ndarray] = []
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for name, batch, per_node, extensions in self._score_forms:
            if skip and name in skip:
                continue
            started = perf_counter() if observe is not None else 0.0
            if batch is not None:
                scores = np.asarray(batch.score_nodes(state, pod, snapshot, rows), dtype=np.int64)
            else:
                assert per_node is not None
                score = per_node.score  # feasible rows are live: their node infos exist
                scores = np.array([score(state, pod, node_infos[row]) for row in rows.tolist()],
                                  dtype=np.int64)
            if extensions is not None:
                normalized = extensions.normalize_score(state, pod, scores)
                if normalized is not None:
                    scores = np.asarray(normalized, dtype=np.int64)
            if observe is not None:
                observe(name, "Score", "Success", perf_counter() - started)
            names.append(name)
            results.append(scores)
        if not names:
            outcome.total = np.zeros(count, dtype=np.int64)
            return outcome
        # All plugins' scores as one array: a handful of operations whatever their number.
        stacked = np.empty((len(names), count), dtype=np.int64)
        for i, scores in enumerate(results):
            try:
                stacked[i] = scores
            except ValueError as err:
                raise FrameworkError(f"plugin {names[i]!r} returned {scores.shape} scores for {count} nodes") from err
        # One reduction checks both bounds: a negative int64 is a huge uint64.
        if count and np.maximum.reduce(stacked.view(np.uint64), axis=1).max() > MAX_NODE_SCORE:
            for name, scores in zip(names, stacked):
                if scores.max() > MAX_NODE_SCORE or scores.min() < MIN_NODE_SCORE:
                    bad = int(scores.max() if scores.max() > MAX_NODE_SCORE else scores.min())
                    raise FrameworkError(
                        f"plugin {name!r} returns an invalid score {bad}, "
                        f"it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
        weights = self._weight_columns.get(tuple(names))
        if weights is None:
            weights = np.array([[self.weights.get(name, 1)] for name in names], dtype=np.int64)
            self._weight_columns[tuple(names)] = weights
        weighted = stacked * weights
        outcome.by_plugin = dict(zip(names, weighted))
        outcome.total = np.add.reduce(weighted, axis=0)
        return outcome

    # -- Reserve / Permit / binding ----------------------------------------
    @measured("Reserve", own_status)
    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._reserve:
            started = perf_counter() if observe is not None else 0.0
            status = plugin.reserve(state, pod, node_name)
            if observe is not None:
                observe(plugin.name, "Reserve", code_label(status), perf_counter() - started)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running Reserve plugin "{plugin.name}": {status.message}', plugin=plugin.name)
        return None

    @measured("Unreserve", no_status)
    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order; one that raises does not keep
        the others from releasing what they hold. The first error is raised at the end."""
        first: Exception | None = None
        for plugin in reversed(self._reserve):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception as err:
                first = first or FrameworkError(f'running Unreserve plugin "{plugin.name}": {err}')
        if first is not None:
            raise first

    @measured("Permit", first_status)
    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, dict[str, float]]:
        """A rejecting status; or Wait with each waiting plugin's timeout (capped at 15 min); or None."""
        waits: dict[str, float] = {}
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._permit:
            started = perf_counter() if observe is not None else 0.0
            status, timeout = plugin.permit(state, pod, node_name)
            if observe is not None:
                observe(plugin.name, "Permit", code_label(status), perf_counter() - started)
            if status is None or status.is_success():
                continue
            if status.is_rejected():
                return status.with_plugin(plugin.name), {}
            if status.code == Code.WAIT:
                waits[plugin.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                continue
            return Status(Code.ERROR, f'running Permit plugin "{plugin.name}": {status.message}', plugin=plugin.name), {}
        if waits:
            return Status(Code.WAIT), waits
        return None, {}

    def pre_bind_skipped(self, state: CycleState, pod: PodInfo, node_name: str) -> bool:
        """Every PreBind plugin's pre-flight says Skip for this pod (none has anything to do)."""
        for plugin in self._pre_bind:
            if not isinstance(plugin, PreBindPreFlight):
                return False
            status = plugin.pre_bind_pre_flight(state, pod, node_name)
            if status is None or not status.is_skip():
                return False
        return True

    @measured("PreBind", own_status)
    def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._pre_bind:
            started = perf_counter() if observe is not None else 0.0
            status = plugin.pre_bind(state, pod, node_name)
            if observe is not None:
                observe(plugin.name, "PreBind", code_label(status), perf_counter() - started)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running PreBind plugin "{plugin.name}": {status.message}', plugin=plugin.name)
        return None

    @measured("Bind", own_status)
    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if not self._bind:
            return Status(Code.ERROR, "no bind plugin is configured")
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._bind:
            started = perf_counter() if observe is not None else 0.0
            status = plugin.bind(state, pod, node_name)
            if observe is not None:
                observe(plugin.name, "Bind", code_label(status), perf_counter() - started)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running Bind plugin "{plugin.name}": {status.message}', plugin=plugin.name)
            return None
        return Status(Code.SKIP)

    @measured("PostBind", no_status)
    def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for plugin in self._post_bind:
            plugin.post_bind(state, pod, node_name)
