"""The node walk's arithmetic: which nodes a cycle visits, keeps, and how far it moves.

upstream's ``findNodesThatPassFilters`` visits the nodes from a rotating start index,
keeps the first ``numNodesToFind`` that pass, stops at the next passing node without
keeping it, and advances the start index by the nodes visited before that one (all of
them when none follows). The forms here compute that walk three ways: over a mask of
passing rows (``first_passing``), with per-node filters run window by window on the way
(``first_passing_windowed``), and node by node for a handful of nodes (``walk_few``).
``visited_rows`` names what the walk visited, which is what upstream's
``plugin_evaluation_total`` counts at Filter. Apart from ``algorithm.py`` because this is
index arithmetic, tested on its own.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..framework.cycle_state import CycleState
from ..framework.outcomes import FilterOutcome
from ..framework.runtime import Framework
from ..framework.status import Status
from ..framework.views import SnapshotView
from ..objects.pod import PodInfo

__all__ = ["first_passing", "first_passing_windowed", "walk_few", "few_rows", "rotated_prefix", "visited_rows"]


def first_passing(passed: np.ndarray, order: np.ndarray, identity: bool, start: int, want: int) -> tuple[np.ndarray, int]:
    """The positions in ``order`` of the first ``want`` passing nodes visited from ``start``
    (wrapping around), and how many positions the walk covers before it stops at the next
    passing node; more than ``want`` pass.

    Scans growing windows, so finding 500 of 5,000 nodes reads about 600 of them.
    """
    n = len(order)
    parts: list[np.ndarray] = []
    need = want + 1  # the walk stops at the node after the last one kept
    pos, width, limit = start, want + (want >> 2) + 32, n
    while True:
        end = min(pos + width, limit)
        window = passed[pos:end] if identity else passed[order[pos:end]]
        hits = window.nonzero()[0]
        if len(hits) >= need:
            parts.append(hits[:need] + pos)
            found = parts[0] if len(parts) == 1 else np.concatenate(parts)
            stop = int(found[-1])
            processed = stop - start if stop >= start else stop + n - start
            return found[:-1], processed
        if len(hits):
            parts.append(hits + pos)
            need -= len(hits)
        pos, width = end, width * 2
        if pos >= limit:  # wrap around: the rest lies before ``start``
            if limit == start:
                raise AssertionError("fewer passing nodes than counted")  # pragma: no cover
            pos, limit = 0, start


def first_passing_windowed(fwk: Framework, state: CycleState, pod: PodInfo, snapshot: SnapshotView,
                           outcome: FilterOutcome, candidates: np.ndarray, order: np.ndarray, start: int,
                           want: int) -> tuple[np.ndarray, int]:
    """Like ``first_passing``, running the per-node filters window by window on the way:
    the positions in ``order`` of the first ``want`` nodes that pass every filter, visited
    from ``start`` (wrapping), and how many positions the walk covers before the next
    passing node (all ``n`` when no node passes after the last one kept)."""
    n = len(order)
    parts: list[np.ndarray] = []
    found = visited = 0
    # Each window is sized from the pass rate seen so far, so per-node plugins are asked
    # about little more than the nodes upstream's walk would visit.
    pos, width, limit, wrapped = start, want + (want >> 4) + 8, n, False
    chosen: np.ndarray | None = None

    def offset(position: int) -> int:
        return position - start if position >= start else position + n - start

    while True:
        end = min(pos + width, limit)
        rows = order[pos:end]
        fwk.run_node_filters(state, pod, snapshot, outcome, rows[candidates[rows]], count=False)
        hits = outcome.passed[rows].nonzero()[0]
        if chosen is not None:
            if len(hits):  # the next passing node: the walk stops there
                return chosen, offset(int(hits[0]) + pos)
        elif found + len(hits) >= want:
            parts.append(hits[: want - found] + pos)
            chosen = np.concatenate(parts)
            if found + len(hits) > want:
                return chosen, offset(int(hits[want - found]) + pos)
            width = 16  # exactly as many as needed so far: look for one more
        else:
            if len(hits):
                parts.append(hits + pos)
                found += len(hits)
            visited += end - pos
            width = int((want - found) * visited / found * 1.1) + 16 if found else width * 2
        pos = end
        if pos >= limit:
            if wrapped or start == 0:
                if chosen is not None:  # no node passes after the last one needed
                    return chosen, n
                return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)), n
            pos, limit, wrapped = 0, start, True


def walk_few(status_of: Callable[[int], Status | None], order: list[int], start: int,
             want: int) -> tuple[list[int], list[tuple[int, Status]], int]:
    """The walk over a handful of nodes in plain Python, asking ``status_of(row)`` (every
    filter on one node) only for the nodes it visits: array calls cost more than the work
    there, and the nodes after the stop are never filtered, as upstream's sequential walk.

    Returns the rows kept, the rejected rows with their statuses (in visit order), and how
    far the start index moves: the position of the passing node after the last one kept,
    else every node.
    """
    n = len(order)
    visit = order[start:] + order[:start] if start else order
    kept: list[int] = []
    rejected: list[tuple[int, Status]] = []
    for i, row in enumerate(visit):
        status = status_of(row)
        if status is not None:
            rejected.append((row, status))
        elif len(kept) < want:
            kept.append(row)
        else:
            return kept, rejected, i
    return kept, rejected, n


_FEW_ROWS: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]] = {}


def few_rows(size: int, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` as a row array and as a mask over a table of ``size`` rows, both read only and
    shared: a small cluster's walk keeps the same few nodes pod after pod."""
    key = (size, tuple(rows))
    found = _FEW_ROWS.get(key)
    if found is None:
        array = np.array(rows, dtype=np.int64)
        mask = np.zeros(size, dtype=bool)
        mask[array] = True
        array.flags.writeable = False
        mask.flags.writeable = False
        if len(_FEW_ROWS) >= 256:
            _FEW_ROWS.clear()
        found = _FEW_ROWS[key] = (array, mask)
    return found


def rotated_prefix(order: np.ndarray, start: int, count: int) -> np.ndarray:
    """The first ``count`` entries of ``order`` rotated to begin at ``start`` (a view when it does not wrap)."""
    end = start + count
    if end <= len(order):
        return order[start:end]
    return np.concatenate((order[start:], order[: end - len(order)]))


def visited_rows(order: np.ndarray, start: int, processed: int) -> np.ndarray:
    """Every row the walk ran the filters on: the ``processed`` nodes from ``start`` and, when
    it stopped early, the passing node it stopped at (filtered, not kept)."""
    n = len(order)
    return rotated_prefix(order, start, processed + 1 if processed < n else n)
