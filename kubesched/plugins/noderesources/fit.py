"""NodeResourcesFit: the node must have room for the pod's requests; scoring by a strategy.

Filter reasons come in upstream's order: ``Too many pods``, cpu, memory,
ephemeral-storage, then extended resources (by name). A reason is unresolvable
(``UnschedulableAndUnresolvable``) when the request exceeds the node's whole
allocatable, since evicting pods could not help.
The plugin class is here; the args in ``fit_args.py``, Filter in ``fit_filter.py``, the
scoring strategies in ``fit_scoring.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...framework import (
    MAX_NODE_SCORE,
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
from ...framework.signing import RESOURCES_SIGNER, SCORING_DEFAULTS, SignFragment, resources_signer
from ...objects.node import Node
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ...objects.resources import Resource
from .fit_args import (
    DEFAULT_SCORING_STRATEGY,
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    MOST_ALLOCATED,
    NAME,
    REQUESTED_TO_CAPACITY_RATIO,
    FitArgs,
    RequestedToCapacityRatioParam,
    ScoringStrategy,
    UtilizationShapePoint,
    parse_args,
)
from ..dynamicresources.extended_index import ExtendedResourceIndex, extended_resource_index, is_dra_extended_resource
from .dra_scorer import DraScorer, DraScoring, dra_scorer
from .fit_filter import checked_scalars, fit_key, fit_keys, fit_status, fit_verdicts
from .fit_scoring import score_row, scores
from .resource_allocation import DEFAULT_RESOURCES, pod_request_vector, resource_columns

__all__ = [
    "NAME",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "DEFAULT_RESOURCES",
    "DEFAULT_SCORING_STRATEGY",
    "UtilizationShapePoint",
    "RequestedToCapacityRatioParam",
    "ScoringStrategy",
    "FitArgs",
    "NodeResourcesFit",
    "parse_args",
    "new",
]

_STATE_KEY: StateKey[Resource] = StateKey("PreFilter" + NAME)


@dataclass(slots=True, frozen=True)
class _PreScoreState:
    """upstream's ``preScoreState``: the pod's scored requests and the cycle's DRA data
    (None unless a scored resource is backed by a DeviceClass)."""

    pod_requests: list[int]
    dra: DraScoring | None


_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + NAME)
_fit_keys, _fit_key = fit_keys, fit_key  # the row cache's tests compare the two forms by these names


_ARGS_NUMBERS: dict[FitArgs, int] = {}


def _args_number(args: FitArgs) -> int:
    """A number for ``args``, the same for equal args (plugins with equal args share cached scores)."""
    return _ARGS_NUMBERS.setdefault(args, len(_ARGS_NUMBERS))


class NodeResourcesFit:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: Filter and Score read the pod's requests only (the scoring
        defaults unsigned, as upstream); a pod asking for a DRA-backed extended resource is not
        signed (upstream's answer depends on the node's devices)."""
        if self._delegated(pod.requests.requests):
            return [], Status(Code.UNSCHEDULABLE, "signature disabled when dra extended resources are used in the cluster")
        return [SignFragment(RESOURCES_SIGNER, resources_signer(pod))], None

    upstream_unsigned_reads = (SCORING_DEFAULTS,)

    def __init__(self, args: FitArgs, extended: ExtendedResourceIndex | None = None, dra: DraScorer | None = None) -> None:
        self.args = args
        # DRAExtendedResource: which extended resources a DeviceClass backs (None: gate off).
        self.extended = extended
        # DRAExtendedResource with a scored resource a class could back: scoring reads DRA.
        self.dra = dra
        self._scored_names = tuple(spec.name for spec in args.resources)
        self.shape = tuple((u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in args.shape)
        # The per-row score cache's key, less the pod's requests: the args stand in as a
        # number (hashing the args dataclass, field by nested field, cost more than the rest
        # of a cached Score).
        self._score_key = (NAME, "score", _args_number(args))
        self._scores_by_row = args.strategy in (LEAST_ALLOCATED, MOST_ALLOCATED)  # score_row computes one row

    # -- PreFilter / Filter ------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_STATE_KEY, pod.requests.requests)
        return None, None

    def _checked_scalars(self, requests: Resource) -> list[tuple[str, int]]:
        return checked_scalars(self.args, requests)

    def _delegated(self, requests: Resource) -> frozenset[str]:
        """The pod's extended resources a DeviceClass backs: on nodes without them, DynamicResources'."""
        return dra_backed(self.extended, requests)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        requests = state.get(_STATE_KEY) or pod.requests.requests
        return fit_status(self.args, requests, node, self._delegated(requests))

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        requests = state.get(_STATE_KEY) or pod.requests.requests
        return fit_verdicts(self.args, requests, snapshot.table, self._delegated(requests))

    # -- Score --------------------------------------------------------------
    def _pre_score_state(self, state: CycleState, pod: PodInfo) -> _PreScoreState:
        requests = pod_request_vector(pod.requests, self.args.resources, use_requested=False)
        return _PreScoreState(requests,
                              self.dra.gather(state, self._scored_names, requests) if self.dra is not None else None)

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        state.write(_SCORE_KEY, self._pre_score_state(state, pod))
        return None

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        found = state.get(_SCORE_KEY)
        if found is None:  # PreScore not run: Score gathers the same (as upstream's Score)
            found = self._pre_score_state(state, pod)
        pod_requests = found.pod_requests
        table = snapshot.table
        if found.dra is not None:
            # Devices and their allocations are not node-table columns: no per-row cache.
            return scores(self.args, self.shape, table, rows, pod_requests, found.dra)
        # A node's score depends on its own columns and the pod's requests only: kept
        # per row across cycles for pods of one shape, patched where pods changed.
        row_fn: Callable[[int], int] | None = None
        if self._scores_by_row:
            columns = [
                resource_columns(table, spec.name, request, use_requested=False)
                for spec, request in zip(self.args.resources, pod_requests)
            ]
            args = self.args

            def score_row_of(row: int) -> int:
                return score_row(args, columns, pod_requests, row)

            row_fn = score_row_of

        per_row = table.row_cached(
            (*self._score_key, tuple(pod_requests)), lambda r: scores(self.args, self.shape, table, r, pod_requests), row_fn
        )
        if per_row is not None:
            return per_row[rows]
        return scores(self.args, self.shape, table, rows, pod_requests)

    def _score_row(self, columns: list[tuple[IntArray, IntArray] | None], pod_requests: list[int], row: int) -> int:
        """One row's LeastAllocated or MostAllocated score, as ``_scores`` computes it."""
        return score_row(self.args, columns, pod_requests, row)

    def _scores(self, table: NodeTableView, rows: RowArray, pod_requests: list[int]) -> IntArray:
        return scores(self.args, self.shape, table, rows, pod_requests)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN), self._hint_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE), self._hint_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN), None),
        ] + ([] if self.extended is None else [  # a class may start backing a resource the pod asks for
            ClusterEventWithHint(ClusterEvent(self.extended.resource, ActionType.ADD | ActionType.UPDATE), None)])

    def _hint_pod_change(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """Queue when an assigned pod freed some of a resource this pod asks for."""
        if not isinstance(old, PodInfo):
            return QueueingHint.SKIP
        if not isinstance(new, PodInfo):  # deleted: it frees its pod slot and its requests
            return QueueingHint.QUEUE
        want, before, after = pod.requests.requests, old.requests.requests, new.requests.requests
        for name in ("cpu", "memory", "ephemeral-storage", *want.scalar):
            if want.get(name) > 0 and after.get(name) < before.get(name):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_node_change(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """Queue when the node's allocatable could hold the pod and grew (or the node is new)."""
        if not isinstance(new, Node):
            return QueueingHint.SKIP
        want, alloc = pod.requests.requests, new.allocatable
        if alloc.allowed_pod_number < 1:
            return QueueingHint.SKIP
        checks = [("cpu", want.milli_cpu), ("memory", want.memory), ("ephemeral-storage", want.ephemeral_storage)]
        delegated = self._delegated(want)  # DRA-backed and absent from the node: DynamicResources' to judge
        checks += [(n, a) for n, a in self._checked_scalars(want) if not (n in delegated and alloc.get(n) <= 0)]
        if any(amount > alloc.get(name) for name, amount in checks):
            return QueueingHint.SKIP
        if isinstance(old, Node) and all(alloc.get(n) <= old.allocatable.get(n) for n, _ in checks) and \
                alloc.allowed_pod_number <= old.allocatable.allowed_pod_number:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def dra_backed(extended: ExtendedResourceIndex | None, requests: Resource) -> frozenset[str]:
    """The extended resources in ``requests`` (non-zero) that a DeviceClass backs
    (upstream's ``shouldDelegateResourceToDRA`` without a node); none with the gate off."""
    if extended is None or not requests.scalar or extended.empty():
        return frozenset()
    return frozenset(n for n, q in requests.scalar.items() if q and is_dra_extended_resource(n) and extended.backs(n))


def extended_index_of(handle: Handle | None) -> ExtendedResourceIndex | None:
    """The DeviceClasses backing extended resources, with DRAExtendedResource on; None when off."""
    if handle is None or not handle.features.enable_dra_extended_resource:
        return None
    return extended_resource_index(handle)


def new(args: FitArgs, handle: Handle) -> NodeResourcesFit:
    return NodeResourcesFit(args, extended_index_of(handle), dra_scorer(handle, tuple(s.name for s in args.resources)))
