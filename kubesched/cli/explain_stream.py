"""``--explain`` as JSON Lines, written while the simulation runs.

Each attempt becomes one line (the record of ``scheduler.explain.attempt_record``) as
soon as it happens and is dropped at once, so memory stays flat however many attempts
a run makes: a failed attempt on 5,000 nodes names every node and its reason, and
keeping 20,000 of them took gigabytes. Filters keep the file small too: some pods (a
label selector, a ``namespace/name`` glob) and only the failed attempts.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

import orjson

from ..objects.pod import PodInfo
from ..scheduler.explain import attempt_record
from ..scheduler.scheduler import Attempt
from .label_query import LabelQuery

__all__ = ["ExplainFilter", "ExplainStream"]


@dataclass(slots=True)
class ExplainFilter:
    """Which attempts to write: all by default."""

    selector: LabelQuery | None = None
    name_pattern: str | None = None  # a glob on "namespace/name" (or on the name alone when it has no "/")
    failed_only: bool = False
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.name_pattern:
            self._pattern = re.compile(fnmatch.translate(self.name_pattern))

    def wants(self, attempt: Attempt) -> bool:
        if self.failed_only and attempt.result is not None:
            return False
        return self.wants_pod(attempt.pod)

    def wants_pod(self, pod: PodInfo) -> bool:
        """Whether ``pod`` matches the selector and the name pattern."""
        if self.selector is not None and not self.selector.matches(pod.labels):
            return False
        if self._pattern is not None:
            subject = pod.key if "/" in (self.name_pattern or "") else pod.name
            if not self._pattern.match(subject):
                return False
        return True


class ExplainStream:
    """An ``on_attempt`` callback writing wanted attempts to ``sink``, one JSON object a line."""

    def __init__(self, sink: BinaryIO, live_rows: Callable[[], list[int]], which: ExplainFilter | None = None) -> None:
        self._sink = sink
        self._live_rows = live_rows  # the table rows of every node, now
        self._filter = which or ExplainFilter()
        self._held: dict[int, Attempt] = {}  # chose a node, binding cycle not over yet (by id)
        self.written = 0

    def __call__(self, attempt: Attempt) -> None:
        if not self._filter.wants(attempt):
            return
        if attempt.binding is not None and attempt.binding.get("result") == "pending":
            # Its node is chosen but its binding cycle (at once in the simulator, or after a
            # wait at Permit) is not over: written when it is, so the record says how it ended.
            self._held[id(attempt)] = attempt
            attempt.on_decided = self._decided
            return
        self._write(attempt)

    def _decided(self, attempt: Attempt) -> None:
        if self._held.pop(id(attempt), None) is not None:
            self._write(attempt)

    def close(self) -> None:
        """Write the attempts still held (pods waiting at Permit when the run ended)."""
        held, self._held = self._held, {}
        for attempt in held.values():
            attempt.on_decided = None
            self._write(attempt)

    def _write(self, attempt: Attempt) -> None:
        self._sink.write(orjson.dumps(attempt_record(attempt, self._live_rows())))
        self._sink.write(b"\n")
        self.written += 1
