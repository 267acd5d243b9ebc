"""How many binds (and event writes, and status patches) may be under way at once, found
from how fast they are answered.

Upstream binds each pod in its own goroutine, over client-go's HTTP/2 connection (100
streams each on kube-apiserver, more connections past that): nothing but the client's
QPS budget bounds the binds in flight, so a bind's round trip costs throughput only
when the API server itself is slow. Here binds go over HTTP/1.1, one request per
connection at a time, and each new TLS connection costs about a millisecond of CPU: a
fixed 32 is cheap next to a nearby server but caps binding at 32 per round trip when the
server is far away (issue 26: 119-128 pods/s through 250 ms of added latency).

The binding tasks, the event writers and the status patchers each have a
``ConcurrencyLimit`` (their requests, like binds, come one per pod). It starts at
``least`` and learns by trying, round by round (a round: as many answers as the limit and
at least ``ROUND``, so that a moment's stall of the machine does not decide alone,
counting only requests sent since the limit last changed, and not the first round after
a change, while the server's queue settles at its new length).
While binds wait for a turn it doubles the limit and compares the next round's mean
answer time with the last round's:

* about the same (at most ``GROW`` times): the time was the network's, not the server's,
  and twice as many at once bind twice as many per round trip; the new limit stays, and
  the next round may double it again, up to ``most``;
* longer in proportion: the server was queueing them, and more at once would only lengthen
  its queue and hold connections for nothing; the limit goes back and is not tried higher
  for ``HOLD`` seconds.

A round whose mean is more than ``SHRINK`` times the one its limit was accepted at (the
server got slower) halves the limit, down to ``least``. Near the server the limit stays at
``least`` and a try costs one round with more binds in its queue every ``HOLD`` seconds
(the connections it opened are kept alive and reused); through 200 ms it reaches ``most``
in a few round trips.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

__all__ = ["ConcurrencyLimit", "GROW", "HOLD", "LEAST", "MOST", "ROUND", "SHRINK"]

log = logging.getLogger("kubesched.concurrency")

LEAST = 32  # a nearby server is served best by this many (the pool's old fixed size)
MOST = 256  # 256 binds per round trip: over 1,000 pods/s through 200 ms
GROW = 1.5
SHRINK = 3.0
HOLD = 30.0  # seconds before a limit found too high is tried again
ROUND = 64  # answers a round takes at least


@dataclass(slots=True)
class ConcurrencyLimit:
    least: int = LEAST
    most: int = MOST
    what: str = "binds"  # for the log line when the limit changes
    limit: int = field(init=False)
    _changed: float = field(default=float("-inf"), init=False)  # when the limit last changed
    _hold_until: float = field(default=float("-inf"), init=False)
    _accepted_mean: float | None = field(default=None, init=False)  # the mean the limit was accepted at
    _trying_from: float | None = field(default=None, init=False)  # while trying a doubled limit: the mean before
    _answers: int = field(default=0, init=False)
    _seconds: float = field(default=0.0, init=False)
    _waited: bool = field(default=False, init=False)
    _settling: bool = field(default=True, init=False)  # the round under way is the one after a change

    def __post_init__(self) -> None:
        self.least = max(1, self.least)
        self.most = max(self.least, self.most)
        self.limit = self.least

    def answered(self, seconds: float, waiting: bool, now: float) -> None:
        """One bind answered after ``seconds``; ``waiting``: binds were queued for a turn."""
        if now - seconds < self._changed:
            return  # sent under the previous limit: says nothing of this one
        self._answers += 1
        self._seconds += seconds
        self._waited = self._waited or waiting
        if self._answers < self.limit or self._answers < ROUND:
            return
        mean, waited = self._seconds / self._answers, self._waited
        self._answers, self._seconds, self._waited = 0, 0.0, False
        if self._settling:
            self._settling = False
            return
        before = self._trying_from
        if before is not None:  # the round of a doubled limit
            self._trying_from = None
            if mean > GROW * before:  # the server's queue, not the network: back, and stay a while
                self._set(self.limit // 2, now, before)
                self._hold_until = now + HOLD
            else:
                self._accepted_mean = mean
                log.info("%s under way at once: %d (answers in %.0f ms, as at %d)", self.what, self.limit,
                         mean * 1000, self.limit // 2)
            return
        if self._accepted_mean is None:
            self._accepted_mean = mean
        if self.limit > self.least and mean > SHRINK * self._accepted_mean:
            log.info("%s under way at once: %d (answers in %.0f ms, %.0f ms when %d was chosen)", self.what,
                     max(self.least, self.limit // 2), mean * 1000, self._accepted_mean * 1000, self.limit)
            self._set(max(self.least, self.limit // 2), now, None)
        elif waited and self.limit < self.most and now >= self._hold_until:
            self._trying_from = mean
            self._set(min(self.most, self.limit * 2), now, None)

    def _set(self, limit: int, now: float, accepted_mean: float | None) -> None:
        self.limit = limit
        self._changed = now
        self._accepted_mean = accepted_mean
        self._settling = True
