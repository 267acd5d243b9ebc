"""NodeDeclaredFeatures at PreFilter, Filter and in the queue, as upstream v1.36.

* PreFilter: the features the pod's spec needs (``infer.infer_for_scheduling``); a pod
  needing none is skipped (its Filter does not run). With the gate off, every pod is.
* Filter: a node passes when it declares every needed feature in
  ``status.declaredFeatures`` (names upstream's registry does not know are ignored);
  otherwise UnschedulableAndUnresolvable, ``node(s) didn't match Pod's required features``.
  The batch form reads one mask per feature, kept until a node changes.
* Queueing hints: a node added, or one whose declared features changed; an update of the
  pod itself that changes what it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ...framework import (
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeVerdicts,
    PreFilterResult,
    QueueingHint,
    SnapshotView,
    StateKey,
    Status,
)
from ...framework.signing import FEATURES_SIGNER, SignFragment
from ...objects.node import Node
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .infer import FEATURES, infer_for_scheduling

__all__ = ["ERR_REASON_UNSATISFIED_REQUIREMENTS", "NAME", "NodeDeclaredFeatures", "new"]

NAME = "NodeDeclaredFeatures"
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"
_UNSATISFIED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)
_SKIP = Status(Code.SKIP)
_KNOWN = frozenset(FEATURES)


@dataclass(slots=True, frozen=True)
class _State:
    required: frozenset[str]

    def clone(self) -> "_State":
        return self


_STATE: StateKey[_State] = StateKey("PreFilter" + NAME)


def _spec(pod: PodInfo) -> dict[str, object] | None:
    raw = pod.raw
    spec = raw.get("spec") if raw is not None else None
    return spec if isinstance(spec, dict) else None


_MEMO: dict[str, tuple[object, frozenset[str], tuple[str, ...]]] = {}  # pod uid -> (its spec, features, sorted)


def _memo(pod: PodInfo) -> tuple[frozenset[str], tuple[str, ...]]:
    """The pod's needed features, inferred once per spec (signing and PreFilter both ask, every attempt)."""
    spec = _spec(pod)
    found = _MEMO.get(pod.uid)
    if found is not None and found[0] is spec:
        return found[1], found[2]
    features = infer_for_scheduling(spec)
    if not features:  # most pods: inferring nothing costs less than remembering it
        return features, ()
    if len(_MEMO) >= 4096:
        _MEMO.clear()
    _MEMO[pod.uid] = (spec, features, tuple(sorted(features)))
    return features, _MEMO[pod.uid][2]


def required_features(pod: PodInfo) -> frozenset[str]:
    return _memo(pod)[0]


def _declares(node: Node, required: frozenset[str]) -> bool:
    declared = _KNOWN.intersection(node.declared_features)
    return required <= declared


class NodeDeclaredFeatures:
    name = NAME

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, _SKIP
        required = required_features(pod)
        if not required:
            return None, _SKIP
        state.write(_STATE, _State(required))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s = state.get(_STATE)
        if s is None:
            return Status(Code.ERROR, f'error reading "PreFilter{NAME}" from cycle-state: not found')
        return None if _declares(node.node, s.required) else _UNSATISFIED

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        table = snapshot.table
        s = state.get(_STATE)
        if not self.enabled or s is None:
            return NodeVerdicts.all_pass(table.size)
        passed = np.ones(table.size, dtype=bool)
        for feature in sorted(s.required):
            mask = table.node_derived((NAME, feature), partial(self._declaring, snapshot, feature))
            passed &= mask[: table.size]
        return NodeVerdicts.from_mask(passed, _UNSATISFIED)

    @staticmethod
    def _declaring(snapshot: SnapshotView, feature: str) -> BoolArray:
        """Rows whose node declares ``feature`` (empty rows do not)."""
        infos = snapshot.node_infos
        out = np.zeros(snapshot.table.size, dtype=bool)
        for row, info in enumerate(infos[: snapshot.table.size]):
            if info is not None and feature in info.node.declared_features:
                out[row] = True
        out.flags.writeable = False
        return out

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """The features the pod needs (upstream signs them whether the gate is on or not)."""
        return [SignFragment(FEATURES_SIGNER, _memo(pod)[1])], None

    # -- queueing hints -------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
                                 _hint_node_changed),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE), _hint_pod_updated),
        ]


def _hint_node_changed(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Queue unless the node's declared features are what they were."""
    if isinstance(old, Node) and isinstance(new, Node) and old.declared_features == new.declared_features:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def _hint_pod_updated(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Only the rejected pod's own update counts, and only when what it needs changed."""
    if not isinstance(new, PodInfo) or new.uid != pod.uid:
        return QueueingHint.SKIP
    before = required_features(old) if isinstance(old, PodInfo) else frozenset()
    return QueueingHint.SKIP if before == required_features(new) else QueueingHint.QUEUE


def new(args: None, handle: Handle) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(handle.features.enable_node_declared_features)
