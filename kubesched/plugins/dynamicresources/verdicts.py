"""Filter verdicts kept across pods: where claims of one shape can be allocated.

Whether a set of claims fits on a node depends on the claims' specs, the node, the
slices and classes, and the devices in use in the pools the node sees. Pods from one
template ask the same: after a pod takes devices on node N, only N's verdict can change
(when N's pools are node-local). So Filter's batch form keeps one verdict per table row
for each claim shape (``VerdictRows``, in the node table's node-derived cache: dropped when
a node changes) and asks the allocator only for rows whose pools changed since:

* ``DraManager.touched`` logs the nodes whose node-local pools gained or lost an
  allocation (stored, assumed or in flight), ``DraManager.freed`` which of the two: a
  node that did not fit stays so when devices are taken there, one that fit stays so when
  devices are freed there;
* ``DraManager.epoch`` moves on any other change (a slice, a class, an allocation in a pool
  that spans nodes): every verdict is stale then.

Errors and Unschedulable statuses with a message of their own are never kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ...structured.results import ClaimPicks

__all__ = ["VerdictRows", "UNKNOWN", "FITS", "DOES_NOT_FIT"]

UNKNOWN, DOES_NOT_FIT, FITS = -1, 0, 1


class VerdictRows:
    """Per table row: UNKNOWN, DOES_NOT_FIT or FITS, valid as of ``epoch`` and ``seen`` touches."""

    __slots__ = ("ok", "score", "picks", "epoch", "seen")

    def __init__(self, size: int, epoch: int, seen: int) -> None:
        self.ok: npt.NDArray[np.int8] = np.full(size, UNKNOWN, dtype=np.int8)
        # Score's raw value on rows that fit (-1: not computed), for claims with firstAvailable requests.
        self.score: npt.NDArray[np.int64] = np.full(size, -1, dtype=np.int64)
        # The allocator's picks on rows that fit, where kept (DRA-backed extended resources: Reserve
        # builds the chosen node's results from them instead of searching again).
        self.picks: dict[int, Sequence[ClaimPicks]] = {}
        self.epoch = epoch
        self.seen = seen

    def catch_up(self, epoch: int, touched: list[str], freed: list[bool], upto: int, rows: dict[str, int]) -> None:
        """Forget verdicts the changes since the last call may have changed. Whether claims fit
        is monotone in the devices in use (the allocator searches every choice): devices taken
        on a node cannot make claims fit that did not, devices freed cannot make claims that fit
        stop fitting. So a node where devices were taken keeps DOES_NOT_FIT, one where devices
        were freed keeps FITS; its score and picks are forgotten either way (other devices may
        be chosen now)."""
        if epoch != self.epoch or upto < self.seen:
            self.ok.fill(UNKNOWN)
            self.score.fill(-1)
            self.picks.clear()
            self.epoch = epoch
        else:
            ok = self.ok
            flags = freed[self.seen:upto]  # slices: a log cleared meanwhile reads short, never fails
            for k, name in enumerate(touched[self.seen:upto]):
                row = rows.get(name)
                if row is None or row >= len(ok):
                    continue
                if k >= len(flags) or ok[row] == (DOES_NOT_FIT if flags[k] else FITS):
                    ok[row] = UNKNOWN
                self.score[row] = -1
                self.picks.pop(row, None)
        self.seen = upto
