"""Score helpers every Score plugin may want (upstream's ``plugins/helper``)."""

from __future__ import annotations

import numpy as np

from .interfaces import MAX_NODE_SCORE
from .views import IntArray

__all__ = ["default_normalize_score", "zero_scores"]

_max = np.maximum.reduce  # ndarray.max() without its Python-level wrapper

# Shared read-only score arrays, by length: zeros (``zero_scores``) and the full score
# that reversing them gives. A cycle scores a few hundred nodes; lengths vary little.
_ZEROS: dict[int, IntArray] = {}
_FULL: dict[int, IntArray] = {}


def _shared(store: dict[int, IntArray], size: int, value: int) -> IntArray:
    found = store.get(size)
    if found is None:
        if len(store) > 64:
            store.clear()
        found = np.full(size, value, dtype=np.int64)
        found.flags.writeable = False
        store[size] = found
    return found


def zero_scores(size: int) -> IntArray:
    """A shared read-only array of ``size`` zero scores: what a plugin with nothing to
    score on any node answers. ``default_normalize_score`` knows it for all zeros
    without reading it."""
    return _shared(_ZEROS, size, 0)


def default_normalize_score(scores: IntArray, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> IntArray:
    """``helper.DefaultNormalizeScore``: scale to [0, max] by the highest score, optionally reversed."""
    scores = np.asarray(scores, dtype=np.int64)
    if scores is _ZEROS.get(len(scores)):  # zero_scores: every score 0, the highest too
        return _shared(_FULL, len(scores), max_priority) if reverse else scores
    highest = int(_max(scores)) if len(scores) else 0
    if highest == 0:
        if reverse:
            out = np.empty(len(scores), dtype=np.int64)
            out.fill(max_priority)
            return out
        return scores
    scaled = max_priority * scores // highest
    return max_priority - scaled if reverse else scaled
