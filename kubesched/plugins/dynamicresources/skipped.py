"""What DynamicResources answers for a pod it has nothing to do for, shared by the plugin's
front (``plugin.py``, before the machinery is loaded) and the machinery itself. Its zero
scores are the framework's shared array, which ``default_normalize_score`` knows without
reading it."""

from __future__ import annotations

from ...framework import Code, Status
from ..helper import zero_scores

__all__ = ["PRE_BIND_SKIP", "zero_scores"]

PRE_BIND_SKIP = Status(Code.SKIP)  # PreBindPreFlight: no claim to write
