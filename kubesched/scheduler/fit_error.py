"""Why a pod fits no node: ``Diagnosis`` and ``FitError`` with upstream's exact message."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..framework.runtime import FilterOutcome
from ..framework.status import Code, Status

__all__ = ["Diagnosis", "FitError", "NodeToStatus", "NoNodesAvailableError", "NO_NODE_AVAILABLE_MSG", "PodGroupUnschedulableError"]

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_ROWS.flags.writeable = False


@dataclass(slots=True)
class Diagnosis:
    """Statuses of the nodes a cycle looked at, and of the rest (``absent_status``)."""

    outcome: FilterOutcome | None = None
    evaluated: np.ndarray = field(default_factory=lambda: _NO_ROWS)  # rows, in visit order (replaced, never written)
    absent_status: Status | None = None
    candidates: np.ndarray | None = None  # rows PreFilter allowed, when it narrowed the node set
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    # Nodes an extender's Filter rejected (upstream sets them in NodeToStatus, no plugin
    # name): by node name, and the table rows of those that exist (they replace a plugin's status).
    extender_statuses: dict[str, Status] = field(default_factory=dict)
    extender_rows: list[int] = field(default_factory=list)

    def set_extender_status(self, name: str, row: int | None, status: Status) -> None:
        """``NodeToStatus.Set`` for a node an extender rejected; ``row`` is None for a name no node has."""
        if name not in self.extender_statuses and row is not None:
            self.extender_rows.append(row)
        self.extender_statuses[name] = status

    def _plugin_failed_rows(self) -> np.ndarray:
        """``failed_rows`` less the nodes whose status an extender replaced."""
        failed = self.failed_rows()
        if self.extender_rows and len(failed):
            failed = failed[~np.isin(failed, self.extender_rows)]
        return failed

    def num_statuses(self) -> int:
        """``NodeToStatus.Len()``: nodes with a status of their own."""
        return len(self._plugin_failed_rows()) + len(self.extender_statuses)

    def failed_rows(self) -> np.ndarray:
        """Evaluated rows that some filter rejected, in visit order."""
        if self.outcome is None or not len(self.evaluated):
            return np.zeros(0, dtype=np.int64)
        rows: np.ndarray = self.evaluated[self.outcome.status_index[self.evaluated] >= 0]
        return rows

    def node_statuses(self, names: list[str]) -> dict[str, Status]:
        """Per node name, the status that rejected it (absent nodes not included)."""
        out: dict[str, Status] = {}
        if self.outcome is None:
            out.update(self.extender_statuses)
            return out
        for row in self.failed_rows().tolist():
            out[names[row]] = self.outcome.statuses[self.outcome.status_index[row]]
        out.update(self.extender_statuses)
        return out

    def record_plugins(self) -> None:
        """Fill the rejecting plugin sets from the statuses (queueing hints use them)."""
        statuses: list[Status] = []
        if self.outcome is not None:
            used = np.unique(self.outcome.status_index[self.failed_rows()])
            statuses.extend(self.outcome.statuses[i] for i in used.tolist())
        if self.absent_status is not None:
            statuses.append(self.absent_status)
        for status in statuses:
            if not status.plugin:
                continue
            if status.code == Code.PENDING:
                self.pending_plugins.add(status.plugin)
            else:
                self.unschedulable_plugins.add(status.plugin)

    def reason_histogram(self, num_all_nodes: int) -> Counter[str]:
        reasons: Counter[str] = Counter()
        failed = self._plugin_failed_rows()
        if self.outcome is not None and len(failed):
            idx, counts = np.unique(self.outcome.status_index[failed], return_counts=True)
            for i, count in zip(idx.tolist(), counts.tolist()):
                for reason in self.outcome.statuses[i].reasons:
                    reasons[reason] += count
        for status in self.extender_statuses.values():
            for reason in status.reasons:
                reasons[reason] += 1
        absent = num_all_nodes - len(failed) - len(self.extender_statuses)
        if absent > 0 and self.absent_status is not None:
            for reason in self.absent_status.reasons:
                reasons[reason] += absent
        return reasons


class NodeToStatus:
    """A diagnosis read as upstream's ``NodeToStatusReader`` (what PostFilter plugins get):
    each rejected node's status, and for every other node the status of absent nodes
    (UnschedulableAndUnresolvable unless PreFilter said otherwise).

    Built from the diagnosis's arrays when first asked, never as a dict by node name:
    on thousands of nodes a rejected pod's PostFilter should cost array operations.
    ``rows_with(code)`` is the same answer as ``node_names_with`` as table rows, for
    readers that work on rows (preemption does)."""

    __slots__ = ("_diagnosis", "_names", "_order", "_absent", "_ids", "_codes", "_rows")

    def __init__(self, diagnosis: Diagnosis, names: Sequence[str], order: Sequence[int] | np.ndarray) -> None:
        self._diagnosis = diagnosis
        self._names = names  # by row
        self._order = np.asarray(order, dtype=np.int64)  # rows in snapshot order
        self._absent = diagnosis.absent_status or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        self._ids: np.ndarray | None = None  # per row: index into the outcome's statuses, -1: absent
        self._codes: np.ndarray | None = None  # per row: the code of its status
        self._rows: dict[str, int] | None = None  # node name -> row, built when first asked

    def _status_ids(self) -> np.ndarray:
        if self._ids is None:
            ids = np.full(len(self._names), -1, dtype=np.int64)
            outcome = self._diagnosis.outcome
            if outcome is not None:
                failed = self._diagnosis.failed_rows()
                ids[failed] = outcome.status_index[failed]
            self._ids = ids
        return self._ids

    def status_of(self, node_name: str) -> Status:
        diagnosis = self._diagnosis
        found = diagnosis.extender_statuses.get(node_name)
        if found is not None:
            return found
        outcome = diagnosis.outcome
        if outcome is None:
            return self._absent
        if self._rows is None:
            self._rows = {name: row for row, name in enumerate(self._names) if name}
        row = self._rows.get(node_name)
        if row is None:
            return self._absent
        i = int(self._status_ids()[row])
        return outcome.statuses[i] if i >= 0 else self._absent

    def _row_codes(self) -> np.ndarray:
        if self._codes is None:
            ids = self._status_ids()
            outcome = self._diagnosis.outcome
            statuses = outcome.statuses if outcome is not None else []
            by_id = np.array([int(s.code) for s in statuses] + [int(self._absent.code)], dtype=np.int64)
            codes = by_id[ids]  # -1 picks the last entry: the absent status's code
            if self._diagnosis.extender_statuses:
                if self._rows is None:
                    self._rows = {name: row for row, name in enumerate(self._names) if name}
                rows = self._rows
                for name, status in self._diagnosis.extender_statuses.items():
                    row = rows.get(name)
                    if row is not None:
                        codes[row] = int(status.code)
            self._codes = codes
        return self._codes

    def rows_with(self, code: Code) -> np.ndarray:
        """Rows of the nodes whose status has ``code``, absent ones included when the
        absent status has it, in snapshot order."""
        order = self._order
        selected: np.ndarray = order[self._row_codes()[order] == int(code)]
        return selected

    def node_names_with(self, code: Code) -> list[str]:
        """``NodesForStatusCode``: nodes with a status of that code, absent ones included
        when the absent status has it, in snapshot order."""
        names = self._names
        return [names[row] for row in self.rows_with(code).tolist()]


class PodGroupUnschedulableError(Exception):
    """A pod failed because its pod group did (upstream's ``errPodGroupUnschedulable``): no
    plugin rejected the pod itself, so it waits out a backoff rather than an event."""


class NoNodesAvailableError(Exception):
    """The cluster has no nodes at all."""

    def __init__(self) -> None:
        super().__init__("no nodes available to schedule pods")


class FitError(Exception):
    """No node fits the pod; ``str()`` is upstream's ``FitError.Error()``."""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__(self.message())

    def __str__(self) -> str:
        # Computed when asked: PostFilter appends its message after the error is made.
        return self.message()

    def message(self) -> str:
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            histogram = sorted(f"{count} {reason}" for reason, count in d.reason_histogram(self.num_all_nodes).items())
            if histogram:
                msg += f" {', '.join(histogram)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"  # upstream appends it as is: it ends with its own "."
        return msg
