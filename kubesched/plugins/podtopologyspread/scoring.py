"""PreScore / Score / NormalizeScore of PodTopologySpread: the ScheduleAnyway constraints.

PreScore works out, per constraint, its weight (``log(domains + 2)``) and the score
term of every domain (``preScoreState``), so that Score is one gather per constraint
over the rows, or a few label lookups per node in the per-node form. Lower raw scores
are better; normalisation flips them onto ``0 .. MAX_NODE_SCORE``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...framework.cycle_state import StateKey
from ...framework.interfaces import MAX_NODE_SCORE
from ...framework.views import BoolArray, IntArray, NodeTableView, RowArray
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .common import HOSTNAME_LABEL, Constraint, counts_pods, go_log, go_round
from .counts import Counts, MatchCounts
from .domains import ColumnCache, KeyLayout, KeySet, NodeLayouts, domain_totals, eligible_rows, inclusion_masks, matching_column
from .names import NAME

__all__ = ["PRE_SCORE_KEY", "ScoreState", "ScoreTerm", "normalize_scores", "score_node", "score_rows", "score_state"]

FloatArray = npt.NDArray[np.float64]
_NO_COUNTS: Counts = np.zeros(0, dtype=np.int32)  # ``ScoreTerm`` fields a term of the other kind does not use
_NO_TOTALS: IntArray = np.zeros(0, dtype=np.int64)
_NO_SCORES: FloatArray = np.zeros(0, dtype=np.float64)


@dataclass(slots=True)
class ScoreTerm:
    constraint: Constraint
    layout: KeyLayout
    weight: float  # log(domains + 2)
    hostname: bool
    own_counts: Counts  # hostname: matching pods per row (else ``_NO_COUNTS``)
    slot_totals: IntArray  # other keys, per ``layout.slot``: matching pods on eligible nodes (else ``_NO_TOTALS``)
    by_slot: FloatArray  # other keys, per slot: the node's term of the score (else ``_NO_SCORES``)
    mask_missing: bool  # rows without the key must be zeroed per row


@dataclass(slots=True)
class ScoreState:
    terms: list[ScoreTerm]
    require_all: bool
    has_all: KeySet
    ignored_rows: BoolArray  # aligned with the rows PreScore saw

    def ignored(self, row: int) -> bool:
        return self.require_all and not bool(self.has_all.mask[row])

    def clone(self) -> ScoreState:
        return self


PRE_SCORE_KEY: StateKey[ScoreState] = StateKey("PreScore" + NAME)


def score_state(
    pod: PodInfo,
    constraints: tuple[Constraint, ...],
    table: NodeTableView,
    rows: RowArray,
    layouts: NodeLayouts,
    counts: MatchCounts | None,
    system_defaulted: bool,
) -> ScoreState:
    """``initPreScoreState``: per constraint, its weight and the score term of each domain."""
    # Only non-default constraints need every key on a node; system defaults let
    # nodes without a zone still spread by hostname.
    require_all = bool(pod.topology_spread_constraints) or not system_defaulted
    has_all = layouts.key_set(table, tuple(c.topology_key for c in constraints))
    if require_all and not has_all.complete:
        ignored_rows = ~has_all.mask[rows]
        scored_rows = rows[~ignored_rows]
        counted = has_all
    else:
        ignored_rows = np.zeros(len(rows), dtype=bool)
        scored_rows = rows
        counted = KeySet(table.alive[: table.size], True)
    affinity, tolerated = inclusion_masks(pod, constraints, table)
    column_cache: ColumnCache = {}
    terms: list[ScoreTerm] = []
    for c in constraints:
        layout = layouts.layout(table, c.topology_key)
        if c.topology_key == HOSTNAME_LABEL:
            if counts_pods(c.selector):
                own = matching_column(counts, pod.namespace, c, table, column_cache)
            else:
                own = np.zeros(table.size, dtype=np.int32)
            mask_missing = not (require_all and has_all.complete)
            weight = go_log(float(len(scored_rows) + 2))
            terms.append(ScoreTerm(c, layout, weight, True, own, _NO_TOTALS, _NO_SCORES, mask_missing))
            continue
        slots = layout.size + 1
        registered = np.zeros(slots, dtype=bool)
        registered[layout.slot[scored_rows]] = True
        weight = go_log(float(int(np.count_nonzero(registered)) + 2))
        if not counts_pods(c.selector):
            totals = np.zeros(slots, dtype=np.int64)
        else:
            eligible = eligible_rows(counted, c, affinity, tolerated)
            if eligible is None:
                totals = domain_totals(counts, pod.namespace, c.selector, layout.slot, slots)
            else:
                column = matching_column(counts, pod.namespace, c, table, column_cache)
                totals = np.bincount(layout.slot, weights=column * eligible, minlength=slots).astype(np.int64)
        # np.float64(weight): numpy's stubs type an int array times a Python float as floating[Any]
        by_slot = totals * np.float64(weight) + float(c.max_skew - 1)
        mask_missing = False
        if not (require_all and has_all.complete):
            if layout.vocab.get("", layout.size) == layout.size:
                by_slot[layout.size] = 0.0  # rows without the key score nothing for it
            else:
                mask_missing = True
        terms.append(ScoreTerm(c, layout, weight, False, _NO_COUNTS, totals, by_slot, mask_missing))
    return ScoreState(terms, require_all, has_all, ignored_rows)


def score_rows(s: ScoreState, rows: RowArray) -> IntArray:
    """Score for every one of ``rows`` at once."""
    rows = np.asarray(rows, dtype=np.int64)
    terms = s.terms  # one per constraint, never empty
    total = _term_scores(terms[0], rows)
    for t in terms[1:]:
        total = total + _term_scores(t, rows)
    scores = go_round(total)
    if s.require_all and not s.has_all.complete:
        scores[~s.has_all.mask[rows]] = 0
    return scores


def score_node(s: ScoreState, pod: PodInfo, node: NodeInfo) -> int:
    """Score for one node, counting its pods (the per-node form)."""
    if s.ignored(node.row):
        return 0
    labels = node.node.labels
    total = 0.0
    for t in s.terms:
        value = labels.get(t.constraint.topology_key)
        if value is None:
            continue
        if t.hostname:
            cnt = _count_pods_match(node.pods.values(), t.constraint, pod.namespace)
        else:
            cnt = int(t.slot_totals[t.layout.vocab[value]])
        total += float(cnt) * t.weight + float(t.constraint.max_skew - 1)
    floor = math.floor(total)
    return int(floor + (total - floor >= 0.5))


def normalize_scores(s: ScoreState | None, scores: IntArray) -> IntArray:
    """NormalizeScore: ``MAX_NODE_SCORE * (max + min - score) / max``, ignored rows 0."""
    scores = np.asarray(scores, dtype=np.int64)
    if s is None:
        return scores
    if len(scores) == 0:
        return scores
    ignored = s.ignored_rows if len(s.ignored_rows) == len(scores) and s.ignored_rows.any() else None
    valid = scores if ignored is None else scores[~ignored]
    if len(valid) == 0:
        return np.zeros(len(scores), dtype=np.int64)
    lowest = int(valid.min())
    highest = max(int(valid.max()), 0)
    if highest == 0:
        out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
    else:
        out = MAX_NODE_SCORE * (highest + lowest - scores) // highest
    if ignored is not None:
        out[ignored] = 0
    return out


def _term_scores(t: ScoreTerm, rows: RowArray) -> FloatArray:
    """One constraint's term of the score of each of ``rows``."""
    if t.hostname:
        term = t.own_counts[rows] * np.float64(t.weight) + float(t.constraint.max_skew - 1)  # float64, see score_state
    else:
        term = t.by_slot[t.layout.slot[rows]]
    if t.mask_missing:
        term = np.where(t.layout.ids[rows] >= 0, term, 0.0)
    return term


def _count_pods_match(pods: Iterable[PodInfo], constraint: Constraint, namespace: str) -> int:
    """``countPodsMatchSelector`` over one node's pods (the per-node form's reference)."""
    if not counts_pods(constraint.selector):
        return 0
    return sum(
        1 for p in pods if not p.terminating and p.namespace == namespace and constraint.selector.matches(p.labels)
    )
