"""What the GPU policies read alike: the node's cpu left, the pod's cpu, the spec maxima.

The paper's simulator scores cpu and GPU only (memory plays no part). A pod's cpu is
its non-zero request (100m for a container without one), a node's cpu left is its
allocatable minus what its pods request, as upstream's ``NodeInfo`` counts them.
"""

from __future__ import annotations

import numpy as np

from kubesched.framework import FloatArray, IntArray, NodeTableView, RowArray
from kubesched.objects import PodInfo

__all__ = ["MAX_SPEC_CPU", "MAX_SPEC_GPU", "cpu_left", "pod_cpu", "truncate"]

MAX_SPEC_CPU = 128_000
"""The largest node's cpu (millicores): the scale of cpu in BestFit and DotProduct."""
MAX_SPEC_GPU = 8_000
"""The largest node's GPU (milli-GPU, 8 devices): the scale of GPU in the same policies."""


def cpu_left(table: NodeTableView, rows: RowArray) -> IntArray:
    return np.asarray(table.alloc_cpu[rows] - table.req_cpu[rows], dtype=np.int64)


def pod_cpu(pod: PodInfo) -> int:
    return pod.requests.non_zero_milli_cpu


def truncate(values: FloatArray) -> IntArray:
    """Go's ``int64(x)``: towards zero."""
    return np.trunc(values).astype(np.int64)
