"""Check (ii): scores are within 0..100 once NormalizeScore ran."""

from __future__ import annotations

from typing import Sequence, TypeVar

import numpy as np

from ..framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, BatchScorePlugin, Plugin, ScoreExtensions, ScorePlugin
from ..framework.registry import PluginSpec
from ..framework.views import IntArray, RowArray
from ..objects.pod import PodInfo
from ._support import (
    ContractError,
    ContractReport,
    as_scores,
    build,
    call,
    clusters_or_default,
    decode,
    new_state,
    prepare_scoring,
    score_rows,
)
from .clusters import RandomCluster

__all__ = ["assert_scores_in_range"]

A = TypeVar("A")


def assert_scores_in_range(
    spec: PluginSpec[A],
    args: object = None,
    clusters: Sequence[RandomCluster] | None = None,
) -> ContractReport:
    """Every score the plugin gives is within 0..100 once NormalizeScore (if it has one)
    ran: the framework rejects the cycle otherwise. Uses the batch form when there is one,
    as the framework does."""
    found = clusters_or_default(clusters)
    decoded = decode(spec, args)
    report = ContractReport(spec.name, ["scores in 0..100"], clusters=len(found))
    for cluster in found:
        plugin = build(spec, decoded, cluster)
        if not isinstance(plugin, (BatchScorePlugin, ScorePlugin)):
            raise ContractError(f"plugin {spec.name} has no score or score_nodes method")
        for pod in cluster.pods:
            report.pods += 1
            for rows in score_rows(pod, cluster):
                scores = _final_scores(plugin, pod, rows, cluster)
                if scores is None:
                    continue
                if len(scores) and (int(scores.min()) < MIN_NODE_SCORE or int(scores.max()) > MAX_NODE_SCORE):
                    bad = [(cluster.node_info(r).name, int(s)) for r, s in zip(rows.tolist(), scores.tolist())
                           if not MIN_NODE_SCORE <= s <= MAX_NODE_SCORE]
                    raise ContractError(f"plugin {spec.name}: scores out of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after "
                                        f"normalizing for pod {pod.key} on {cluster.describe()}: {bad[:5]}")
                report.scores_checked += len(scores)
                report.score_values.update(scores.tolist())
    if not report.scores_checked:
        raise ContractError(f"plugin {spec.name}: no scores were checked (PreFilter or PreScore skipped every pod)")
    return report


def _final_scores(plugin: Plugin, pod: PodInfo, rows: RowArray, cluster: RandomCluster) -> IntArray | None:
    state = new_state()
    if not prepare_scoring(plugin, state, pod, rows, cluster):
        return None
    snapshot = cluster.snapshot
    if isinstance(plugin, BatchScorePlugin):
        raw = call(plugin, "score_nodes", cluster, pod, lambda: plugin.score_nodes(state, pod, snapshot, rows))
    elif isinstance(plugin, ScorePlugin):
        raw = np.asarray([call(plugin, "score", cluster, pod, lambda: plugin.score(state, pod, cluster.node_info(r)))
                          for r in rows.tolist()], dtype=np.int64)
    else:  # pragma: no cover - the caller checked
        return None
    scores = as_scores(plugin.name, raw, len(rows), pod, cluster).copy()
    if isinstance(plugin, ScoreExtensions):
        given = scores
        normalized = call(plugin, "normalize_score", cluster, pod, lambda: plugin.normalize_score(state, pod, given))
        # None means "normalized in place", as the framework reads it.
        scores = as_scores(plugin.name, given if normalized is None else normalized, len(rows), pod, cluster)
    return scores

