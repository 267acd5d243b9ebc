"""NodeAffinity: ``nodeSelector`` and required node affinity filter; preferred terms score.

``addedAffinity`` (plugin args) applies scheduler-enforced terms to every pod of the
profile, required terms as an extra filter and preferred ones as extra score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..framework import (
    SKIP,
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
    PreFilterResult,
    QueueingHint,
    RowArray,
    SnapshotView,
    StateKey,
    Status,
)
from ..framework.args import decode_args
from ..framework.signing import NODE_AFFINITY_SIGNER, NODE_SELECTOR_SIGNER, SignFragment, node_affinity_signer, node_selector_signer
from ..objects.node import Node
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from ..objects.selectors import (
    NODE_NAME_FIELD,
    NodeSelector,
    PreferredSchedulingTerm,
    parse_node_selector,
    parse_preferred_terms,
    selector_from_set,
)
from .helper import default_normalize_score

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_POD_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
_ENFORCED_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
_PRESCORE_KEY: StateKey[tuple[PreferredSchedulingTerm, ...]] = StateKey("PreScore" + NAME)


@dataclass(slots=True, frozen=True)
class AddedAffinity:
    """``v1.NodeAffinity`` as ``addedAffinity`` carries it. Its terms are parsed as they are read,
    which validates them as ``ValidateNodeAffinityArgs`` does (``nodeaffinity.NewNodeSelector``,
    ``NewPreferredSchedulingTerms``)."""

    required: NodeSelector | None = field(
        default=None, metadata={"json": "requiredDuringSchedulingIgnoredDuringExecution", "decode": parse_node_selector}
    )
    preferred: tuple[PreferredSchedulingTerm, ...] = field(
        default=(), metadata={"json": "preferredDuringSchedulingIgnoredDuringExecution", "decode": parse_preferred_terms}
    )


@dataclass(slots=True, frozen=True)
class NodeAffinityArgs:
    """``NodeAffinityArgs``: scheduler-enforced node affinity for every pod of the profile."""

    added_affinity: AddedAffinity | None = None

    @property
    def added_required(self) -> NodeSelector | None:
        return self.added_affinity.required if self.added_affinity is not None else None

    @property
    def added_preferred(self) -> tuple[PreferredSchedulingTerm, ...]:
        return self.added_affinity.preferred if self.added_affinity is not None else ()


def parse_args(raw: object) -> NodeAffinityArgs:
    """``decode_args`` for this plugin's args (the registry decodes them the same way)."""
    return decode_args(NodeAffinityArgs, raw)


def _term_weights(table: NodeTableView, terms: tuple[PreferredSchedulingTerm, ...]) -> IntArray:
    """Per row, the summed weight of the preferred terms its labels match."""
    total = np.zeros(table.size, dtype=np.int64)
    for term in terms:
        total += term.weight * table.term_mask(term.term)
    total.flags.writeable = False
    return total


class NodeAffinity:
    name = NAME

    def __init__(self, args: NodeAffinityArgs) -> None:
        self.args = args

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: PreFilter, Filter and Score read the node affinity and the nodeSelector."""
        return [SignFragment(NODE_AFFINITY_SIGNER, node_affinity_signer(pod)),
                SignFragment(NODE_SELECTOR_SIGNER, node_selector_signer(pod))], None

    # -- PreFilter ----------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        required = pod.required_node_affinity
        if required is None and self.args.added_required is None and not pod.node_selector:
            return None, SKIP
        if required is None or not required.terms:
            return None, None
        names: frozenset[str] | None = None
        for term in required.terms:
            term_names: frozenset[str] | None = None
            for req in term.fields:
                if req.key == NODE_NAME_FIELD and req.operator == "In":
                    term_names = req.values if term_names is None else term_names & req.values
            if term_names is None:
                return None, None  # this term allows every node; terms are ORed
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if names:
            return PreFilterResult(frozenset(names)), None
        return None, None

    # -- Filter -------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        labels, name = node.node.labels, node.name
        if self.args.added_required is not None and not self.args.added_required.matches(labels, name):
            return _ENFORCED_STATUS
        if pod.node_selector and not selector_from_set(pod.node_selector).matches(labels):
            return _POD_STATUS
        required = pod.required_node_affinity
        if required is not None and not required.matches(labels, name):
            return _POD_STATUS
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        table = snapshot.table
        # The answer depends on node labels and names and on these pod fields only.
        selector = tuple(pod.node_selector.items()) if pod.node_selector else ()
        key = (NAME, "filter", selector, pod.required_node_affinity, self.args.added_required)
        codes, statuses = table.node_derived(key, lambda: self._filter_codes(pod, table))
        if codes is None:
            return NodeVerdicts.all_pass(table.size)
        return NodeVerdicts(codes, statuses)

    def _filter_codes(self, pod: PodInfo, table: NodeTableView) -> tuple[npt.NDArray[np.int32] | None, list[Status]]:
        codes = np.zeros(table.size, dtype=np.int32)
        statuses = [_POD_STATUS]
        pod_mask = np.ones(table.size, dtype=bool)
        for req in selector_from_set(pod.node_selector).requirements if pod.node_selector else ():
            pod_mask &= table.requirement_mask(req)
        if pod.required_node_affinity is not None:
            pod_mask &= table.selector_mask(pod.required_node_affinity)
        codes[~pod_mask] = 1
        if self.args.added_required is not None:
            statuses.append(_ENFORCED_STATUS)
            codes[~table.selector_mask(self.args.added_required)] = 2
        if not codes.any():
            return None, statuses
        codes.flags.writeable = False  # shared by every pod asking the same until a node changes
        return codes, statuses

    # -- Score --------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        if not pod.preferred_node_affinity and not self.args.added_preferred:
            return SKIP
        state.write(_PRESCORE_KEY, self.args.added_preferred + pod.preferred_node_affinity)
        return None

    def _terms(self, state: CycleState, pod: PodInfo) -> tuple[PreferredSchedulingTerm, ...]:
        terms = state.get(_PRESCORE_KEY)
        return terms if terms is not None else self.args.added_preferred + pod.preferred_node_affinity

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        labels, name = node.node.labels, node.name
        return sum(t.weight for t in self._terms(state, pod) if t.term.matches(labels, name))

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        table = snapshot.table
        terms = self._terms(state, pod)
        per_row = table.node_derived((NAME, "score", terms), lambda: _term_weights(table, terms))
        return per_row[rows]

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(scores, reverse=False)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), self._hint_node_change)]

    def _node_matches(self, pod: PodInfo, node: Node) -> bool:
        labels, name = node.labels, node.name
        if self.args.added_required is not None and not self.args.added_required.matches(labels, name):
            return False
        if pod.node_selector and not selector_from_set(pod.node_selector).matches(labels):
            return False
        required = pod.required_node_affinity
        return required is None or required.matches(labels, name)

    def _hint_node_change(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """Queue when the node now matches the pod's affinity and did not before."""
        if not isinstance(new, Node) or not self._node_matches(pod, new):
            return QueueingHint.SKIP
        if isinstance(old, Node) and self._node_matches(pod, old):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def new(args: NodeAffinityArgs, handle: Handle) -> NodeAffinity:
    return NodeAffinity(args)
