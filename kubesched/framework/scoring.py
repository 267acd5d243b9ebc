"""Score helpers every Score plugin may want (upstream's ``plugins/helper``)."""

from __future__ import annotations

import numpy as np

from .interfaces import MAX_NODE_SCORE
from .views import IntArray

__all__ = ["default_normalize_score"]

_max = np.maximum.reduce  # ndarray.max() without its Python-level wrapper


def default_normalize_score(scores: IntArray, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> IntArray:
    """``helper.DefaultNormalizeScore``: scale to [0, max] by the highest score, optionally reversed."""
    scores = np.asarray(scores, dtype=np.int64)
    highest = int(_max(scores)) if len(scores) else 0
    if highest == 0:
        if reverse:
            out = np.empty(len(scores), dtype=np.int64)
            out.fill(max_priority)
            return out
        return scores
    scaled = max_priority * scores // highest
    return max_priority - scaled if reverse else scaled
