"""Filter for the framework runner: every filter plugin over the candidate rows.

Upstream's ``RunFilterPlugins``: a node stops at its first failing plugin. Batch plugins
run over the node table in one call each; per-node plugins run row by row, possibly
later and on a window of rows only, still seeing the first-failing-plugin order. Its
own module because this is the runner's hot path and its largest piece of bookkeeping;
``Framework`` (``runtime.py``) inherits it.
"""

from __future__ import annotations

from time import perf_counter
from typing import cast

import numpy as np

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from .cycle_state import CycleState
from .interfaces import BatchFilterPlugin, FilterPlugin, Plugin
from .measured import PluginObserver, SkipTally, count_evaluations
from .outcomes import FilterOutcome, FrameworkError, no_rejections
from .status import Code, Status
from .views import BoolArray, RowArray, SnapshotView

__all__ = ["FilterRuns"]


class FilterRuns:
    """The Filter point of ``Framework``: its filter plugins in both forms, and their runs."""

    observe_plugin: PluginObserver | None
    plugin_evaluations: dict[tuple[str, str], int] | None
    _filter_tally: SkipTally | None
    _filters: list[Plugin]
    _filter_forms: list[tuple[int, str, BatchFilterPlugin | None, FilterPlugin | None]]
    _node_filters: list[tuple[int, str, FilterPlugin]]
    _node_filter_names: frozenset[str]
    _filter_positions: dict[str, int]

    def _init_filters(self, filters: list[Plugin]) -> None:
        self._filters = filters
        # Filters in order: (position, name, batch form or None, per-node form or None).
        self._filter_forms = [
            (i, p.name, p if isinstance(p, BatchFilterPlugin) else None, None if isinstance(p, BatchFilterPlugin) else cast(FilterPlugin, p))
            for i, p in enumerate(self._filters)
        ]
        self._node_filters = [(i, name, f) for i, name, _, f in self._filter_forms if f is not None]
        # For one row: the per-node form where a plugin has it (both forms agree), else the batch form.
        self._row_forms: list[tuple[str, FilterPlugin | None, BatchFilterPlugin | None]] = [
            (name, f if f is not None else (cast(FilterPlugin, b) if isinstance(b, FilterPlugin) else None), b)
            for _, name, b, f in self._filter_forms
        ]
        self._node_filter_names = frozenset(name for _, name, _ in self._node_filters)
        # The row forms less the plugins PreFilter skipped, by the skipped set (pods of one
        # kind skip the same plugins, and PreFilter hands them one shared set).
        self._row_forms_active: dict[frozenset[str], list[tuple[str, FilterPlugin | None, BatchFilterPlugin | None]]] = {}
        self._filter_positions = {name: i for i, name, _, _ in self._filter_forms}

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

    def run_filters(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray,
                    count: bool = True) -> FilterOutcome:
        """Filter every candidate row; a row stops at its first failing plugin.

        ``candidates`` is a bool mask over table rows (live nodes the PreFilter allowed).
        Per-node plugins run on every candidate here; ``run_batch_filters`` and
        ``run_node_filters`` split the work so that they run only on a window.
        ``count=False`` leaves ``plugin_evaluations`` alone: the node walk counts the rows
        it visited afterwards (``count_filter_evaluations``), as upstream asks only those.
        """
        outcome = self.run_batch_filters(state, pod, snapshot, candidates, count)
        if self.has_node_filters(state):
            self.run_node_filters(state, pod, snapshot, outcome, np.flatnonzero(candidates), count)
        return outcome

    def run_batch_filters(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray,
                          count: bool = True) -> FilterOutcome:
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
        evaluations = self.plugin_evaluations if count else None
        for position, name, batch, _ in self._filter_forms:
            if batch is None or (skip and name in skip):
                continue
            if shrunk:
                if not np.count_nonzero(undecided):  # (cheaper than .any() on a bool array)
                    break
                shrunk = False
            if evaluations is not None:  # one evaluation per row asked, counted in one step
                count_evaluations(evaluations, name, "Filter", int(np.count_nonzero(undecided)))
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
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, outcome: FilterOutcome, rows: RowArray,
        count: bool = True,
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
        evaluations = self.plugin_evaluations if count else None
        for position, name, plugin in self._node_filters:
            if skip and name in skip:
                continue
            asked = rows[rejected_at[rows] > position].tolist()  # rows no earlier plugin rejected
            if evaluations is not None:
                count_evaluations(evaluations, name, "Filter", len(asked))
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

    def count_filter_evaluations(self, state: CycleState, outcome: FilterOutcome, visited: RowArray) -> None:
        """Add to ``plugin_evaluations`` what upstream's walk counts at Filter: each visited
        row once for every plugin it reached (a row stops at its first rejecting plugin;
        plugins PreFilter skipped are not asked). The walk filters all candidates in batch
        but visits only a prefix of them, so runs with ``count=False`` are counted here."""
        evaluations = self.plugin_evaluations
        if evaluations is None or not len(visited):
            return
        skip = state.skip_filter_plugins
        index = outcome.status_index[visited] if outcome.statuses else None  # no status: no row rejected
        rejected = index >= 0 if index is not None else None
        if rejected is None or not np.count_nonzero(rejected):
            # the usual walk: every plugin PreFilter did not skip was asked about every row
            tally = self._filter_tally
            if tally is not None:
                tally.by_skip[skip] = tally.by_skip.get(skip, 0) + len(visited)
                return
            asked = [len(visited)] * (len(self._filters) + 1)
        else:
            assert index is not None
            size = len(self._filters)
            positions = self._filter_positions
            at_status = np.array([positions.get(s.plugin, size) for s in outcome.statuses], dtype=np.int64)
            reached = np.full(len(visited), size, dtype=np.int64)
            reached[rejected] = at_status[index[rejected]]
            # rows whose first rejection is at or after each position, i.e. rows that plugin was asked about
            asked = np.bincount(reached, minlength=size + 1)[::-1].cumsum()[::-1].tolist()
        for position, name, _, _ in self._filter_forms:
            if asked[position] and not (skip and name in skip):
                count_evaluations(evaluations, name, "Filter", asked[position])

    @staticmethod
    def outcome_of_rows(passed: BoolArray, rejected: list[tuple[int, Status]]) -> FilterOutcome:
        """The outcome of a walk that filtered a few rows one at a time: the rows of ``passed``
        (a mask over the table, read only) passed, each of ``rejected`` failed with its
        status; no other row was filtered."""
        size = len(passed)
        if not rejected:
            return FilterOutcome(no_rejections(size), [], passed)
        status_index = np.full(size, -1, dtype=np.int32)
        statuses: list[Status] = []
        memo: dict[Status, int] = {}
        for row, status in rejected:
            idx = memo.get(status)
            if idx is None:
                idx = memo[status] = len(statuses)
                statuses.append(status)
            status_index[row] = idx
        return FilterOutcome(status_index, statuses, passed)

    def run_filters_on_row(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, row: int) -> Status | None:
        """Every filter on one live row, in order, to the first rejection (upstream's
        ``RunFilterPlugins`` on one node: OpportunisticBatching's checks of a single node).

        A plugin with both forms is asked in its per-node form (the contract suite checks
        that the forms agree): a batch filter computes every row of the table, wasted here.
        """
        info = snapshot.node_infos[row]
        assert info is not None, row
        skip = state.skip_filter_plugins
        forms = self._row_forms_active.get(skip)
        if forms is None:  # the first pod PreFilter skipped these plugins for
            if len(self._row_forms_active) >= 256:
                self._row_forms_active.clear()
            forms = self._row_forms_active[skip] = [f for f in self._row_forms if f[0] not in skip]
        mask: np.ndarray | None = None
        evaluations = self.plugin_evaluations
        for name, single, batch in forms:
            if evaluations is not None:
                count_evaluations(evaluations, name, "Filter", 1)
            try:
                if single is not None:
                    status = single.filter(state, pod, info)
                else:
                    assert batch is not None
                    if mask is None:
                        mask = np.zeros(len(snapshot.table.alive), dtype=bool)
                        mask[row] = True
                        mask.flags.writeable = False
                    verdicts = batch.filter_nodes(state, pod, snapshot, mask)
                    code = int(verdicts.codes[row])
                    status = verdicts.statuses[code - 1] if code else None
            except Exception as err:
                raise FrameworkError(f'running "{name}" filter plugin: {err}') from err
            if status is not None and status.code != Code.SUCCESS:
                if status.code == Code.ERROR:
                    raise FrameworkError(f'running "{name}" filter plugin: {status.message}')
                return status.with_plugin(name)
        return None

    def run_filters_on_node(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: SnapshotView) -> Status | None:
        """Every filter on one node, in order (used by preemption's what-if checks)."""
        mask = np.zeros(snapshot.table.size, dtype=bool)
        mask[node.row] = True
        outcome = self.run_filters(state, pod, snapshot, mask)
        return outcome.status_of(node.row)
