"""OpportunisticBatching (upstream's ``framework/runtime/batch.go``, KEP-5598).

After a full cycle placed a signed pod on the best of several scored nodes, the other
scored nodes are kept, still in upstream's heap (``SortedScoredNodes``). The next pod,
if it comes in the very next scheduling cycle with the same signature, and the node
the previous pod went to now rejects it (each pod fills a node), cannot score those
nodes differently than its twin did: the next node of the heap is its *hint*, taken
without a walk or scoring if it passes the filters. The state expires after 500 ms of
the scheduler's clock (virtual in ``simulate``, real in ``run``).

One ``OpportunisticBatch`` per profile, as upstream's per framework.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import Callable

from ..framework.signing import PodSignature
from ..objects.pod import PodInfo
from .metrics import SchedulerMetrics
from .node_heap import SortedScoredNodes

__all__ = ["OpportunisticBatch", "LazySignature", "MAX_BATCH_AGE", "HINT_NONE", "HINT_USED", "HINT_NOT_USED"]

MAX_BATCH_AGE = 0.5  # seconds (upstream's maxBatchAge)

# How a cycle went with respect to its hint (the explain record's ``hint``).
HINT_NONE = "none"
HINT_USED = "used"
HINT_NOT_USED = "not-used"

# upstream's metrics labels
_NO_HINT, _HINT_USED, _HINT_NOT_USED = "no_hint", "hint_used", "hint_not_used"
FLUSH_POD_FAILED = "pod_failed"
FLUSH_POD_SKIPPED = "pod_skipped"
FLUSH_NODE_MISSING = "node_missing"
FLUSH_NODE_NOT_FULL = "node_not_full"
FLUSH_EMPTY_LIST = "empty_list"
FLUSH_EXPIRED = "expired"
FLUSH_POD_INCOMPATIBLE = "pod_incompatible"
FLUSH_POD_NOT_BATCHABLE = "pod_not_batchable"


class LazySignature:
    """A pod's signature, computed the first time something needs it: most cycles never
    do (one feasible node, no stored state), and signing costs a call per plugin."""

    __slots__ = ("_sign", "_pod", "_done", "_value")

    def __init__(self, sign: Callable[[PodInfo], PodSignature | None], pod: PodInfo) -> None:
        self._sign = sign
        self._pod = pod
        self._done = False
        self._value: PodSignature | None = None

    def __call__(self) -> PodSignature | None:
        if not self._done:
            self._value = self._sign(self._pod)
            self._done = True
        return self._value


@dataclass(slots=True)
class _BatchState:
    signature: PodSignature
    sorted_nodes: SortedScoredNodes
    created: float


class OpportunisticBatch:
    """The batch state of one profile and the last cycle it stored results for."""

    def __init__(self, profile: str, now: Callable[[], float], metrics: SchedulerMetrics | None = None) -> None:
        self.profile = profile
        self.now = now
        self.metrics = metrics
        self.state: _BatchState | None = None
        self.last_cycle = -1  # the scheduling cycle that last stored results
        self.last_chosen = ""  # and the node it chose
        self.batched_pods = 0

    def may_hint(self) -> bool:
        """Whether ``node_hint`` has anything to do: a stored state to hint from, or metrics to
        count the attempt in (without either, a cycle skips the call)."""
        return self.state is not None or self.metrics is not None

    def node_hint(self, signature: LazySignature, cycle: int, rejects_node: Callable[[str], bool | None]) -> str:
        """The hinted node's name, or "" (upstream's ``GetNodeHint``).

        ``rejects_node(name)`` runs the filters (without nominated pods) for this pod on a
        node: True when they reject it, False when it passes, None when the node is gone.
        """
        started = perf_counter() if self.metrics is not None else 0.0
        hint = ""
        if self._compatible(signature, cycle, rejects_node):
            assert self.state is not None
            hint = self.state.sorted_nodes.pop_name()
        if self.metrics is not None:
            if not hint:
                self.metrics.batch_attempt(self.profile, _NO_HINT)
            self.metrics.node_hint(bool(hint), self.profile, perf_counter() - started)
        return hint

    def store_schedule_results(self, signature: LazySignature, hinted: str, chosen: str,
                               others: SortedScoredNodes | None, cycle: int) -> None:
        """Remember where this cycle's pod went and, for a signed pod placed by scoring,
        the rest of the heap (upstream's ``StoreScheduleResults``)."""
        started = perf_counter() if self.metrics is not None else 0.0
        self.last_cycle, self.last_chosen = cycle, chosen
        if hinted and hinted == chosen:
            self.batched_pods += 1
            self._record(_HINT_USED, started)
            return
        if hinted:
            self._attempt(_HINT_NOT_USED)
        signed = signature() if others is not None and len(others) > 0 else None
        if signed is not None and others is not None:
            self.state = _BatchState(signed, others, self.now())
        else:
            self._flush(FLUSH_EMPTY_LIST if others is None or len(others) == 0 else FLUSH_POD_NOT_BATCHABLE)
            self.state = None
        self._record("", started)

    def _record(self, result: str, started: float) -> None:
        if self.metrics is not None:
            if result:
                self.metrics.batch_attempt(self.profile, result)
            self.metrics.store_schedule_results(self.profile, perf_counter() - started)

    def _attempt(self, result: str) -> None:
        if self.metrics is not None:
            self.metrics.batch_attempt(self.profile, result)

    def _flush(self, reason: str) -> None:
        if self.metrics is not None:
            self.metrics.batch_flushed(self.profile, reason)

    def _compatible(self, signature: LazySignature, cycle: int, rejects_node: Callable[[str], bool | None]) -> bool:
        state = self.state
        if state is None or len(state.sorted_nodes) == 0:
            return False
        if cycle != self.last_cycle + 1:  # a pod in between (another profile's, or one that failed)
            self._flush(FLUSH_POD_SKIPPED)
            return False
        signed = signature()
        if signed is None or signed != state.signature:
            self._flush(FLUSH_POD_INCOMPATIBLE)
            return False
        if self.now() > state.created + MAX_BATCH_AGE:
            self._flush(FLUSH_EXPIRED)
            return False
        # Only when the last pod's node cannot take this one is the next node of the heap
        # this pod's best: otherwise that node, rescored, might still be the best.
        rejected = rejects_node(self.last_chosen)
        if rejected is None:
            self._flush(FLUSH_NODE_MISSING)
            return False
        if not rejected:
            self._flush(FLUSH_NODE_NOT_FULL)
            return False
        return True
