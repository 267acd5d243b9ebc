"""How many binds (and event writes, and status patches) may be under way at once, found
by trying.

Upstream binds each pod in its own goroutine, over client-go's HTTP/2 connection (100
streams each on kube-apiserver, more connections past that): nothing but the client's
QPS budget bounds the binds in flight, so a bind's round trip costs throughput only
when the API server itself is slow. Here binds go over HTTP/1.1, one request per
connection at a time, and each new TLS connection costs about a millisecond of CPU: a
fixed 32 is cheap next to a nearby server but caps binding at 32 per round trip when the
server is far away (issue 26: 119-128 pods/s through 250 ms of added latency).

The binding tasks, the event writers and the status patchers share one
``ConcurrencyLimit`` (their requests, like binds, come one per pod): each has its base
number, and all are scaled together (``share``), so that one class cannot win by taking
the server from another. The limit starts at ``least`` and learns by trying, round by
round. A round is as many answers as the limit, at least ``ROUND``, and at least
``ROUND_SECONDS`` and ``ROUND_TRIPS`` answer times long (so that a moment's stall of the
machine does not decide alone), counting only requests sent since the limit last
changed, and not the first round after a change (``SETTLE_TRIPS`` answer times at least:
the queues settle at their new length and new connections make their TCP and TLS
handshakes, two or three round trips, before they carry requests). After two rounds in which binds
waited for a turn throughout and about as many were answered per second (within
``STEADY`` times: while this process is busy scheduling, answers are read late, and the
rate moves with that rather than with the limit), it doubles the limit and compares the
next round's answers per second with the last round's:

* at least ``GAIN`` times as many: the round trip was what held them back (the network),
  and twice as many at once do about twice as much; the new limit stays, and the next
  round may double it again, up to ``most``;
* fewer: something else is the bottleneck (the API server's CPU, or this process's own
  loop, busy with scheduling cycles), and more at once would only hold connections for
  nothing; the limit goes back and is not tried higher for ``HOLD`` seconds (a try whose
  round did not have requests waiting throughout goes back too: it tells nothing).

Answer times alone cannot tell these apart: a busy event loop reads every answer late,
which looks like a long round trip. A round in which nothing waited, above ``least``,
halves the limit: the backlog is over. Near the server the limit stays at ``least``, and
a try costs one round with more requests in the server's queue every ``HOLD`` seconds
(the connections it opened are kept alive and reused); through 200 ms it reaches
``most`` within seconds. On a machine so loaded that the rate jumps from round to round,
it never tries: it stays at ``least``, which is what it was before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

__all__ = ["ConcurrencyLimit", "GAIN", "HOLD", "LEAST", "MOST", "ROUND", "ROUND_SECONDS", "STEADY"]

log = logging.getLogger("kubesched.concurrency")

LEAST = 32  # a nearby server is served best by this many (the pool's old fixed size)
MOST = 256  # 256 binds per round trip: over 1,000 pods/s through 200 ms
GAIN = 1.3  # doubling must bring this many times the answers per second to be kept
HOLD = 30.0  # seconds before a limit found too high is tried again
ROUND = 64  # answers a round takes at least
ROUND_SECONDS = 0.5  # and seconds
STEADY = 1.5  # two rounds whose rates differ less than this are a steady state
ROUND_TRIPS = 3  # a round lasts at least this many answer times
SETTLE_TRIPS = 6  # and the round after a change this many


@dataclass(slots=True)
class ConcurrencyLimit:
    least: int = LEAST
    most: int = MOST
    what: str = "binds (event writes, status patches in proportion)"  # for the log line
    round_seconds: float = ROUND_SECONDS
    limit: int = field(init=False)
    _changed: float = field(default=float("-inf"), init=False)  # when the limit last changed
    _hold_until: float = field(default=float("-inf"), init=False)
    _trying_from: float | None = field(default=None, init=False)  # while trying a doubled limit: the rate before
    _last_rate: float | None = field(default=None, init=False)  # the last round's, at this limit
    _round_started: float | None = field(default=None, init=False)
    _answer_time: float = field(default=0.0, init=False)
    _answers: int = field(default=0, init=False)
    _said: int = field(default=0, init=False)  # answers of the round that said whether binds waited
    _waited: int = field(default=0, init=False)  # and said they did
    _settling: bool = field(default=True, init=False)  # the round under way is the one after a change

    def __post_init__(self) -> None:
        self.least = max(1, self.least)
        self.most = max(self.least, self.most)
        self.limit = self.least

    def share(self, base: int) -> int:
        """How many requests a class whose base number is ``base`` may have under way now."""
        return max(1, min(self.most, base * self.limit // self.least))

    def answered(self, seconds: float, waiting: bool | None, now: float) -> None:
        """One request answered after ``seconds`` (``now``: ``time.perf_counter()``); ``waiting``:
        binds were queued for a turn (None for the other classes: binds are the backlog that
        decides, and an event queue that keeps pace with them is often empty)."""
        if now - seconds < self._changed:
            return  # sent under the previous limit: says nothing of this one
        self._answer_time += (seconds - self._answer_time) * 0.05  # a moving mean
        if self._round_started is None:
            self._round_started = now
            return
        self._answers += 1
        if waiting is not None:
            self._said += 1
            self._waited += waiting
        # A round lasts some round trips (the first after a change more: new connections take
        # a TCP and a TLS handshake, two or three round trips, before they carry requests).
        least_seconds = max(self.round_seconds, (SETTLE_TRIPS if self._settling else ROUND_TRIPS) * self._answer_time)
        if self._answers < self.limit or self._answers < ROUND or now - self._round_started < least_seconds:
            return
        rate = self._answers / max(now - self._round_started, 1e-9)
        busy, idle = 0 < self._waited == self._said, self._waited == 0  # binds waited throughout, never
        self._said = 0
        self._answers, self._waited, self._round_started = 0, 0, now
        if self._settling:
            self._settling = False
            return
        before = self._trying_from
        if before is not None:  # the round of a doubled limit
            self._trying_from = None
            if not busy:  # the backlog ran out: the try tells nothing
                self._set(self.limit // 2, now)
            elif rate < GAIN * before:  # not the round trip: back, and stay a while
                self._set(self.limit // 2, now)
                self._hold_until = now + HOLD
            else:
                self._last_rate = rate
                log.info("%s under way at once: %d (%.0f answers/s, %.0f at %d)", self.what, self.limit, rate,
                         before, self.limit // 2)
            return
        last, self._last_rate = self._last_rate, rate
        steady = last is not None and max(rate, last) < STEADY * min(rate, last)
        if idle:
            if self.limit > self.least:  # nothing waits any more: fewer at once will do
                self._set(max(self.least, self.limit // 2), now)
        elif busy and steady and self.limit < self.most and now >= self._hold_until:
            self._trying_from = rate
            self._set(min(self.most, self.limit * 2), now)

    def _set(self, limit: int, now: float) -> None:
        self.limit = limit
        self._changed = now
        self._settling = True
        self._last_rate = None
        self._answers, self._waited, self._said, self._round_started = 0, 0, 0, None
