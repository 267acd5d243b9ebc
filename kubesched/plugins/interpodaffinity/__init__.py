"""InterPodAffinity (upstream's ``interpodaffinity`` plugin): see ``plugin.py``."""

from .args import InterPodAffinityArgs, parse_args
from .plugin import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
    InterPodAffinity,
    new,
)

__all__ = [
    "NAME",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "parse_args",
    "new",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
]
