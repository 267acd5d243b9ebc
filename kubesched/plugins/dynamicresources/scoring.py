"""DynamicResources' Score and NormalizeScore (upstream's ``Score`` and ``NormalizeScore``).

Only ``firstAvailable`` requests score: ``8 - i`` for each request served by its ``i``-th
subrequest on that node (Filter's allocation there, read from the allocator's picks
without building the results); normalized to 0..100 by the highest. Apart from the plugin
because it only reads what Filter kept.
"""

from __future__ import annotations

import numpy as np

from ...framework import CycleState, RowArray, SnapshotView
from ...framework.scoring import default_normalize_score
from ...framework.views import IntArray
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .filtering import FilterMixin
from .names import FIRST_AVAILABLE_MAX_SIZE
from .skipped import zero_scores
from .state import STATE, DraState, NodeAllocation

__all__ = ["ScoreMixin", "compute_score"]


class ScoreMixin(FilterMixin):
    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        s = state.get(STATE)
        if not self.enabled or not self.features.enable_dra_prioritized_list or s is None or not s.prioritized:
            return 0
        found = self.node_allocation(s, node_info.node.name, state, pod)
        return 0 if found is None else compute_score(s, found)

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        s = state.get(STATE)
        if s is None or not s.prioritized or not self.enabled or not self.features.enable_dra_prioritized_list:
            return zero_scores(len(rows))  # only firstAvailable requests score
        out = np.zeros(len(rows), dtype=np.int64)
        infos = snapshot.node_infos
        kept = s.verdicts.score if s.verdicts is not None else None
        if kept is not None:  # the shape's scores kept on rows whose devices did not change: one gather
            known = rows < len(kept)
            out[known] = kept[rows[known]]
            missing: list[int] = np.flatnonzero(~known | (out < 0)).tolist()
            out[missing] = 0
        else:
            missing = list(range(len(rows)))
        size = len(kept) if kept is not None else 0
        for k in missing:
            row = int(rows[k])
            info = infos[row]
            found = self.node_allocation(s, info.node.name, state, pod) if info is not None else None
            if found is not None:
                out[k] = compute_score(s, found)
                if kept is not None and row < size:
                    kept[row] = out[k]
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        s = state.get(STATE)
        if not self.enabled or s is None or s.empty():
            return scores  # all zero
        return default_normalize_score(scores, False)


def compute_score(s: DraState, found: NodeAllocation) -> int:
    """upstream's ``computeScore``: ``8 - i`` for each claim request served by its ``i``-th subrequest."""
    score = 0
    unallocated = 0
    for claim in s.claims:
        allocation = claim.allocation
        requests: set[str] | None = None
        if allocation is None:
            if unallocated >= len(found.results):
                return score
            picks = getattr(found.results, "picks", None)
            if picks is not None:  # the allocator's picks: no result built for a node only scored
                requests = {p.request for p in picks[unallocated].devices if "/" in p.request}
            else:
                allocation = found.results[unallocated]
            unallocated += 1
        chosen = requests if requests is not None else (
            {r.request for r in allocation.devices if "/" in r.request} if allocation is not None else set())
        if not chosen:
            continue
        for request in claim.spec.requests:
            if request.exactly is not None:
                continue
            for i, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score

