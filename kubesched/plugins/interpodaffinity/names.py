"""InterPodAffinity's name and the reasons its Filter gives, as upstream words them.

Apart so that PreFilter/Filter (``filtering.py``), Score (``scoring.py``), the queueing
hints (``hints.py``) and the plugin all read them without importing one another.
"""

from __future__ import annotations

__all__ = [
    "NAME",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
]

NAME = "InterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
