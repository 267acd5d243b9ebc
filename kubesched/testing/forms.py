"""Check (i): a plugin's per-node and batch forms of Filter and Score give the same answers."""

from __future__ import annotations

from typing import Sequence, TypeVar

import numpy as np

from ..framework.interfaces import BatchFilterPlugin, BatchScorePlugin, FilterPlugin, NodeVerdicts, ScorePlugin
from ..framework.registry import PluginSpec
from ..framework.status import Code, Status
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
    pre_filter,
    prepare_scoring,
    score_rows,
    verdict,
)
from .clusters import RandomCluster

__all__ = ["assert_forms_agree"]

A = TypeVar("A")

_REJECTING = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)


def assert_forms_agree(
    spec: PluginSpec[A],
    args: object = None,
    clusters: Sequence[RandomCluster] | None = None,
    *,
    require_rejections: bool = True,
    require_score_variety: bool = True,
) -> ContractReport:
    """A plugin with both forms of Filter answers the same status (code and reasons) for
    every node from ``filter_nodes`` as from ``filter``; with both forms of Score, the same
    raw scores from ``score_nodes`` as from ``score``.

    Filters are asked about every live row and about a random subset of rows (the
    framework asks only the rows its search visits); scores about every live row and a
    subset, in snapshot order. PreFilter and PreScore run first when the plugin has them.
    ``require_rejections``: fail if the filter never rejected a node (the clusters did not
    reach its interesting cases: pass ``node_labels``/``pod_labels`` to ``random_clusters``);
    ``require_score_variety``: likewise if every score was the same.
    """
    found = clusters_or_default(clusters)
    decoded = decode(spec, args)
    report = ContractReport(spec.name, [], clusters=len(found))
    probe = build(spec, decoded, found[0])
    both_filter = isinstance(probe, BatchFilterPlugin) and isinstance(probe, FilterPlugin)
    both_score = isinstance(probe, BatchScorePlugin) and isinstance(probe, ScorePlugin)
    if not (both_filter or both_score):
        raise ContractError(f"plugin {spec.name} does not have both forms of Filter (filter and filter_nodes) "
                            f"or of Score (score and score_nodes): there is nothing to compare")
    if both_filter:
        report.checks.append("filter forms agree")
    if both_score:
        report.checks.append("score forms agree")
    for cluster in found:
        plugin = build(spec, decoded, cluster)
        for pod in cluster.pods:
            report.pods += 1
            if both_filter and isinstance(plugin, BatchFilterPlugin) and isinstance(plugin, FilterPlugin):
                _compare_filters(plugin, plugin, pod, cluster, report)
            if both_score and isinstance(plugin, BatchScorePlugin) and isinstance(plugin, ScorePlugin):
                _compare_scores(plugin, plugin, pod, cluster, report)
    if both_filter:
        if not report.filter_rows_compared:
            raise ContractError(f"plugin {spec.name}: no filter verdicts were compared (PreFilter skipped or "
                                f"rejected every pod); the check proves nothing")
        if require_rejections and not report.filter_rows_rejected:
            raise ContractError(f"plugin {spec.name}: the filter passed every node of every cluster, so the check "
                                f"proves little; give random_clusters the node_labels/pod_labels it reads "
                                f"(or pass require_rejections=False)")
    if both_score:
        if not report.score_rows_compared:
            raise ContractError(f"plugin {spec.name}: no scores were compared (PreFilter or PreScore skipped "
                                f"every pod); the check proves nothing")
        if require_score_variety and len(report.score_values) < 2:
            raise ContractError(f"plugin {spec.name}: every score was {sorted(report.score_values)}, so the check "
                                f"proves little; give random_clusters the node_labels/pod_labels it reads "
                                f"(or pass require_score_variety=False)")
    return report


