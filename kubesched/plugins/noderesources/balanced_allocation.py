"""NodeResourcesBalancedAllocation: favour nodes whose resource usage fractions stay close to each other.

With DRAExtendedResource, a scored extended resource a DeviceClass backs counts, on a node
that lacks it, as the class's devices there and those in use (``dra_totals``), as upstream's
PreScore/Score with ``getDRAPreScoredParams``."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...framework import (
    MAX_NODE_SCORE,
    SKIP,
    BoolArray,
    Code,
    CycleState,
    Handle,
    IntArray,
    NodeTableView,
    RowArray,
    SnapshotView,
    StateKey,
    Status,
)
from ...framework.args import Problems, decode_args, duplicate, invalid
from ...framework.signing import RESOURCES_SIGNER, SCORING_DEFAULTS, SignFragment, resources_signer
from ...objects.pod import PodInfo
from ..dynamicresources.extended_index import ExtendedResourceIndex
from .dra_scorer import DraScorer, DraScoring, dra_scorer
from .fit import dra_backed, extended_index_of
from .resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    allocatable_and_requested,
    default_resources,
    pod_request_vector,
    resource_columns,
)

NAME = "NodeResourcesBalancedAllocation"
_FloatArray = npt.NDArray[np.float64]


@dataclass(slots=True, frozen=True)
class _PreScoreState:
    """upstream's ``balancedAllocationPreScoreState``: the pod's scored requests and the cycle's
    DRA data (None unless a scored resource the pod asks for is backed by a DeviceClass)."""

    requests: list[int]
    dra: DraScoring | None


_STATE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + NAME)


@dataclass(slots=True, frozen=True)
class BalancedAllocationArgs:
    """``NodeResourcesBalancedAllocationArgs``: the resources whose usage fractions are balanced."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    def __post_init__(self) -> None:
        object.__setattr__(self, "resources", default_resources(self.resources))

    def validate(self) -> Problems:
        """``ValidateNodeResourcesBalancedAllocationArgs``."""
        problems: Problems = []
        seen: set[str] = set()
        for i, spec in enumerate(self.resources):
            if spec.name in seen:
                problems.append((f"resources[{i}].name", duplicate(spec.name)))
            seen.add(spec.name)
            if spec.weight != 1:
                problems.append((f"resources[{i}].weight", invalid(spec.weight, "must be 1")))
        return problems


def parse_args(raw: object) -> BalancedAllocationArgs:
    """``decode_args`` for this plugin's args (the registry decodes them the same way)."""
    return decode_args(BalancedAllocationArgs, raw)


_RESOURCES_NUMBERS: dict[tuple[ResourceSpec, ...], int] = {}


def _resources_number(resources: tuple[ResourceSpec, ...]) -> int:
    """A number for a scored resource list, the same for equal lists."""
    return _RESOURCES_NUMBERS.setdefault(resources, len(_RESOURCES_NUMBERS))


