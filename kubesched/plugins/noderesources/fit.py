"""NodeResourcesFit: the node must have room for the pod's requests; scoring by a strategy.

Filter reasons come in upstream's order: ``Too many pods``, cpu, memory,
ephemeral-storage, then extended resources (by name). A reason is unresolvable
(``UnschedulableAndUnresolvable``) when the request exceeds the node's whole
allocatable, since evicting pods could not help.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

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
from ...framework.args import Int32, Problems, decode_args, forbidden, invalid, label_name_problems, not_supported, required
from ...objects.node import Node
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from ...objects.resources import Resource, is_extended_resource
from ..helper import go_div
from .resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    allocatable_and_requested,
    default_resources,
    pod_request_vector,
    resource_columns,
)

NAME = "NodeResourcesFit"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100
_STATE_KEY: StateKey[Resource] = StateKey("PreFilter" + NAME)
_SCORE_KEY: StateKey[list[int]] = StateKey("PreScore" + NAME)

_Check = tuple[str, int, IntArray, IntArray]
"""A resource ``filter_nodes`` checks: its name, the pod's request, allocatable and requested columns."""


@dataclass(slots=True, frozen=True)
class UtilizationShapePoint:
    """A point of the RequestedToCapacityRatio function: utilization (0..100) -> score (0..10)."""

    utilization: Int32 = 0
    score: Int32 = 0


@dataclass(slots=True, frozen=True)
class RequestedToCapacityRatioParam:
    shape: tuple[UtilizationShapePoint, ...] = ()


@dataclass(slots=True, frozen=True)
class ScoringStrategy:
    """``config.ScoringStrategy``. A given ``scoringStrategy`` has no default ``type`` (upstream
    rejects ``""``); its resources default to cpu and memory, and a weight 0 to 1."""

    type: str = ""
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "resources", default_resources(self.resources))


DEFAULT_SCORING_STRATEGY = ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)
"""``SetDefaults_NodeResourcesFitArgs`` when the args give no ``scoringStrategy``."""

_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)


@dataclass(slots=True, frozen=True)
class FitArgs:
    """``NodeResourcesFitArgs``, decoded and defaulted as upstream; ``strategy``, ``resources``
    and ``shape`` are the scoring strategy's parts as the plugin reads them."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = DEFAULT_SCORING_STRATEGY

    @property
    def strategy(self) -> str:
        return self.scoring_strategy.type

    @property
    def resources(self) -> tuple[ResourceSpec, ...]:
        return self.scoring_strategy.resources

    @property
    def shape(self) -> tuple[tuple[int, int], ...]:
        """RequestedToCapacityRatio's points as (utilization, score 0..10); () for the other strategies."""
        rtc = self.scoring_strategy.requested_to_capacity_ratio
        if self.strategy != REQUESTED_TO_CAPACITY_RATIO or rtc is None:
            return ()
        return tuple((p.utilization, p.score) for p in rtc.shape)

    def validate(self) -> Problems:
        """``ValidateNodeResourcesFitArgs``, in its order."""
        problems: Problems = []
        for i, name in enumerate(self.ignored_resources):
            problems += label_name_problems(name, f"ignoredResources[{i}]")
        for i, group in enumerate(self.ignored_resource_groups):
            path = f"ignoredResourceGroups[{i}]"
            if "/" in group:
                problems.append((path, invalid(group, "resource group name can't contain '/'")))
            problems += label_name_problems(group, path)
        strategy = self.scoring_strategy
        if strategy.type not in _STRATEGY_TYPES:
            problems.append(("scoringStrategy.type", not_supported(strategy.type, _STRATEGY_TYPES)))
        for i, spec in enumerate(strategy.resources):
            if not 0 < spec.weight <= 100:
                detail = f"resource weight of {spec.name} not in valid range (0, 100]"
                problems.append((f"scoringStrategy.resources[{i}].weight", invalid(spec.weight, detail)))
        rtc_path = "scoringStrategy.requestedToCapacityRatio"
        if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            if strategy.requested_to_capacity_ratio is None:
                problems.append((rtc_path, required("must be specified when type is RequestedToCapacityRatio")))
            else:
                problems += _shape_problems(strategy.requested_to_capacity_ratio.shape, f"{rtc_path}.shape")
        elif strategy.requested_to_capacity_ratio is not None:
            problems.append((rtc_path, forbidden("must be nil when type is not RequestedToCapacityRatio")))
        return problems


