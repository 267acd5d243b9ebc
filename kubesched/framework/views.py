"""Read-only views plugins get of the cluster: the node table, the snapshot, pod observers.

Batch plugins read the columnar node table through ``NodeTableView``: one row per
node, numpy columns by resource name, label value ids, selector masks, row <-> node
name. The scheduler's table implements it; plugins never see the mutable cache. Every
array handed out is owned by the table and valid until the table next changes: read
it, index it, copy it if you must keep it, never write to it.

Rows are stable for a node's lifetime; a removed node's row is reused later. Rows at
or beyond ``size`` do not exist; ``alive`` tells live rows from freed ones. The
snapshot order (``order``) is upstream's: zones interleaved round-robin.
"""

from __future__ import annotations

from typing import Callable, Collection, Hashable, Iterable, Mapping, Protocol, Sequence, TypeVar

import numpy as np
import numpy.typing as npt

from ..objects.node import Node
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from ..objects.selectors import NodeSelector, NodeSelectorTerm, Requirement
from ..objects.taints import Taint

__all__ = [
    "BoolArray",
    "IntArray",
    "RowArray",
    "CodeArray",
    "FloatArray",
    "NodeTableView",
    "PodGroupCycleLists",
    "SnapshotView",
    "PodObserver",
    "CPU",
    "MEMORY",
    "EPHEMERAL_STORAGE",
    "PODS",
]

BoolArray = npt.NDArray[np.bool_]
"""One bool per table row (a mask)."""
IntArray = npt.NDArray[np.int64]
"""int64 values: one per table row, or one per row of a ``RowArray``."""
RowArray = npt.NDArray[np.int64]
"""Table rows (indexes), e.g. the rows a Score plugin is asked about."""
CodeArray = npt.NDArray[np.int32]
"""int32 per table row: a batch filter's verdict codes (see ``NodeVerdicts``)."""
FloatArray = npt.NDArray[np.float64]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

V = TypeVar("V")


class NodeTableView(Protocol):
    """The node table as plugins read it. Quantities are integers: cpu in millicores,
    memory and storage in bytes, extended resources in their own units."""

    # -- rows -----------------------------------------------------------------
    @property
    def size(self) -> int:
        """Rows in use or freed; every column has at least this many entries."""
        ...

    @property
    def num_nodes(self) -> int:
        """Live nodes."""
        ...

    @property
    def alive(self) -> BoolArray:
        """Live rows (freed rows of removed nodes are False)."""
        ...

    @property
    def order(self) -> RowArray:
        """Live rows in snapshot order (upstream's zone-interleaved node tree)."""
        ...

    @property
    def order_is_identity(self) -> bool:
        """Whether ``order`` is every row in row order (no freed rows, one zone or none)."""
        ...

    @property
    def names(self) -> Sequence[str]:
        """Node name by row ("" for a freed row)."""
        ...

    @property
    def nodes(self) -> Sequence[Node | None]:
        """The node object by row (None for a freed row)."""
        ...

    def name_rows(self) -> Mapping[str, int]:
        """Row by node name."""
        ...

    def rows_of(self, names: Iterable[str]) -> list[int]:
        """The rows of the named nodes that exist, in the order given."""
        ...

    # -- resources --------------------------------------------------------------
    @property
    def alloc_cpu(self) -> IntArray: ...

    @property
    def alloc_mem(self) -> IntArray: ...

    @property
    def alloc_eph(self) -> IntArray: ...

    @property
    def alloc_pods(self) -> IntArray: ...

    @property
    def req_cpu(self) -> IntArray: ...

    @property
    def req_mem(self) -> IntArray: ...

    @property
    def req_eph(self) -> IntArray: ...

    @property
    def nz_cpu(self) -> IntArray:
        """Requested cpu counting upstream's non-zero defaults (100m for a container without requests)."""
        ...

    @property
    def nz_mem(self) -> IntArray:
        """Requested memory counting upstream's non-zero defaults (200 MiB)."""
        ...

    @property
    def pod_count(self) -> IntArray:
        """Pods on each node, assumed ones included."""
        ...

    @property
    def unschedulable(self) -> BoolArray:
        """``spec.unschedulable`` by row."""
        ...

    def allocatable(self, resource: str) -> IntArray:
        """Allocatable of any resource by name (``cpu``, ``memory``, ``pods``, ``nvidia.com/gpu``, ...)."""
        ...

    def requested(self, resource: str) -> IntArray:
        """What the pods on each node request of ``resource``."""
        ...

    def scalar_columns(self, name: str) -> tuple[IntArray, IntArray]:
        """Allocatable and requested of an extended resource (zeros if no node has it)."""
        ...

    @property
    def ports(self) -> Mapping[tuple[str, int], Mapping[int, Mapping[str, int]]]:
        """Host ports in use: (protocol, port) -> row -> host IP -> pods using it."""
        ...

    # -- labels, taints, images --------------------------------------------------
    def label_column(self, key: str) -> tuple[npt.NDArray[np.int32], Mapping[str, int]]:
        """Per row, the id of the node's value of label ``key`` (-1 where absent), and value -> id."""
        ...

    def label_numbers(self, key: str) -> tuple[IntArray, BoolArray]:
        """Per row, label ``key`` parsed as an integer, and where it parses."""
        ...

    def requirement_mask(self, req: Requirement) -> BoolArray: ...

    def term_mask(self, term: NodeSelectorTerm) -> BoolArray: ...

    def selector_mask(self, selector: NodeSelector) -> BoolArray: ...

    def taint_sets(self) -> tuple[npt.NDArray[np.int32], Sequence[tuple[Taint, ...]]]:
        """Per row, the id of the node's distinct taint list, and the lists (nodes share few)."""
        ...

    def image_rows(self, image: str) -> tuple[RowArray, IntArray]:
        """Rows that hold ``image`` and its size in bytes on each of them."""
        ...

    # -- caching across cycles ---------------------------------------------------
    @property
    def node_generation(self) -> int:
        """Bumps on every node add, update or removal."""
        ...

    @property
    def pod_generation(self) -> int:
        """Bumps whenever a pod is placed on or removed from a row."""
        ...

    def node_derived(self, key: Hashable, compute: Callable[[], V]) -> V:
        """``compute()``, cached under ``key`` until the next node change.

        For answers that depend only on node objects (labels, taints, images, names,
        allocatable) and on what ``key`` holds, never on the pods placed. Put your
        plugin's name and the pod fields you read into ``key``.
        """
        ...

    def row_cached(
        self,
        key: Hashable,
        compute: Callable[[RowArray], IntArray],
        compute_row: Callable[[int], int] | None = None,
        eager: bool = False,
    ) -> IntArray | None:
        """Per-row values kept current across cycles by recomputing only rows whose pods
        changed; None the first time a key is asked (compute the rows you need then)."""
        ...


