"""Which nodes can yield victims at all, read from the node table before any dry run.

Upstream's ``SelectVictimsOnNode`` answers "No preemption victims found for incoming
pod" at once on a node without a pod of lower priority than the preemptor, but only
after ``DryRunPreemption`` has copied the node and the cycle state for it. When a
plugin rejects a pod as Unschedulable on every node, that is one copy per node per
rejected pod, for nothing when the cluster holds no lower-priority pod. Here the
lowest pod priority of every row is kept by the node table (recomputed only for rows
whose pods changed), so the nodes that cannot yield victims are told apart with one
array comparison and get that answer without being copied or filtered.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...objects.nodeinfo import NodeInfo
from ..status import Code, Status
from ..views import IntArray, SnapshotView

__all__ = ["NO_VICTIMS_REASON", "NO_VICTIMS", "lowest_pod_priority", "split_by_potential_victims"]

NO_VICTIMS_REASON = "No preemption victims found for incoming pod"
NO_VICTIMS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_REASON)
"""What ``SelectVictimsOnNode`` answers for a node without lower-priority pods."""

_KEY = "kubesched.io/preemption/lowest-pod-priority"
_NO_POD = np.iinfo(np.int64).max  # a row without pods: nothing is lower than it


def _lowest(info: NodeInfo | None) -> int:
    if info is None or not info.pods:
        return int(_NO_POD)
    return min(p.priority for p in info.pods.values())


def lowest_pod_priority(snapshot: SnapshotView) -> IntArray | None:
    """Per table row, the lowest priority among the node's pods (int64 max without pods);
    None when the table cannot keep it."""
    infos = snapshot.node_infos

    def compute(rows: np.ndarray) -> IntArray:
        return np.fromiter((_lowest(infos[r]) for r in rows.tolist()), dtype=np.int64, count=len(rows))

    def compute_row(row: int) -> int:
        return _lowest(infos[row])

    return snapshot.table.row_cached(_KEY, compute, compute_row, eager=True)


def split_by_potential_victims(snapshot: SnapshotView, names: Sequence[str],
                               priority: int) -> tuple[list[str], list[str]]:
    """``(able, unable)``, each in the order given: nodes holding a pod of priority below
    ``priority``, and the others (nodes the snapshot does not have are in neither)."""
    lowest = lowest_pod_priority(snapshot)
    if lowest is None:
        return list(names), []
    by_name = snapshot.table.name_rows()
    present = [n for n in names if n in by_name]
    if not present:
        return [], []
    rows = np.fromiter((by_name[n] for n in present), dtype=np.int64, count=len(present))
    able = lowest[rows] < priority
    if able.all():
        return present, []
    if not able.any():
        return [], present
    flags = able.tolist()
    return ([n for n, ok in zip(present, flags) if ok], [n for n, ok in zip(present, flags) if not ok])
