"""Helpers shared by in-tree plugins (upstream's ``plugins/helper``)."""

from __future__ import annotations

import numpy as np

from ..framework.scoring import default_normalize_score
from ..framework.views import IntArray

__all__ = ["default_normalize_score", "go_div"]


def go_div(numerator: IntArray, denominator: IntArray | int) -> IntArray:
    """Integer division truncating toward zero, as Go's ``/`` on int64."""
    numerator = np.asarray(numerator, dtype=np.int64)
    quotient = np.abs(numerator) // np.abs(denominator)
    return np.where((numerator < 0) ^ (np.asarray(denominator) < 0), -quotient, quotient)