class BalancedAllocation:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: PreScore and Score read the pod's requests only (the scoring
        defaults unsigned, as upstream); a pod asking for a DRA-backed extended resource is not
        signed, as Fit's."""
        if dra_backed(self.extended, pod.requests.requests):
            return [], Status(Code.UNSCHEDULABLE, "signature disabled when dra extended resources are used in the cluster")
        return [SignFragment(RESOURCES_SIGNER, resources_signer(pod))], None

    upstream_unsigned_reads = (SCORING_DEFAULTS,)

    def __init__(self, args: BalancedAllocationArgs, extended: ExtendedResourceIndex | None = None,
                 dra: DraScorer | None = None) -> None:
        self.args = args
        # DRAExtendedResource: which extended resources a DeviceClass backs (None: gate off).
        self.extended = extended
        # DRAExtendedResource with a scored resource a class could back: scoring reads DRA.
        self.dra = dra
        self._scored_names = tuple(spec.name for spec in args.resources)
        # The per-row score cache's key, less the pod's requests: the scored resources stand
        # in as a number (hashing their dataclasses cost more than the rest of a cached Score).
        self._score_key = (NAME, _resources_number(args.resources))

    def _dra_scoring(self, state: CycleState, requests: list[int]) -> DraScoring | None:
        return self.dra.gather(state, self._scored_names, requests) if self.dra is not None else None

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        requests = pod_request_vector(pod.requests, self.args.resources, use_requested=True)
        if not any(requests):
            return SKIP  # best-effort pods would all pile onto one node otherwise
        state.write(_STATE_KEY, _PreScoreState(requests, self._dra_scoring(state, requests)))
        return None

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        """How much placing the pod changes the node's balance: 75 for no change,
        up to 100 for a node it balances, down to 50 for one it unbalances."""
        found = state.get(_STATE_KEY)
        if found is None:  # PreScore not run: Score gathers the same (as upstream's Score)
            requests = pod_request_vector(pod.requests, self.args.resources, use_requested=True)
            found = _PreScoreState(requests, self._dra_scoring(state, requests))
        requests = found.requests
        table = snapshot.table
        if found.dra is not None:
            # Devices and their allocations are not node-table columns: no per-row cache.
            return self._scores(table, rows, requests, found.dra)
        # A node's score depends on its own columns and the pod's requests only: kept
        # per row across cycles for pods of one shape, patched where pods changed.
        columns = [
            resource_columns(table, spec.name, request, use_requested=True)
            for spec, request in zip(self.args.resources, requests)
        ]
        per_row = table.row_cached(
            (*self._score_key, tuple(requests)),
            lambda r: self._scores(table, r, requests),
            lambda row: _score_row(columns, requests, row),
        )
        if per_row is not None:
            return per_row[rows]
        return self._scores(table, rows, requests)

    def _scores(self, table: NodeTableView, rows: RowArray, requests: list[int], dra: DraScoring | None = None) -> IntArray:
        fast = _two_resources(table, rows, self.args.resources, requests, dra)
        if fast is not None:
            return fast
        after: list[_FloatArray] = []
        before: list[_FloatArray] = []
        valids: list[BoolArray] = []
        for spec, pod_request in zip(self.args.resources, requests):
            found = allocatable_and_requested(table, rows, spec.name, pod_request, use_requested=True, dra=dra)
            if found is None:
                continue
            alloc, requested = found
            valid = alloc != 0
            denominator = np.where(valid, alloc, 1).astype(np.float64)
            after.append(np.where(valid, np.minimum(requested / denominator, 1.0), 0.0))
            before.append(np.where(valid, np.minimum((requested - pod_request) / denominator, 1.0), 0.0))
            valids.append(valid)
        if not valids:
            return np.full(len(rows), MAX_NODE_SCORE * 3 // 4, dtype=np.int64)
        balance_after = ((1 - _std(after, valids)) * MAX_NODE_SCORE).astype(np.int64)
        balance_before = ((1 - _std(before, valids)) * MAX_NODE_SCORE).astype(np.int64)
        # Balances lie in [50, 100]; their change maps onto [50, 100] around 75.
        return (MAX_NODE_SCORE * 3 // 2 + balance_after - balance_before) // 2


def new(args: BalancedAllocationArgs, handle: Handle) -> BalancedAllocation:
    return BalancedAllocation(args, extended_index_of(handle), dra_scorer(handle, tuple(s.name for s in args.resources)))


def _two_resources(
    table: NodeTableView, rows: RowArray, resources: tuple[ResourceSpec, ...], requests: list[int],
    dra: DraScoring | None = None,
) -> IntArray | None:
    """``score_nodes`` when exactly two resources are scored and every row has a positive
    allocatable of both (the default cpu and memory, as nodes have them): the same float
    operations in the same order as the general path, in half the array operations.
    None when that does not hold."""
    if not len(rows):
        return None
    found: list[tuple[IntArray, IntArray, int]] = []
    for spec, pod_request in zip(resources, requests):
        pair = allocatable_and_requested(table, rows, spec.name, pod_request, use_requested=True, dra=dra)
        if pair is not None:
            found.append((pair[0], pair[1], pod_request))
    if len(found) != 2:
        return None
    (alloc1, req1, pod1), (alloc2, req2, pod2) = found
    if alloc1.min() <= 0 or alloc2.min() <= 0:
        return None
    # int64 / int64 divides as float64, as the general path's int64 / float64 does.
    after1 = np.minimum(req1 / alloc1, 1.0)
    after2 = np.minimum(req2 / alloc2, 1.0)
    before1 = np.minimum((req1 - pod1) / alloc1, 1.0)
    before2 = np.minimum((req2 - pod2) / alloc2, 1.0)
    balance_after = ((1 - np.abs((after1 - after2) / 2)) * MAX_NODE_SCORE).astype(np.int64)
    balance_before = ((1 - np.abs((before1 - before2) / 2)) * MAX_NODE_SCORE).astype(np.int64)
    return (MAX_NODE_SCORE * 3 // 2 + balance_after - balance_before) // 2


def _score_row(columns: list[tuple[IntArray, IntArray] | None], requests: list[int], row: int) -> int:
    """One row's score in plain Python, with the float operations of ``score_nodes`` in its order."""
    if len(columns) == 2:  # the default cpu and memory, both on the node: the loop below, unrolled
        first, second = columns
        if first is not None and second is not None:
            alloc1, alloc2 = first[0].item(row), second[0].item(row)
            if alloc1 != 0 and alloc2 != 0:
                pod1, pod2 = requests
                requested1, requested2 = first[1].item(row) + pod1, second[1].item(row) + pod2
                denominator1, denominator2 = float(alloc1), float(alloc2)
                after1 = min(float(requested1) / denominator1, 1.0)
                after2 = min(float(requested2) / denominator2, 1.0)
                before1 = min(float(requested1 - pod1) / denominator1, 1.0)
                before2 = min(float(requested2 - pod2) / denominator2, 1.0)
                balance_after = int((1 - abs((after1 - after2) / 2)) * MAX_NODE_SCORE)
                balance_before = int((1 - abs((before1 - before2) / 2)) * MAX_NODE_SCORE)
                return (MAX_NODE_SCORE * 3 // 2 + balance_after - balance_before) // 2
    after: list[float] = []
    before: list[float] = []
    found = False
    for pair, pod_request in zip(columns, requests):
        if pair is None:
            continue
        found = True
        alloc = pair[0].item(row)  # (a plain int, no numpy scalar)
        if alloc == 0:
            continue
        requested = pair[1].item(row) + pod_request
        denominator = float(alloc)
        after.append(min(float(requested) / denominator, 1.0))
        before.append(min(float(requested - pod_request) / denominator, 1.0))
    if not found:
        return MAX_NODE_SCORE * 3 // 4
    return (MAX_NODE_SCORE * 3 // 2 + _balance(after) - _balance(before)) // 2


def _balance(fractions: list[float]) -> int:
    """``(1 - std) * 100`` truncated, for one node's valid fractions (see ``_std``)."""
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for f in fractions:
            total = total + f
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * MAX_NODE_SCORE)


def _std(fractions: list[_FloatArray], valids: list[BoolArray]) -> _FloatArray:
    """Per node, the standard deviation of its usage fractions, as ``balancedResourceScorer``:
    |f1 - f2| / 2 for two resources, the population formula for more, 0 for fewer."""
    n = len(valids[0])
    count = np.sum(valids, axis=0)
    std = np.zeros(n, dtype=np.float64)
    two = count == 2
    if two.any():
        first = np.zeros(n)
        second = np.zeros(n)
        seen = np.zeros(n, dtype=np.int64)
        for f, v in zip(fractions, valids):
            first = np.where(v & (seen == 0), f, first)
            second = np.where(v & (seen == 1), f, second)
            seen += v
        std = np.where(two, np.abs((first - second) / 2), std)
    more = count > 2
    if more.any():
        safe = np.where(count == 0, 1, count)
        total = np.zeros(n)
        for f in fractions:
            total = total + f
        mean = total / safe
        acc = np.zeros(n)
        for f, v in zip(fractions, valids):
            acc = acc + np.where(v, (f - mean) * (f - mean), 0.0)
        std = np.where(more, np.sqrt(acc / safe), std)
    return std
