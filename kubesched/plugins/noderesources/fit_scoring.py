"""NodeResourcesFit's Score: LeastAllocated, MostAllocated or RequestedToCapacityRatio per row.

Upstream's ``leastResourceScorer``, ``mostResourceScorer`` and
``requestedToCapacityRatioScorer`` (its broken-linear shape) over the node table,
weighted by resource; a resource a node lacks is left out of its score (unless a DeviceClass
backs it: ``dra_totals``). ``score_row``
is one row's LeastAllocated or MostAllocated score in plain integers, for the row
cache's patches. Apart from the plugin because it is the scoring arithmetic alone.
"""

from __future__ import annotations

import numpy as np

from ...framework import MAX_NODE_SCORE, IntArray, NodeTableView, RowArray
from ..helper import go_div
from .fit_args import LEAST_ALLOCATED, MAX_UTILIZATION, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO, FitArgs
from .dra_scorer import DraScoring
from .resource_allocation import ResourceSpec, allocatable_and_requested

__all__ = ["broken_linear", "least_allocated", "score_row", "scores"]


def broken_linear(points: tuple[tuple[int, int], ...], utilization: IntArray) -> IntArray:
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


def least_allocated(
    table: NodeTableView, rows: RowArray, resources: tuple[ResourceSpec, ...], pod_requests: list[int],
    dra: DraScoring | None = None,
) -> IntArray | None:
    """LeastAllocated when every scored row has a positive allocatable of every scored
    resource (the usual case), in a third of the array operations; None otherwise."""
    if not len(rows):
        return None
    node_score: IntArray | None = None
    weight_sum = 0
    for spec, pod_request in zip(resources, pod_requests):
        found = allocatable_and_requested(table, rows, spec.name, pod_request, use_requested=False, dra=dra)
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


def score_row(args: FitArgs, columns: list[tuple[IntArray, IntArray] | None], pod_requests: list[int], row: int) -> int:
    """One row's LeastAllocated or MostAllocated score, as ``scores`` computes it."""
    least = args.strategy == LEAST_ALLOCATED
    node_score = weight_sum = 0
    for spec, pod_request, found in zip(args.resources, pod_requests, columns):
        if found is None:
            continue
        alloc = found[0].item(row)  # (a plain int, no numpy scalar)
        requested = found[1].item(row) + pod_request
        if alloc == 0:
            continue
        if least:
            score = 0 if requested > alloc else (alloc - requested) * MAX_NODE_SCORE // alloc
        else:
            score = min(requested, alloc) * MAX_NODE_SCORE // alloc
        node_score += score * spec.weight
        weight_sum += spec.weight
    return node_score // weight_sum if weight_sum else 0


def scores(args: FitArgs, shape: tuple[tuple[int, int], ...], table: NodeTableView, rows: RowArray,
           pod_requests: list[int], dra: DraScoring | None = None) -> IntArray:
    """The strategy's scores of ``rows`` (``shape``: RequestedToCapacityRatio's points scaled to
    0..100); ``dra``: the cycle's DRA data, for DRA-backed extended resources."""
    if args.strategy == LEAST_ALLOCATED:
        fast = least_allocated(table, rows, args.resources, pod_requests, dra)
        if fast is not None:
            return fast
    node_score = np.zeros(len(rows), dtype=np.int64)
    weight_sum = np.zeros(len(rows), dtype=np.int64)
    rtc = args.strategy == REQUESTED_TO_CAPACITY_RATIO
    for spec, pod_request in zip(args.resources, pod_requests):
        found = allocatable_and_requested(table, rows, spec.name, pod_request, use_requested=False, dra=dra)
        if found is None:
            continue
        alloc, requested = found
        present = alloc != 0
        safe_alloc = np.where(present, alloc, 1)
        if args.strategy == LEAST_ALLOCATED:
            score = np.where(requested > alloc, 0, (alloc - requested) * MAX_NODE_SCORE // safe_alloc)
        elif args.strategy == MOST_ALLOCATED:
            score = np.minimum(requested, alloc) * MAX_NODE_SCORE // safe_alloc
        else:
            utilization = np.where(requested > alloc, MAX_UTILIZATION, requested * MAX_UTILIZATION // safe_alloc)
            score = broken_linear(shape, utilization)
            present = present & (score > 0)
        node_score += np.where(present, score * spec.weight, 0)
        weight_sum += np.where(present, spec.weight, 0)
    safe_sum = np.where(weight_sum == 0, 1, weight_sum)
    if rtc:
        result = np.floor(node_score / safe_sum + 0.5).astype(np.int64)  # math.Round, non-negative
    else:
        result = node_score // safe_sum
    return np.where(weight_sum == 0, 0, result)
