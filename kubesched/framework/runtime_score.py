"""PreScore and Score for the framework runner: plugin scores, normalised, checked and weighted.

Upstream's ``RunPreScorePlugins`` and ``RunScorePlugins``: PreScore's Skip bookkeeping,
each Score plugin over the feasible rows (batch or per node), its NormalizeScore, the
range check and the weights, with every plugin's scores summed as one array. Its own
module as the runner's second hot path; ``Framework`` (``runtime.py``) inherits it.
"""

from __future__ import annotations

from time import perf_counter
from typing import cast

import numpy as np

from ..objects.pod import PodInfo
from .cycle_state import CycleState
from .interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BatchScorePlugin,
    Plugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from .measured import PluginObserver, PointObserver, SkipTally, code_label, measured, no_status, own_status
from .outcomes import FrameworkError, ScoreOutcome
from .status import Code, Status
from .views import RowArray, SnapshotView

__all__ = ["ScoreRuns"]

_max = np.maximum.reduce  # ndarray.max() without its Python-level wrapper
_SUCCESS_CODE, _SKIP_CODE = Code.SUCCESS, Code.SKIP


class ScoreRuns:
    """The PreScore and Score points of ``Framework``: their plugins, weights and runs."""

    observe_point: PointObserver | None
    observe_plugin: PluginObserver | None
    _pre_score_tally: SkipTally | None
    _score_tally: SkipTally | None
    weights: dict[str, int]
    _pre_score: list[PreScorePlugin]
    _scores: list[Plugin]
    _score_forms: list[tuple[str, BatchScorePlugin | None, ScorePlugin | None, ScoreExtensions | None]]
    _weight_columns: dict[tuple[str, ...], np.ndarray]

    def _init_scores(self, pre_score: list[PreScorePlugin], scores: list[Plugin]) -> None:
        self._pre_score = pre_score
        self._scores = scores
        self._score_forms = [
            (
                p.name,
                p if isinstance(p, BatchScorePlugin) else None,
                None if isinstance(p, BatchScorePlugin) else cast(ScorePlugin, p),
                p if isinstance(p, ScoreExtensions) else None,
            )
            for p in self._scores
        ]
        self._weight_columns = {}  # active score plugins -> weights

    def has_score_plugins(self) -> bool:
        return bool(self._scores)

    @measured("PreScore", own_status)
    def run_pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        skipped: set[str] = set()
        observe = self.observe_plugin if state.record_plugin_metrics else None
        plugin: PreScorePlugin | None = None
        try:
            for plugin in self._pre_score:
                started = perf_counter() if observe is not None else 0.0
                status = plugin.pre_score(state, pod, snapshot, rows)
                if observe is not None:
                    observe(plugin.name, "PreScore", code_label(status), perf_counter() - started)
                if status is None:
                    continue
                code = status.code
                if code == _SUCCESS_CODE:
                    continue
                if code == _SKIP_CODE:
                    skipped.add(plugin.name)
                    continue
                self._tally_pre_score(skipped, plugin, True)
                return Status(Code.ERROR, f'running PreScore plugin "{plugin.name}": {status.message}',
                              plugin=plugin.name)
        except Exception:
            if plugin is not None:
                self._tally_pre_score(skipped, plugin, False)
            raise
        skip = state.skip_score_plugins = frozenset(skipped)
        tally = self._pre_score_tally
        if tally is not None:  # every plugin but the skipped ones evaluated (a Skip is none)
            by_skip = tally.by_skip
            by_skip[skip] = by_skip.get(skip, 0) + 1
        return None

    def _tally_pre_score(self, skipped: set[str], stopped_at: PreScorePlugin, evaluated: bool) -> None:
        """PreScore stopped at ``stopped_at``: the plugins before it that did not Skip were
        evaluated, and it too when it answered (``evaluated``) rather than raised."""
        tally = self._pre_score_tally
        if tally is None:
            return
        after = self._pre_score[self._pre_score.index(stopped_at) + (1 if evaluated else 0):]
        key = frozenset(skipped.union(p.name for p in after))
        tally.by_skip[key] = tally.by_skip.get(key, 0) + 1

    @measured("Score", no_status)
    def run_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> ScoreOutcome:
        outcome = ScoreOutcome(rows=rows)
        count = len(rows)
        node_infos = snapshot.node_infos
        skip = state.skip_score_plugins
        names: list[str] = []
        results: list[np.ndarray] = []
        observe = self.observe_plugin if state.record_plugin_metrics else None
        name = ""
        try:
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
        except Exception:
            self._tally_score(skip, names + [name], count)
            raise
        self._tally_score(skip, None, count)
        if not names:
            outcome.total = np.zeros(count, dtype=np.int64)
            return outcome
        # All plugins' scores as one array: a handful of operations whatever their number.
        try:
            stacked = np.array(results, dtype=np.int64)
            stacked_ok = stacked.shape == (len(names), count)
        except ValueError:
            stacked_ok = False
        if not stacked_ok:  # a plugin's scores are not one per row: broadcast them, or fail naming it
            stacked = np.empty((len(names), count), dtype=np.int64)
            for i, scores in enumerate(results):
                try:
                    stacked[i] = scores
                except ValueError as err:
                    raise FrameworkError(f"plugin {names[i]!r} returned {scores.shape} scores for {count} nodes") from err
        # One reduction checks both bounds: a negative int64 is a huge uint64.
        if count and _max(stacked.view(np.uint64), axis=None) > MAX_NODE_SCORE:
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
        stacked *= weights  # a new array, the scores' copy: weighted in place
        outcome.by_plugin = dict(zip(names, stacked))
        outcome.total = np.add.reduce(stacked, axis=0)
        return outcome

    def _tally_score(self, skip: frozenset[str], reached: list[str] | None, count: int) -> None:
        """Score's evaluations: one per scored row for each plugin PreScore did not skip;
        ``reached``: the plugins that ran before one raised, that one included."""
        tally = self._score_tally
        if tally is None:
            return
        if reached is not None:
            skip = frozenset(skip.union(n for n in tally.names if n not in reached))
        tally.by_skip[skip] = tally.by_skip.get(skip, 0) + count