class SnapshotView(Protocol):
    """What one scheduling cycle reads (upstream's ``SharedLister``): nodes with their pods,
    the node table, namespaces. Stable for the duration of one cycle."""

    @property
    def table(self) -> NodeTableView: ...

    @property
    def node_infos(self) -> Sequence[NodeInfo | None]:
        """Node infos by table row (None for a freed row)."""
        ...

    @property
    def num_nodes(self) -> int: ...

    def get(self, name: str) -> NodeInfo | None: ...

    def list(self) -> list[NodeInfo]:
        """Node infos in snapshot order."""
        ...

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """A namespace's labels; one not seen has only ``kubernetes.io/metadata.name``."""
        ...

    @property
    def namespace_generation(self) -> int:
        """Bumps whenever a namespace's labels change (for indexes that cache them)."""
        ...

    def pods(self) -> Iterable[PodInfo]:
        """Every pod placed on a node (bound or assumed)."""
        ...

    def pod_group_cycle_lists(self) -> "PodGroupCycleLists | None":
        """During a pod-group cycle, what upstream's per-cycle snapshot lists leave out of the
        pods the cycle assumed (``PodGroupCycleLists``); None outside one."""
        ...


class PodGroupCycleLists(Protocol):
    """The pods a pod-group cycle assumed as upstream's per-cycle snapshot lists them.

    Upstream tries a pod group's members on one snapshot, assuming each member that fits in
    it (``Snapshot.AssumePod``): the member joins its node's pods, but the snapshot's lists
    of nodes holding pods with pod affinity (``HavePodsWithAffinityList``) or with required
    pod anti-affinity (``HavePodsWithRequiredAntiAffinityList``), and its set of claims in
    use (``IsPVCUsedByPods``), stay as the cycle found them. A plugin that walks those lists
    misses a member on a node that was not listed already; kubesched's indexes see every
    placed pod, so plugins subtract these to decide as upstream does (InterPodAffinity's
    existing pods' terms, VolumeRestrictions' ReadWriteOncePod check).
    """

    def unlisted_affinity_pods(self) -> Collection[tuple[PodInfo, NodeInfo]]:
        """Pods declaring pod affinity or anti-affinity (even with no term), each with its
        node, on nodes that held no such pod when the cycle began."""
        ...

    def unlisted_required_anti_affinity_pods(self) -> Collection[tuple[PodInfo, NodeInfo]]:
        """Pods with required pod anti-affinity terms, each with its node, on nodes that held
        no such pod when the cycle began."""
        ...

    def claim_users_added(self, namespace: str, claim: str) -> int:
        """How many more placed pods use this PersistentVolumeClaim than when the cycle
        began (negative when fewer): the cycle's set of claims in use is the one it began with."""
        ...


class PodObserver(Protocol):
    """An incremental index over pods placed on nodes (topology pair counts and the like).

    Registered with ``Handle.add_pod_observer``: first told of every pod already placed,
    then of each placement and removal as the cache applies it (assumed pods included),
    so a cycle reads counts instead of walking pods. ``nodes_changed`` follows any node
    add, update or removal. Calls come between cycles, never during one, but for a
    pod-group cycle's own members, assumed and forgotten as it tries them (what upstream's
    snapshot does not list of them: ``PodGroupCycleLists``). The binding of
    an assumed pod that changes none of its fields (only the raw document, which the
    cache drops) is the same placement and is not reported.
    """

    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None: ...

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None: ...

    def nodes_changed(self) -> None: ...