def _compare_filters(batch: BatchFilterPlugin, single: FilterPlugin, pod: PodInfo, cluster: RandomCluster,
                     report: ContractReport) -> None:
    state_b, state_n = new_state(), new_state()
    runs_b, candidates = pre_filter(batch, state_b, pod, cluster)
    runs_n, _ = pre_filter(single, state_n, pod, cluster)
    if not (runs_b and runs_n) or not candidates.any():
        return
    snapshot = cluster.snapshot
    live = np.flatnonzero(candidates)
    rng = cluster.rng(f"filter/{pod.uid}")
    subset = np.zeros(len(candidates), dtype=bool)
    subset[[r for r in live.tolist() if rng.random() < 0.5]] = True
    for asked in (candidates, subset):
        if not asked.any():
            continue
        asked = asked.copy()
        asked.flags.writeable = False  # the framework's candidates are read-only to plugins
        verdicts = call(batch, "filter_nodes", cluster, pod, lambda: batch.filter_nodes(state_b, pod, snapshot, asked))
        statuses = _check_verdicts(batch.name, verdicts, len(asked), pod, cluster)
        for row in np.flatnonzero(asked).tolist():
            code = int(verdicts.codes[row])
            got_batch = verdict(statuses[code - 1] if code else None)
            info = cluster.node_info(row)
            got_single = verdict(call(single, "filter", cluster, pod, lambda: single.filter(state_n, pod, info)))
            if got_batch != got_single:
                raise ContractError(
                    f"plugin {batch.name}: filter_nodes and filter disagree on node {info.name} (row {row}) for pod "
                    f"{pod.key} on {cluster.describe()}: filter_nodes says {_show(got_batch)}, filter says "
                    f"{_show(got_single)}")
            report.filter_rows_compared += 1
            report.filter_rows_rejected += got_batch is not None


def _check_verdicts(name: str, verdicts: object, size: int, pod: PodInfo, cluster: RandomCluster) -> list[Status]:
    where = f"plugin {name}: filter_nodes for pod {pod.key} on {cluster.describe()}"
    if not isinstance(verdicts, NodeVerdicts):
        raise ContractError(f"{where} returned a {type(verdicts).__name__}, not NodeVerdicts")
    codes = np.asarray(verdicts.codes)
    if codes.ndim != 1 or len(codes) < size or not np.issubdtype(codes.dtype, np.integer):
        raise ContractError(f"{where}: codes must be integers, one per table row ({size}); got {codes.dtype} {codes.shape}")
    if len(codes) and (int(codes[:size].min()) < 0 or int(codes[:size].max()) > len(verdicts.statuses)):
        raise ContractError(f"{where}: codes must be 0 (passes) or 1..{len(verdicts.statuses)} (statuses[code-1])")
    for status in verdicts.statuses:
        if not isinstance(status, Status) or status.code not in _REJECTING:
            raise ContractError(f"{where}: statuses must reject (Unschedulable, UnschedulableAndUnresolvable or "
                                f"Pending), got {status!r}")
    return list(verdicts.statuses)


def _show(verdict: tuple[str, tuple[str, ...]] | None) -> str:
    return "passes" if verdict is None else f"{verdict[0]} {list(verdict[1])}"


def _compare_scores(batch: BatchScorePlugin, single: ScorePlugin, pod: PodInfo, cluster: RandomCluster,
                    report: ContractReport) -> None:
    snapshot = cluster.snapshot
    for rows in score_rows(pod, cluster):
        state_b, state_n = new_state(), new_state()
        if not (prepare_scoring(batch, state_b, pod, rows, cluster) and prepare_scoring(single, state_n, pod, rows, cluster)):
            return
        asked = rows.copy()
        asked.flags.writeable = False
        got_batch = as_scores(batch.name, call(batch, "score_nodes", cluster, pod,
                                              lambda: batch.score_nodes(state_b, pod, snapshot, asked)), len(rows), pod, cluster)
        got_single = [
            call(single, "score", cluster, pod, lambda: single.score(state_n, pod, cluster.node_info(row)))
            for row in rows.tolist()
        ]
        for row, b, s in zip(rows.tolist(), got_batch.tolist(), got_single):
            if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or b != s:
                raise ContractError(
                    f"plugin {batch.name}: score_nodes and score disagree on node {cluster.node_info(row).name} "
                    f"(row {row}) for pod {pod.key} on {cluster.describe()}: score_nodes says {b}, score says {s!r}")
        report.score_rows_compared += len(rows)
        report.score_values.update(got_batch.tolist())

