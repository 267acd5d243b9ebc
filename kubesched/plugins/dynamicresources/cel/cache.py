"""``cel.Cache``: compiled selectors by expression, least recently used dropped first."""

from __future__ import annotations

import threading
from collections import OrderedDict

from .compile import CompilationResult, DeviceEnvironments, compile_selector

__all__ = ["CelCache", "validate_selector"]


class CelCache:
    """Compiles each expression once and keeps up to ``max_size`` of them (with their
    per-device results). One per plugin instance; safe to share between threads."""

    def __init__(self, max_size: int = 1024) -> None:
        self._max_size = max_size
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, CompilationResult] = OrderedDict()
        self.environments = DeviceEnvironments()

    def get_or_compile(self, expression: str) -> CompilationResult:
        with self._lock:
            found = self._entries.get(expression)
            if found is not None:
                self._entries.move_to_end(expression)
                return found
            result = compile_selector(expression, self.environments)
            self._entries[expression] = result
            if len(self._entries) > self._max_size:
                self._entries.popitem(last=False)
            return result


def validate_selector(expression: str) -> str | None:
    """The compile error of ``expression`` (``compilation failed: ...``), or None."""
    return compile_selector(expression, DeviceEnvironments()).error
