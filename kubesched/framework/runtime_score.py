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
from .measured import PluginObserver, PointObserver, code_label, count_evaluations, measured, no_status, own_status
from .outcomes import FrameworkError, ScoreOutcome
from .status import Code, Status
from .views import RowArray, SnapshotView

__all__ = ["ScoreRuns"]


class ScoreRuns:
    """The PreScore and Score points of ``Framework``: their plugins, weights and runs."""

    observe_point: PointObserver | None
    observe_plugin: PluginObserver | None
    plugin_evaluations: dict[tuple[str, str], int] | None
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
        skipped = set()
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._pre_score:
            started = perf_counter() if observe is not None else 0.0
            status = plugin.pre_score(state, pod, snapshot, rows)
            if observe is not None:
                observe(plugin.name, "PreScore", code_label(status), perf_counter() - started)
            if self.plugin_evaluations is not None and not (status is not None and status.is_skip()):
                count_evaluations(self.plugin_evaluations, plugin.name, "PreScore", 1)  # a Skip is none
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
        evaluations = self.plugin_evaluations
        for name, batch, per_node, extensions in self._score_forms:
            if skip and name in skip:
                continue
            if evaluations is not None:  # one per feasible node scored (NormalizeScore is none)
                count_evaluations(evaluations, name, "Score", count)
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
