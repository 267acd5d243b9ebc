"""The plugin contract: one protocol per extension point, as upstream's ``framework/interface.go``.

A plugin is an object with a ``name`` and the methods of the extension points it
implements; the config enables it at those points. Filter and Score come in two forms:

* per node, as upstream writes them: ``filter(state, pod, node_info)`` and
  ``score(state, pod, node_info)``; easy to write, one call per node asked;
* batch, over the node table: ``filter_nodes(state, pod, snapshot, candidates)``
  answers a ``NodeVerdicts`` for every table row, ``score_nodes(state, pod, snapshot,
  rows)`` an array of raw scores for ``rows``; fast.

A plugin may offer either form (or both, which must agree: ``kubesched.testing``
checks it); the framework calls the batch form when there is one.

Optional parts are protocols of their own, found with ``isinstance``: a Score plugin
that rescales its scores is also a ``ScoreExtensions``; a PreFilter plugin whose state
preemption must update is also a ``PreFilterExtensions``; a plugin that rejects pods
declares the events that may help them as an ``EnqueueExtensions``.

Returning ``None`` from a method that returns ``Status | None`` means success, as a
nil ``*Status`` does upstream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from .cycle_state import CycleState
from .events import ClusterEventWithHint
from .queued_pod import QueuedPodInfo
from .status import Code, Status
from .views import BoolArray, CodeArray, IntArray, RowArray, SnapshotView

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NodeVerdicts",
    "NodeToStatusReader",
    "PreFilterResult",
    "PostFilterResult",
    "Plugin",
    "PreEnqueuePlugin",
    "QueueSortPlugin",
    "QueueSortKey",
    "PreFilterPlugin",
    "PreFilterExtensions",
    "FilterPlugin",
    "BatchFilterPlugin",
    "PostFilterPlugin",
    "PreScorePlugin",
    "ScorePlugin",
    "BatchScorePlugin",
    "ScoreExtensions",
    "ReservePlugin",
    "PermitPlugin",
    "PreBindPlugin",
    "BindPlugin",
    "PostBindPlugin",
    "EnqueueExtensions",
    "BindingExplainer",
]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


_ALL_PASS: dict[int, CodeArray] = {}  # size -> shared read-only zeros


@dataclass(slots=True)
class NodeVerdicts:
    """One batch filter's answer for every row of the node table.

    ``codes[row]`` is 0 when the node passes, ``k`` when it fails with
    ``statuses[k - 1]``. Rows the runner did not ask about may hold anything.
    """

    codes: CodeArray
    statuses: list[Status]

    @classmethod
    def passing(cls, size: int) -> "NodeVerdicts":
        return cls(np.zeros(size, dtype=np.int32), [])

    @classmethod
    def all_pass(cls, size: int) -> "NodeVerdicts":
        """Every row passes, with no allocation: ``codes`` is a shared read-only array.

        The runner skips a verdict without statuses at once, so this is the cheap
        answer of a filter that finds nothing to reject.
        """
        codes = _ALL_PASS.get(size)
        if codes is None:
            if len(_ALL_PASS) > 64:
                _ALL_PASS.clear()
            codes = np.zeros(size, dtype=np.int32)
            codes.flags.writeable = False
            _ALL_PASS[size] = codes
        return cls(codes, [])

    @classmethod
    def from_mask(cls, passed: BoolArray, status: Status) -> "NodeVerdicts":
        """Every row outside ``passed`` fails with ``status``."""
        return cls((~passed).astype(np.int32), [status])

    @classmethod
    def per_row(cls, size: int, rows: BoolArray, infos: Sequence[NodeInfo | None],
                judge: Callable[[NodeInfo], Status | None]) -> "NodeVerdicts":
        """``judge`` asked about each node in ``rows`` (the others pass); equal statuses
        (code and reasons) share one entry, so the runner groups their rejections once."""
        codes = np.zeros(size, dtype=np.int32)
        statuses: list[Status] = []
        index: dict[tuple[Code, tuple[str, ...]], int] = {}
        for row in np.flatnonzero(rows).tolist():
            info = infos[row]
            if info is None:
                continue
            status = judge(info)
            if status is not None:
                key = (status.code, status.reasons)
                if key not in index:
                    statuses.append(status)
                    index[key] = len(statuses)
                codes[row] = index[key]
        return cls(codes, statuses)


@dataclass(slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrowed the search to; ``None`` means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult":
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class PostFilterResult:
    nominated_node_name: str = ""


class NodeToStatusReader(Protocol):
    """Why each node was filtered out (upstream's ``NodeToStatusReader``), for PostFilter."""

    def status_of(self, node_name: str) -> Status:
        """The node's rejecting status; nodes not evaluated get the status of absent nodes
        (UnschedulableAndUnresolvable when PreFilter ruled them out)."""
        ...

    def node_names_with(self, code: Code) -> list[str]:
        """Nodes whose status has ``code``, in snapshot order."""
        ...


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a name: the one the config enables it by."""

    @property
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Runs before a pod enters the active queue; a non-success keeps it gated."""

    def pre_enqueue(self, pod: PodInfo) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Orders the active queue; exactly one per profile, the same in every profile."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class QueueSortKey(Protocol):
    """An optional fast path of a QueueSort plugin: a key that orders pods exactly as
    ``less`` does (``a`` before ``b`` iff ``sort_key(a) < sort_key(b)``), so the queue can
    use a heap of keys instead of calling ``less`` per comparison."""

    def sort_key(self, queued: QueuedPodInfo) -> tuple[int | float | str, ...]: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Once per cycle before filtering: compute state, narrow the nodes, or reject the pod.

    Return Skip to have the framework skip this plugin's Filter for this pod.
    """

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView
    ) -> tuple[PreFilterResult | None, Status | None]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Keeps PreFilter state right when preemption's dry run adds or removes a pod on a node."""

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Per node: can the pod run here? A node stops at its first rejecting plugin."""

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    """Every row at once. ``candidates`` marks the rows being asked about (live, not yet
    rejected); answers for other rows are ignored, so computing all rows is fine."""

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    """Runs when no node fits (preemption): may nominate a node for the pod."""

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    """Once per cycle before scoring, with the feasible rows; Skip skips this plugin's Score."""

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Per node: an integer score (0..100 after NormalizeScore), weighted by the config."""

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int: ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    """Raw scores for ``rows`` (feasible nodes), in the order of ``rows``."""

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """Rescales one plugin's raw scores of all feasible nodes to 0..100 (NormalizeScore)."""

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    """Reserve claims what the pod needs on the chosen node before binding; Unreserve
    undoes it when a later step fails. Unreserve must be idempotent and must not fail."""

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Approve, reject, or hold (Wait, with a timeout in seconds) the pod before binding."""

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class PreBindPreFlight(Protocol):
    """Optional beside ``pre_bind`` (upstream's ``PreBindPreFlight``): a cheap check, doing no
    work, of whether the plugin has anything to do for this pod. Skip means its PreBind is
    skipped; a plugin without the method always runs. When every PreBind plugin skips, the
    binding cycle is the Bind plugins' alone (in ``run``, DefaultBinder's API call straight
    from the event loop)."""

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Binds the pod; Skip passes it to the next bind plugin."""

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """Which cluster events may make a pod this plugin rejected schedulable, each with an
    optional queueing hint that decides for one pod and one change."""

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


@runtime_checkable
class BindingExplainer(Protocol):
    """Optional: what the plugin's Reserve..PreBind did for a bound pod, for ``--explain`` and
    the reports (a JSON-ready dict merged into the attempt's ``binding`` record), e.g.
    DynamicResources' ``allocations``: the devices each claim of the pod got."""

    def explain_binding(self, state: CycleState, pod: PodInfo, node_name: str) -> dict[str, object] | None: ...
