"""What DynamicResources answers for a pod it has nothing to do for, shared by the plugin's
front (``plugin.py``, before the machinery is loaded) and the machinery itself."""

from __future__ import annotations

import numpy as np

from ...framework import Code, Status
from ...framework.views import IntArray

__all__ = ["PRE_BIND_SKIP", "zero_scores"]

PRE_BIND_SKIP = Status(Code.SKIP)  # PreBindPreFlight: no claim to write

_ZEROS: dict[int, IntArray] = {}


def zero_scores(size: int) -> IntArray:
    """A shared read-only array of ``size`` zero scores (the usual answer: a pod without claims)."""
    found = _ZEROS.get(size)
    if found is None:
        if len(_ZEROS) > 64:
            _ZEROS.clear()
        found = np.zeros(size, dtype=np.int64)
        found.flags.writeable = False
        _ZEROS[size] = found
    return found
