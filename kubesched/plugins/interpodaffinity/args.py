"""``InterPodAffinityArgs``: decoded strictly, defaulted and validated as upstream does."""

from __future__ import annotations

from dataclasses import dataclass

from ...framework.args import Int32, Problems, decode_args, invalid

__all__ = ["InterPodAffinityArgs", "parse_args", "MIN_HARD_POD_AFFINITY_WEIGHT", "MAX_HARD_POD_AFFINITY_WEIGHT"]

MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


@dataclass(slots=True, frozen=True)
class InterPodAffinityArgs:
    """``hardPodAffinityWeight``: the score an existing pod's *required* affinity term adds
    to the nodes of its domain when the incoming pod matches it (0 turns that off);
    ``ignorePreferredTermsOfExistingPods``: skip scoring for pods without preferred terms."""

    hard_pod_affinity_weight: Int32 = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    def validate(self) -> Problems:
        """``ValidateInterPodAffinityArgs``."""
        weight = self.hard_pod_affinity_weight
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
            detail = f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
            return [("hardPodAffinityWeight", invalid(weight, detail))]
        return []


def parse_args(raw: object) -> InterPodAffinityArgs:
    """``decode_args`` for this plugin's args (the registry decodes them the same way)."""
    return decode_args(InterPodAffinityArgs, raw)
