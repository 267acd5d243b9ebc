"""What the allocator keeps per node key across allocations: each pool's version in the
allocated state (its "stamp"), followed through the state's changes instead of read anew, and,
per request shape, which pools are exhausted at which version.

A node that sees 2,000 network-attached pools would otherwise read 2,000 versions, and try
every device of every full pool, for each pod: the verdicts let the search skip the pools where
no device can be taken, and a pool is judged again only when its version changes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .types import AllocatedState

if TYPE_CHECKING:
    from .pool_records import NodePools

__all__ = ["PoolStamps", "PoolVerdicts", "Positions", "Stamp", "Versions", "positions_from"]

Versions = npt.NDArray[np.int64]
Positions = npt.NDArray[np.intp]
# Each pool's version (in the order of the node's pools; None when not wanted), and the newest
# of them.
Stamp = tuple[Versions | None, int]


class PoolVerdicts:
    """For one request shape over one node key's pools: per pool, the pool version at which the
    pool was found exhausted for the request or not, as ``version * 2 + exhausted`` (0: never
    judged). One number per pool, so that a reader never sees half of an update."""

    __slots__ = ("marks",)

    def __init__(self, size: int) -> None:
        self.marks: Versions = np.zeros(size, dtype=np.int64)

    def to_visit(self, stamp: Versions) -> Positions:
        """The positions of the pools not known to be exhausted at ``stamp``, in order."""
        marks = self.marks
        return np.flatnonzero(((marks & 1) == 0) | ((marks >> 1) != stamp))


def positions_from(positions: Positions, start: int) -> Iterator[int]:
    """``positions`` from the first one not below ``start``, as ints, converted a few at a time
    (the search usually stops at one of the first)."""
    at = int(np.searchsorted(positions, start))
    chunk = 8
    while at < len(positions):
        yield from positions[at : at + chunk].tolist()
        at += chunk
        chunk *= 4


class _Followed:
    __slots__ = ("state", "seen", "versions", "newest")

    def __init__(self, state: AllocatedState, seen: int, versions: Versions, newest: int) -> None:
        self.state = state
        self.seen = seen  # changes of ``state`` applied (counting dropped ones)
        self.versions = versions
        self.newest = newest


class PoolStamps:
    """Per node pools key: the stamp under the allocated state last asked about, caught up with
    that state's ``changes`` when asked again about the same state object."""

    def __init__(self) -> None:
        self._followed: dict[int, _Followed] = {}
        self._lock = threading.Lock()

    def stamp(self, node_pools: NodePools, state: AllocatedState, per_pool_from: int = 0) -> Stamp:
        """A copy of the versions (the caller keeps it while the state may move on); only the
        newest, read directly, for fewer than ``per_pool_from`` pools (a node's own pool or
        two: following them costs more than reading them)."""
        keys = node_pools.pool_keys
        if len(keys) < per_pool_from:
            return None, max(map(state.versions.get, keys, repeat(state.origin)), default=state.origin)
        with self._lock:
            followed = self._followed.get(node_pools.key)
            # Read the log before the versions: what it lists is in ``versions`` already (the
            # state writes the version, then logs it), so nothing listed later is missed.
            changes, dropped = state.changes, state.changes_dropped
            end = len(changes)
            if followed is not None and followed.state is state and followed.seen >= dropped:
                start = followed.seen - dropped
                if start <= end and end - start <= len(keys):
                    positions = node_pools.positions
                    versions = followed.versions
                    # In order, so re-reading entries already applied leaves the same result.
                    for key, version in changes[start:end]:
                        position = positions.get(key)
                        if position is not None:
                            versions[position] = version
                            if version > followed.newest:
                                followed.newest = version
                    if state.changes is changes and state.changes_dropped == dropped:
                        followed.seen = dropped + end
                        return versions.copy(), followed.newest
            versions = np.fromiter(map(state.versions.get, keys, repeat(state.origin)), dtype=np.int64, count=len(keys))
            # The newest version stands for all of them: versions are unique, increasing
            # numbers and only add_allocation / remove_allocation change a pool, so two states
            # with the same newest version over these pools hold the same devices of them.
            newest = int(versions.max()) if len(keys) else state.origin
            if len(self._followed) >= 1 << 16:
                self._followed.clear()
            if state.changes is changes and state.changes_dropped == dropped:  # not cut short meanwhile
                self._followed[node_pools.key] = _Followed(state, dropped + end, versions, newest)
            else:
                self._followed.pop(node_pools.key, None)
            return versions.copy(), newest
