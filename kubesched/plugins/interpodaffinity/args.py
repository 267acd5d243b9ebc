"""``InterPodAffinityArgs``: decoded strictly, defaulted and validated as upstream does."""

from __future__ import annotations

from dataclasses import dataclass

from ...framework.args import ArgsError, expect_fields, get_bool, get_int

__all__ = ["InterPodAffinityArgs", "parse_args", "MIN_HARD_POD_AFFINITY_WEIGHT", "MAX_HARD_POD_AFFINITY_WEIGHT"]

MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100
_INT32 = (-(2**31), 2**31 - 1)


@dataclass(slots=True, frozen=True)
class InterPodAffinityArgs:
    """``hardPodAffinityWeight``: the score an existing pod's *required* affinity term adds
    to the nodes of its domain when the incoming pod matches it (0 turns that off);
    ``ignorePreferredTermsOfExistingPods``: skip scoring for pods without preferred terms."""

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def parse_args(raw: object) -> InterPodAffinityArgs:
    fields = expect_fields(raw, ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"))
    weight = get_int(fields, "hardPodAffinityWeight", 1)
    if not _INT32[0] <= weight <= _INT32[1]:
        raise ArgsError("hardPodAffinityWeight", f"must be a 32-bit integer, got {weight}")
    if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
        raise ArgsError(
            "hardPodAffinityWeight",
            f"Invalid value: {weight}: not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}-{MAX_HARD_POD_AFFINITY_WEIGHT}]",
        )
    ignore = get_bool(fields, "ignorePreferredTermsOfExistingPods", False)
    return InterPodAffinityArgs(weight, ignore)
