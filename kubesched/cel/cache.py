"""``cel.Cache``: compiled selectors by expression, least recently used dropped first."""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache

from ..framework.args import go_quote
from .compile import CompilationResult, DeviceEnvironments, compile_selector
from .limits import MAX_COST, MAX_EXPRESSION_LENGTH

__all__ = ["CelCache", "validate_selector", "selector_problem", "MAX_EXPRESSION_LENGTH"]


class CelCache:
    """Compiles each expression once and keeps up to ``max_size`` of them (with their
    per-device results). One per plugin instance; safe to share between threads."""

    def __init__(self, max_size: int = 1024, consumable_capacity: bool = True) -> None:
        self.consumable_capacity = consumable_capacity  # DRAConsumableCapacity: device.allowMultipleAllocations declared
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
            result = compile_selector(expression, self.environments, self.consumable_capacity)
            self._entries[expression] = result
            if len(self._entries) > self._max_size:
                self._entries.popitem(last=False)
            return result


def validate_selector(expression: str) -> str | None:
    """The compile error of ``expression`` (``compilation failed: ...``), or None."""
    return compile_selector(expression, DeviceEnvironments()).error


@lru_cache(maxsize=4096)  # a snapshot repeats the same few selectors over many objects
def selector_problem(expression: str) -> str | None:
    """Why the API server refuses a selector (``validateCELSelector``), as its field error
    reads after the field: too long, ``Invalid value: ...: <compile error>`` (its first line),
    or ``Forbidden: too complex, exceeds cost limit`` when cel-go's worst-case estimate of one
    evaluation exceeds ``CELSelectorExpressionMaxCost``; None when it is accepted."""
    if len(expression.encode()) > MAX_EXPRESSION_LENGTH:
        return f"Too long: may not be more than {MAX_EXPRESSION_LENGTH} bytes"
    result = compile_selector(expression, DeviceEnvironments())
    if result.error is not None:
        return f"Invalid value: {go_quote(expression)}: {result.error.splitlines()[0]}"
    if result.max_cost is not None and result.max_cost > MAX_COST:
        return "Forbidden: too complex, exceeds cost limit"
    return None
