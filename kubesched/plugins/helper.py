"""Helpers shared by in-tree plugins (upstream's ``plugins/helper``)."""

from __future__ import annotations

import numpy as np

from ..framework.interfaces import MAX_NODE_SCORE

__all__ = ["default_normalize_score", "go_div"]


_max = np.maximum.reduce  # ndarray.max() without its Python-level wrapper


def default_normalize_score(scores: np.ndarray, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> np.ndarray:
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


def go_div(numerator: np.ndarray, denominator: np.ndarray | int) -> np.ndarray:
    """Integer division truncating toward zero, as Go's ``/`` on int64."""
    numerator = np.asarray(numerator, dtype=np.int64)
    quotient = np.abs(numerator) // np.abs(denominator)
    return np.where((numerator < 0) ^ (np.asarray(denominator) < 0), -quotient, quotient)
