"""Fault injection: make matching requests fail with a Status, or answer late.

Tests (and the benchmark, over ``/_test/faults``) use this to exercise a
client's retry and backoff paths: a 500 on a binding, a 429 with Retry-After,
a slow list.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field


@dataclass(slots=True)
class Fault:
    """One rule: requests whose method and path?query match get ``status`` (or only a delay).

    ``times`` counts how many requests it still affects; None means every one.
    """

    method: str | None
    path: re.Pattern[str]
    status: int | None
    retry_after: int | None
    times: int | None
    delay: float
    reason: str | None = None
    message: str | None = None
    hits: int = 0

    def describe(self) -> dict[str, object]:
        return {"method": self.method, "path": self.path.pattern, "status": self.status,
                "retry_after": self.retry_after, "times": self.times, "delay": self.delay,
                "reason": self.reason, "message": self.message, "hits": self.hits}


@dataclass(slots=True)
class Faults:
    """The active fault rules; the first matching rule with uses left applies."""

    rules: list[Fault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, *, method: str | None = None, path: str = "", status: int | None = 500,
            retry_after: int | None = None, times: int | None = 1, delay: float = 0.0,
            reason: str | None = None, message: str | None = None) -> Fault:
        """Add a rule; ``reason``/``message`` override the Status upstream would give for ``status``."""
        rule = Fault(method.upper() if method else None, re.compile(path), status, retry_after, times, delay,
                     reason, message)
        with self.lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        with self.lock:
            self.rules.clear()

    def take(self, method: str, target: str) -> Fault | None:
        """The rule this request triggers (its use is counted), if any.

        The pattern is searched in the path alone and in path?query, so
        ``/binding$`` matches whatever query a client adds.
        """
        with self.lock:
            for rule in self.rules:
                if rule.times is not None and rule.times <= 0:
                    continue
                if rule.method is not None and rule.method != method:
                    continue
                path = target.split("?", 1)[0]
                if not (rule.path.search(path) or rule.path.search(target)):
                    continue
                rule.hits += 1
                if rule.times is not None:
                    rule.times -= 1
                return rule
        return None
