"""PreScore / Score / NormalizeScore of InterPodAffinity: the preferred terms, both ways.

PreScore sums, per topology pair, the incoming pod's preferred affinity (+weight) and
anti-affinity (-weight) terms for each placed pod they select, and the placed pods'
required affinity (+``hardPodAffinityWeight``), preferred affinity (+weight) and
anti-affinity (-weight) terms that select the incoming pod; Score is the sum over a
node's pairs; NormalizeScore maps min..max onto 0..100. Apart from the plugin because
this is the preferred half of its job, sharing no state with Filter.
"""

from __future__ import annotations

from typing import Collection

import numpy as np

from ...framework.cycle_state import CycleState, StateKey
from ...framework.interfaces import MAX_NODE_SCORE
from ...framework.views import IntArray, NodeTableView, RowArray
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .index import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    AffinityIndex,
    RowCounts,
    condition_matches,
    condition_of,
)
from .names import NAME
from .topology_counts import TopologyCounts

__all__ = ["PRE_SCORE_STATE_KEY", "ScoreState", "normalize_scores", "read_score_state", "score_node", "score_rows",
           "score_state"]

PRE_SCORE_STATE_KEY: StateKey[ScoreState] = StateKey("PreScore" + NAME)


class ScoreState:
    __slots__ = ("topology_score",)

    def __init__(self, topology_score: TopologyCounts) -> None:
        self.topology_score = topology_score

    def clone(self) -> "ScoreState":
        return self


def score_state(index: AffinityIndex, table: NodeTableView, pod: PodInfo, hard_pod_affinity_weight: int,
                unlisted: Collection[tuple[PodInfo, NodeInfo]] = ()) -> ScoreState | None:
    """PreScore's topology scores; None (Skip) when no term met a pod on a node with its key.

    ``unlisted``: placed pods declaring pod affinity that upstream's snapshot does not list
    (a pod-group cycle's members on nodes its ``HavePodsWithAffinityList`` left out,
    ``PodGroupCycleLists``), given only when the incoming pod has no preferred term: then
    upstream's PreScore walks that list alone, so their terms count for nothing (nor make
    the plugin score); the index counted them, and they are taken out again."""
    aff = pod.pod_affinity
    topology_score = TopologyCounts(table)
    fired = 0  # (pod, term) pairs that met on a node with the term's key

    def add(counts: RowCounts, key: str, weight: int) -> None:
        nonlocal fired
        fired += counts.accumulate(key, table.label_column(key)[0], topology_score.array(key), weight)

    for weighted in aff.preferred_affinity:
        term = weighted.term
        add(index.matcher((condition_of(term),)).counts, term.topology_key, weighted.weight)
    for weighted in aff.preferred_anti_affinity:
        term = weighted.term
        add(index.matcher((condition_of(term),)).counts, term.topology_key, -weighted.weight)
    hard = hard_pod_affinity_weight
    if hard > 0:
        for entry in index.matching_terms(REQUIRED_AFFINITY, pod.namespace, pod.labels):
            add(entry.counts, entry.term.topology_key, hard)
    for entry in index.matching_terms(PREFERRED_AFFINITY, pod.namespace, pod.labels):
        add(entry.counts, entry.term.topology_key, entry.weight)
    for entry in index.matching_terms(PREFERRED_ANTI_AFFINITY, pod.namespace, pod.labels):
        add(entry.counts, entry.term.topology_key, -entry.weight)
    for other, node in unlisted:
        fired -= _take_out_existing_terms(topology_score, other, node, pod, index, hard)
    if fired <= 0:
        return None
    return ScoreState(topology_score)


def _take_out_existing_terms(topology_score: TopologyCounts, other: PodInfo, node: NodeInfo, pod: PodInfo,
                             index: AffinityIndex, hard: int) -> int:
    """Subtract what ``other``'s own terms gave the incoming pod on ``node`` (upstream's
    ``processExistingPod`` for a pod without preferred terms: ``other``'s required affinity
    at ``hard``, its preferred affinity and anti-affinity at their weights); how many of its
    terms had met."""
    labels = node.node.labels
    oa = other.pod_affinity
    weighted = [(t, hard) for t in oa.required_affinity] if hard > 0 else []
    weighted += [(w.term, w.weight) for w in oa.preferred_affinity]
    weighted += [(w.term, -w.weight) for w in oa.preferred_anti_affinity]
    met = 0
    for term, weight in weighted:
        key = term.topology_key
        if key in labels and condition_matches(condition_of(term), pod.namespace, pod.labels, index.namespace_labels):
            topology_score.add(key, labels[key], -weight)
            met += 1
    return met


def read_score_state(state: CycleState) -> ScoreState:
    s = state.get(PRE_SCORE_STATE_KEY)
    if s is None:
        raise RuntimeError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    return s


def score_node(s: ScoreState, node: NodeInfo) -> int:
    """Score on one node: the sum of its pairs' topology scores."""
    topology_score = s.topology_score
    labels = node.node.labels
    total = 0
    for key in topology_score.arrays:
        value = labels.get(key)
        if value is not None:
            total += topology_score.get(key, value)
    return total


def score_rows(s: ScoreState, table: NodeTableView, rows: RowArray) -> IntArray:
    """``score_node`` for every row of ``rows`` at once."""
    topology_score = s.topology_score
    total = np.zeros(len(rows), dtype=np.int64)
    for key, arr in topology_score.arrays.items():
        total += arr[table.label_column(key)[0][rows]]
    return total


def normalize_scores(scores: IntArray) -> IntArray:
    """Min-max onto 0..100 in float64, truncated, exactly as upstream's arithmetic."""
    lowest = int(scores.min())
    spread = int(scores.max()) - lowest
    if spread <= 0:
        return np.zeros(len(scores), dtype=np.int64)
    return (float(MAX_NODE_SCORE) * ((scores - lowest).astype(np.float64) / float(spread))).astype(np.int64)
