"""``DefaultPreemptionArgs``: decoded strictly, defaulted and validated as upstream does."""

from __future__ import annotations

from dataclasses import dataclass

from ...framework.args import Int32, Problems, decode_args, invalid

__all__ = ["DefaultPreemptionArgs", "parse_args"]


@dataclass(slots=True, frozen=True)
class DefaultPreemptionArgs:
    """How many candidate nodes the dry run looks for before choosing: at least
    ``minCandidateNodesPercentage`` percent of the nodes preemption might help, at least
    ``minCandidateNodesAbsolute`` nodes, at most all of them (upstream's defaults: 10, 100)."""

    min_candidate_nodes_percentage: Int32 = 10
    min_candidate_nodes_absolute: Int32 = 100

    def validate(self) -> Problems:
        """``ValidateDefaultPreemptionArgs``."""
        problems: Problems = []
        percentage, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        if not 0 <= percentage <= 100:
            problems.append(("minCandidateNodesPercentage", invalid(percentage, "not in valid range [0, 100]")))
        if absolute < 0:
            problems.append(("minCandidateNodesAbsolute", invalid(absolute, "not in valid range [0, inf)")))
        if percentage == 0 and absolute == 0:
            problems.append(("minCandidateNodesPercentage",
                             invalid(percentage, "cannot be zero at the same time as minCandidateNodesAbsolute")))
            problems.append(("minCandidateNodesAbsolute",
                             invalid(absolute, "cannot be zero at the same time as minCandidateNodesPercentage")))
        return problems

    def num_candidates(self, num_nodes: int) -> int:
        """upstream's ``calculateNumCandidates``."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        return min(max(n, self.min_candidate_nodes_absolute), num_nodes)


def parse_args(raw: object) -> DefaultPreemptionArgs:
    """``decode_args`` for this plugin's args (the registry decodes them the same way)."""
    return decode_args(DefaultPreemptionArgs, raw)
