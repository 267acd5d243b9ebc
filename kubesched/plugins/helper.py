"""Helpers shared by in-tree plugins (upstream's ``plugins/helper``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..framework.events import QueueingHint
from ..framework.scoring import default_normalize_score, zero_scores
from ..framework.views import IntArray
from ..objects.pod import PodInfo

__all__ = ["claim_hint", "default_normalize_score", "go_div", "matching_scheduling_group", "zero_scores"]


def go_div(numerator: IntArray, denominator: IntArray | int) -> IntArray:
    """Integer division truncating toward zero, as Go's ``/`` on int64."""
    numerator = np.asarray(numerator, dtype=np.int64)
    quotient = np.abs(numerator) // np.abs(denominator)
    return np.where((numerator < 0) ^ (np.asarray(denominator) < 0), -quotient, quotient)


def claim_hint(pod: PodInfo, claim: object | None, ephemeral: bool = True) -> QueueingHint:
    """The hint of the volume plugins for a PersistentVolumeClaim event: QUEUE when the
    claim is one of ``pod``'s volumes (``ephemeral=False``: not a generic ephemeral one),
    or when the object cannot be read; SKIP for any other claim."""
    if not isinstance(claim, Mapping):
        return QueueingHint.QUEUE
    meta = claim.get("metadata") or {}
    if not isinstance(meta, Mapping) or (meta.get("namespace") or "default") != pod.namespace:
        return QueueingHint.SKIP
    name = meta.get("name")
    if any(v.claim == name and (ephemeral or not v.ephemeral) for v in pod.volumes):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def matching_scheduling_group(a: PodInfo, b: PodInfo) -> bool:
    """Whether two pods belong to the same pod group (upstream's ``MatchingSchedulingGroup``):
    both name one, the same, in the same namespace."""
    return (a.namespace == b.namespace and a.pod_group_name is not None and b.pod_group_name is not None
            and a.pod_group_name == b.pod_group_name)
