"""``CycleState``: what plugins share during one scheduling cycle of one pod."""

from __future__ import annotations

from typing import Any

__all__ = ["CycleState"]


class CycleState:
    """A per-cycle key/value store; plugins read only the keys they wrote.

    ``skip_filter_plugins`` and ``skip_score_plugins`` record plugins whose PreFilter
    or PreScore returned Skip, so the framework does not call their Filter or Score.
    """

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins", "record_plugin_metrics")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()
        self.record_plugin_metrics = False

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value under ``key``; ``KeyError`` when no plugin wrote it this cycle."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> "CycleState":
        """A copy for what-if evaluation (preemption); values with ``clone()`` are copied."""
        other = CycleState()
        other._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        other.skip_filter_plugins = self.skip_filter_plugins
        other.skip_score_plugins = self.skip_score_plugins
        return other