def _shape_problems(shape: tuple[UtilizationShapePoint, ...], path: str) -> Problems:
    """``validateFunctionShape``."""
    if not shape:
        return [(path, required("at least one point must be specified"))]
    problems: Problems = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            problems.append((f"{path}[{i}].utilization", invalid(shape[i].utilization, "values must be sorted in increasing order")))
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= MAX_UTILIZATION:
            problems.append((f"{path}[{i}].utilization", invalid(point.utilization, f"not in valid range [0, {MAX_UTILIZATION}]")))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            problems.append((f"{path}[{i}].score", invalid(point.score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")))
    return problems


def parse_args(raw: object) -> FitArgs:
    """``decode_args`` for this plugin's args (the registry decodes them the same way)."""
    return decode_args(FitArgs, raw)


def _broken_linear(points: tuple[tuple[int, int], ...], utilization: IntArray) -> IntArray:
    """``helper.BuildBrokenLinearFunction`` over an array of utilisations."""
    out = np.full(len(utilization), points[-1][1], dtype=np.int64)
    done = np.zeros(len(utilization), dtype=bool)
    for i, (u, s) in enumerate(points):
        hit = ~done & (utilization <= u)
        if i == 0:
            out[hit] = s
        else:
            pu, ps = points[i - 1]
            out[hit] = ps + go_div((s - ps) * (utilization[hit] - pu), u - pu)
        done |= hit
    return out


def _least_allocated(
    table: NodeTableView, rows: RowArray, resources: tuple[ResourceSpec, ...], pod_requests: list[int]
) -> IntArray | None:
    """LeastAllocated when every scored row has a positive allocatable of every scored
    resource (the usual case), in a third of the array operations; None otherwise."""
    if not len(rows):
        return None
    node_score: IntArray | None = None
    weight_sum = 0
    for spec, pod_request in zip(resources, pod_requests):
        found = allocatable_and_requested(table, rows, spec.name, pod_request, use_requested=False)
        if found is None:
            continue
        alloc, requested = found
        if alloc.min() <= 0:
            return None
        # (alloc - requested) * 100 // alloc, or 0 when requested > alloc
        score = np.maximum(alloc - requested, 0) * MAX_NODE_SCORE // alloc
        if spec.weight != 1:
            score *= spec.weight
        node_score = score if node_score is None else node_score + score
        weight_sum += spec.weight
    if node_score is None:
        return np.zeros(len(rows), dtype=np.int64)
    return node_score // weight_sum if weight_sum != 1 else node_score


def _fit_keys(table: NodeTableView, rows: RowArray | slice[int, int, None], checks: list[_Check]) -> IntArray:
    """Failure keys (see ``filter_nodes``) of ``rows``."""
    keys = (table.pod_count[rows] >= table.alloc_pods[rows]).astype(np.int64) << 1  # pods + 1 > allowed
    for i, (_, want, alloc, req) in enumerate(checks):
        capacity = alloc[rows]
        lacking = capacity - req[rows] < want
        keys |= lacking.astype(np.int64) << (i + 2)
        keys |= lacking & (capacity < want)  # more than the node's whole allocatable: unresolvable
    return keys


def _fit_key(table: NodeTableView, row: int, checks: list[_Check]) -> int:
    """``_fit_keys`` of one row, in plain integers."""
    key = 2 if table.pod_count[row] >= table.alloc_pods[row] else 0
    for i, (_, want, alloc, req) in enumerate(checks):
        capacity = int(alloc[row])
        if capacity - int(req[row]) < want:
            key |= 1 << (i + 2)
            if capacity < want:
                key |= 1
    return key


class NodeResourcesFit:
    name = NAME

    def __init__(self, args: FitArgs) -> None:
        self.args = args
        self.shape = tuple((u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in args.shape)

    # -- PreFilter / Filter ------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_STATE_KEY, pod.requests.requests)
        return None, None

    def _checked_scalars(self, requests: Resource) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        for name in sorted(requests.scalar):
            amount = requests.scalar[name]
            if amount == 0:
                continue
            if is_extended_resource(name):
                if name in self.args.ignored_resources:
                    continue
                if self.args.ignored_resource_groups and name.split("/", 1)[0] in self.args.ignored_resource_groups:
                    continue
            out.append((name, amount))
        return out

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        requests = state.get(_STATE_KEY) or pod.requests.requests
        alloc, used = node.allocatable, node.requested
        reasons: list[str] = []
        unresolvable = False
        if len(node.pods) + 1 > alloc.allowed_pod_number:
            reasons.append("Too many pods")  # never unresolvable upstream, even with no pod slots
        if not requests.is_zero():
            checks = [
                ("cpu", requests.milli_cpu, alloc.milli_cpu, used.milli_cpu),
                ("memory", requests.memory, alloc.memory, used.memory),
                ("ephemeral-storage", requests.ephemeral_storage, alloc.ephemeral_storage, used.ephemeral_storage),
            ]
            checks += [(n, a, alloc.scalar.get(n, 0), used.scalar.get(n, 0)) for n, a in self._checked_scalars(requests)]
            for resource, want, capacity, taken in checks:
                if want > 0 and want > capacity - taken:
                    reasons.append(f"Insufficient {resource}")
                    unresolvable |= want > capacity
        if not reasons:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, *reasons)

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        requests = state.get(_STATE_KEY) or pod.requests.requests
        table = snapshot.table
        n = table.size
        checks: list[_Check] = []
        if not requests.is_zero():
            checks = [
                ("cpu", requests.milli_cpu, table.alloc_cpu, table.req_cpu),
                ("memory", requests.memory, table.alloc_mem, table.req_mem),
                ("ephemeral-storage", requests.ephemeral_storage, table.alloc_eph, table.req_eph),
            ]
            for name, amount in self._checked_scalars(requests):
                alloc, req = table.scalar_columns(name)
                checks.append((name, amount, alloc, req))
            checks = [c for c in checks if c[1] > 0]
        # Per row, a failure key: bit 0 unresolvable, bit 1 too many pods, bit 2 + i the
        # i-th check lacking. Kept current as pods come and go (pods of one shape share it).
        cache_key = (NAME, "filter", tuple((c[0], c[1]) for c in checks))
        keys = table.row_cached(cache_key, lambda rows: _fit_keys(table, rows, checks), lambda row: _fit_key(table, row, checks))
        keys = _fit_keys(table, slice(0, n), checks) if keys is None else keys[:n]
        if not keys.any():  # the usual case: room for the pod everywhere
            return NodeVerdicts.all_pass(n)
        names = ["Too many pods"] + [f"Insufficient {c[0]}" for c in checks]
        failed = keys != 0
        unique, inverse = np.unique(keys[failed], return_inverse=True)
        statuses: list[Status] = []
        for key in unique.tolist():
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if key & 1 else Code.UNSCHEDULABLE
            mask = key >> 1
            statuses.append(Status(code, *(names[i] for i in range(len(names)) if mask >> i & 1)))
        codes = np.zeros(n, dtype=np.int32)
        codes[failed] = inverse.reshape(-1) + 1
        return NodeVerdicts(codes, statuses)

    # -- Score --------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        state.write(_SCORE_KEY, pod_request_vector(pod.requests, self.args.resources, use_requested=False))
        return None

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        pod_requests = state.get(_SCORE_KEY)
        if pod_requests is None:
            pod_requests = pod_request_vector(pod.requests, self.args.resources, use_requested=False)
        table = snapshot.table
        # A node's score depends on its own columns and the pod's requests only: kept
        # per row across cycles for pods of one shape, patched where pods changed.
        row_fn: Callable[[int], int] | None = None
        if self.args.strategy in (LEAST_ALLOCATED, MOST_ALLOCATED):
            columns = [
                resource_columns(table, spec.name, request, use_requested=False)
                for spec, request in zip(self.args.resources, pod_requests)
            ]

            def score_row(row: int) -> int:
                return self._score_row(columns, pod_requests, row)

            row_fn = score_row

        per_row = table.row_cached(
            (NAME, "score", self.args, tuple(pod_requests)), lambda r: self._scores(table, r, pod_requests), row_fn
        )
        if per_row is not None:
            return per_row[rows]
        return self._scores(table, rows, pod_requests)

    def _score_row(self, columns: list[tuple[IntArray, IntArray] | None], pod_requests: list[int], row: int) -> int:
        """One row's LeastAllocated or MostAllocated score, as ``_scores`` computes it."""
        least = self.args.strategy == LEAST_ALLOCATED
        node_score = weight_sum = 0
        for spec, pod_request, found in zip(self.args.resources, pod_requests, columns):
            if found is None:
                continue
            alloc = int(found[0][row])
            requested = int(found[1][row]) + pod_request
            if alloc == 0:
                continue
            if least:
                score = 0 if requested > alloc else (alloc - requested) * MAX_NODE_SCORE // alloc
            else:
                score = min(requested, alloc) * MAX_NODE_SCORE // alloc
            node_score += score * spec.weight
            weight_sum += spec.weight
        return node_score // weight_sum if weight_sum else 0

    def _scores(self, table: NodeTableView, rows: RowArray, pod_requests: list[int]) -> IntArray:
        if self.args.strategy == LEAST_ALLOCATED:
            fast = _least_allocated(table, rows, self.args.resources, pod_requests)
            if fast is not None:
                return fast
        node_score = np.zeros(len(rows), dtype=np.int64)
        weight_sum = np.zeros(len(rows), dtype=np.int64)
        rtc = self.args.strategy == REQUESTED_TO_CAPACITY_RATIO
        for spec, pod_request in zip(self.args.resources, pod_requests):
            found = allocatable_and_requested(table, rows, spec.name, pod_request, use_requested=False)
            if found is None:
                continue
            alloc, requested = found
            present = alloc != 0
            safe_alloc = np.where(present, alloc, 1)
            if self.args.strategy == LEAST_ALLOCATED:
                score = np.where(requested > alloc, 0, (alloc - requested) * MAX_NODE_SCORE // safe_alloc)
            elif self.args.strategy == MOST_ALLOCATED:
                score = np.minimum(requested, alloc) * MAX_NODE_SCORE // safe_alloc
            else:
                utilization = np.where(requested > alloc, MAX_UTILIZATION, requested * MAX_UTILIZATION // safe_alloc)
                score = _broken_linear(self.shape, utilization)
                present = present & (score > 0)
            node_score += np.where(present, score * spec.weight, 0)
            weight_sum += np.where(present, spec.weight, 0)
        safe_sum = np.where(weight_sum == 0, 1, weight_sum)
        if rtc:
            result = np.floor(node_score / safe_sum + 0.5).astype(np.int64)  # math.Round, non-negative
        else:
            result = node_score // safe_sum
        return np.where(weight_sum == 0, 0, result)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN), self._hint_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE), self._hint_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN), None),
        ]

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
        checks += self._checked_scalars(want)
        if any(amount > alloc.get(name) for name, amount in checks):
            return QueueingHint.SKIP
        if isinstance(old, Node) and all(alloc.get(n) <= old.allocatable.get(n) for n, _ in checks) and \
                alloc.allowed_pod_number <= old.allocatable.allowed_pod_number:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def new(args: FitArgs, handle: Handle) -> NodeResourcesFit:
    return NodeResourcesFit(args)
