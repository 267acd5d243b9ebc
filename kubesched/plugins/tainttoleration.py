"""TaintToleration: untolerated NoSchedule/NoExecute taints filter; PreferNoSchedule ones score down."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..framework import (
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    IntArray,
    NodeTableView,
    NodeVerdicts,
    QueueingHint,
    RowArray,
    SnapshotView,
    StateKey,
    Status,
)
from ..framework.signing import TOLERATIONS_SIGNER, SignFragment, tolerations_signer
from ..objects.node import Node
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from ..objects.taints import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Taint, Toleration, find_untolerated_taint
from .helper import default_normalize_score, zero_scores

NAME = "TaintToleration"
_FILTER_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)
_STATE_KEY: StateKey[tuple[Toleration, ...]] = StateKey("PreScore" + NAME)


def _reject(taint: Taint) -> Status:
    return Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)"
    )


def _prefer_no_schedule_tolerations(pod: PodInfo) -> tuple[Toleration, ...]:
    return tuple(t for t in pod.tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def _intolerable_count(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> int:
    count = 0
    for taint in taints:
        if taint.effect == PREFER_NO_SCHEDULE and not any(t.tolerates(taint) for t in tolerations):
            count += 1
    return count


def _filter_codes(
    table: NodeTableView, tolerations: tuple[Toleration, ...]
) -> tuple[npt.NDArray[np.int32] | None, list[Status]]:
    """Per row, 1 + the index of its rejecting status (0: passes), over the table's distinct taint sets."""
    ids, taint_sets = table.taint_sets()
    statuses: list[Status] = []
    by_set = np.zeros(len(taint_sets), dtype=np.int32)
    seen: dict[Taint, int] = {}
    for i, taints in enumerate(taint_sets):
        taint = find_untolerated_taint(taints, tolerations, _FILTER_EFFECTS)
        if taint is not None:
            code = seen.get(taint)
            if code is None:
                statuses.append(_reject(taint))
                code = seen[taint] = len(statuses)
            by_set[i] = code
    if not statuses:
        return None, statuses
    codes = by_set[ids]
    codes.flags.writeable = False  # shared by every pod with these tolerations until a node changes
    return codes, statuses


def _score_counts(table: NodeTableView, tolerations: tuple[Toleration, ...]) -> IntArray | None:
    """Per row, the PreferNoSchedule taints not tolerated; None when that is 0 everywhere."""
    ids, taint_sets = table.taint_sets()
    counts = np.fromiter((_intolerable_count(t, tolerations) for t in taint_sets), dtype=np.int64, count=len(taint_sets))
    if not counts.any():
        return None
    per_row = counts[ids]
    per_row.flags.writeable = False
    return per_row


class TaintToleration:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: Filter and Score read the tolerations only."""
        return [SignFragment(TOLERATIONS_SIGNER, tolerations_signer(pod))], None

    # -- Filter -------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        taint = find_untolerated_taint(node.node.taints, pod.tolerations, _FILTER_EFFECTS)
        return _reject(taint) if taint is not None else None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        table = snapshot.table
        # The answer depends on the nodes' taints and the pod's tolerations only.
        codes, statuses = table.node_derived((NAME, "filter", pod.tolerations), lambda: _filter_codes(table, pod.tolerations))
        if codes is None:
            return NodeVerdicts.all_pass(table.size)
        return NodeVerdicts(codes, statuses)

    # -- Score --------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        state.write(_STATE_KEY, _prefer_no_schedule_tolerations(pod))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        tolerations = state.get(_STATE_KEY)
        if tolerations is None:
            tolerations = _prefer_no_schedule_tolerations(pod)
        return _intolerable_count(node.node.taints, tolerations)

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        tolerations = state.get(_STATE_KEY)
        if tolerations is None:
            tolerations = _prefer_no_schedule_tolerations(pod)
        table = snapshot.table
        per_row = table.node_derived((NAME, "score", tolerations), lambda: _score_counts(table, tolerations))
        if per_row is None:  # no node has a PreferNoSchedule taint the pod does not tolerate
            return zero_scores(len(rows))
        return per_row[rows]

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(scores, reverse=True)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT), _hint_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS), None),
        ]


def _hint_node_change(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Queue when the pod tolerates the node's taints now and did not before."""
    if not isinstance(new, Node) or find_untolerated_taint(new.taints, pod.tolerations, _FILTER_EFFECTS) is not None:
        return QueueingHint.SKIP
    if isinstance(old, Node) and find_untolerated_taint(old.taints, pod.tolerations, _FILTER_EFFECTS) is None:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def new(args: None, handle: Handle) -> TaintToleration:
    return TaintToleration()
