"""The plugin contract: one protocol per extension point, as upstream's ``framework`` package.

A plugin is any object with a ``name`` and the methods of the extension points it
implements. Filter and Score come in two forms:

* per node, as upstream writes them: ``filter(state, pod, node_info)`` and
  ``score(state, pod, node_info)``; easy to write;
* batch, over the node table: ``filter_nodes(state, pod, snapshot)`` returns a
  ``NodeVerdicts`` for every table row, ``score_nodes(state, pod, snapshot, rows)``
  an array of raw scores for ``rows``; fast.

A plugin may offer either form (or both, which must agree); the framework prefers
the batch form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, runtime_checkable

import numpy as np

from .cycle_state import CycleState
from .status import Status

if TYPE_CHECKING:  # pragma: no cover
    from ..cache.cache import Cache, Snapshot
    from ..objects.nodeinfo import NodeInfo
    from ..objects.pod import PodInfo
    from ..queue.types import QueuedPodInfo

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NodeVerdicts",
    "PreFilterResult",
    "PostFilterResult",
    "Handle",
    "Plugin",
    "PreEnqueuePlugin",
    "QueueSortPlugin",
    "PreFilterPlugin",
    "FilterPlugin",
    "BatchFilterPlugin",
    "PostFilterPlugin",
    "PreScorePlugin",
    "ScorePlugin",
    "BatchScorePlugin",
    "ReservePlugin",
    "PermitPlugin",
    "PreBindPlugin",
    "BindPlugin",
    "PostBindPlugin",
    "EnqueueExtensions",
]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


_ALL_PASS: dict[int, np.ndarray] = {}


@dataclass(slots=True)
class NodeVerdicts:
    """One batch filter's answer for every row of the node table.

    ``codes[row]`` is 0 when the node passes, ``k`` when it fails with
    ``statuses[k - 1]``. Rows the runner did not ask about may hold anything.
    """

    codes: np.ndarray
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
    def from_mask(cls, passed: np.ndarray, status: Status) -> "NodeVerdicts":
        """Every row outside ``passed`` fails with ``status``."""
        return cls((~passed).astype(np.int32), [status])


@dataclass(slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrowed the search to; ``None`` means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult":
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class PostFilterResult:
    nominated_node_name: str = ""


class Handle(Protocol):
    """What the framework hands each plugin at construction."""

    @property
    def cache(self) -> "Cache": ...

    def snapshot(self) -> "Snapshot": ...

    def now(self) -> float: ...

    @property
    def binder(self) -> Callable[["PodInfo", str], None] | None: ...

    @property
    def informers(self) -> Any: ...


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    name: str

    def pre_enqueue(self, pod: "PodInfo") -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    name: str

    def less(self, a: "QueuedPodInfo", b: "QueuedPodInfo") -> bool: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    name: str

    def pre_filter(
        self, state: CycleState, pod: "PodInfo", snapshot: "Snapshot"
    ) -> tuple[PreFilterResult | None, Status | None]: ...


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, state: CycleState, pod: "PodInfo", node: "NodeInfo") -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(Protocol):
    name: str

    def filter_nodes(self, state: CycleState, pod: "PodInfo", snapshot: "Snapshot") -> NodeVerdicts: ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    name: str

    def post_filter(
        self, state: CycleState, pod: "PodInfo", filtered: Any
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    name: str

    def pre_score(self, state: CycleState, pod: "PodInfo", snapshot: "Snapshot", rows: np.ndarray) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    """Per-node score; ``normalize_score`` (optional) rescales an int64 array in place."""

    name: str

    def score(self, state: CycleState, pod: "PodInfo", node: "NodeInfo") -> int: ...


@runtime_checkable
class BatchScorePlugin(Protocol):
    name: str

    def score_nodes(self, state: CycleState, pod: "PodInfo", snapshot: "Snapshot", rows: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class ReservePlugin(Protocol):
    name: str

    def reserve(self, state: CycleState, pod: "PodInfo", node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: "PodInfo", node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    name: str

    def permit(self, state: CycleState, pod: "PodInfo", node_name: str) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Protocol):
    name: str

    def pre_bind(self, state: CycleState, pod: "PodInfo", node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Protocol):
    name: str

    def bind(self, state: CycleState, pod: "PodInfo", node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Protocol):
    name: str

    def post_bind(self, state: CycleState, pod: "PodInfo", node_name: str) -> None: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """Which cluster events may make a pod this plugin rejected schedulable.

    Returns ``(ClusterEvent, hint)`` pairs; ``hint(pod, old, new)`` answers
    ``QUEUE`` or ``SKIP`` (None means always queue), as upstream's queueing hints.
    """

    def events_to_register(self) -> list[tuple[Any, Callable | None]]: ...
