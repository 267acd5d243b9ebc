"""``CycleState``: what plugins share during one scheduling cycle of one pod.

Values are stored under typed keys, ``StateKey[T]``, so a plugin reads back the type
it wrote without casts (upstream's ``StateKey`` plus the type assertion every Go
plugin does on ``Read``). Keys compare by name: two plugins that create a key of the
same name share the value, which is how upstream's well-known keys work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, cast, runtime_checkable

from ..objects.pod import PodInfo

__all__ = ["CycleState", "PodGroupCycleState", "StateKey", "StateData", "PODS_TO_ACTIVATE"]

T = TypeVar("T")


@runtime_checkable
class StateData(Protocol):
    """A value that must be copied, not shared, when the state is cloned (preemption's what-if runs)."""

    def clone(self) -> "StateData": ...


_CLONERS: dict[type, Callable[[object], object] | None] = {}


def _cloner_of(kind: type) -> Callable[[object], object] | None:
    """The unbound ``clone`` of a ``StateData`` type; None for a type whose values are shared."""
    method = getattr(kind, "clone", None)
    return cast("Callable[[object], object]", method) if callable(method) else None


class StateKey(Generic[T]):
    """A named slot of ``CycleState`` holding a ``T``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StateKey) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


@runtime_checkable
class PodGroupCycleState(Protocol):
    """What pod-group plugins share during one pod-group cycle (upstream's
    ``PodGroupCycleState``): typed slots, as ``CycleState``'s, which implements it (the
    scheduler gives a pod-group cycle a ``CycleState`` of its own)."""

    @property
    def record_plugin_metrics(self) -> bool: ...

    def read(self, key: StateKey[T]) -> T:
        """The value under ``key``; ``KeyError`` when no plugin wrote it this cycle."""
        ...

    def get(self, key: StateKey[T]) -> T | None: ...

    def write(self, key: StateKey[T], value: T) -> None: ...

    def delete(self, key: StateKey[T]) -> None: ...


class CycleState:
    """A per-cycle key/value store; plugins read only the keys they wrote.

    ``skip_filter_plugins`` and ``skip_score_plugins`` record plugins whose PreFilter
    or PreScore returned Skip, so the framework does not call their Filter or Score.

    ``pod_group_cycle_state`` is set while the pod is tried inside a pod-group cycle (upstream's
    ``SetPodGroupSchedulingCycle``): the group's own state, shared by all its pods' cycles.
    A plugin that must tell the two kinds of cycle apart (GangScheduling's Permit reads the
    snapshot's pod-group state in a group cycle, the cache's otherwise) asks
    ``is_pod_group_scheduling_cycle()``. The scheduler clears it before the binding cycle.
    ``skip_all_post_filter_plugins`` makes the framework run no PostFilter for this pod
    (workload-aware preemption's dry runs of a group cycle).
    """

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins", "record_plugin_metrics",
                 "pod_group_cycle_state", "skip_all_post_filter_plugins")

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()
        self.record_plugin_metrics = False
        self.pod_group_cycle_state: PodGroupCycleState | None = None
        self.skip_all_post_filter_plugins = False

    def is_pod_group_scheduling_cycle(self) -> bool:
        """Whether this pod is being tried inside a pod-group cycle (upstream's ``IsPodGroupSchedulingCycle``)."""
        return self.pod_group_cycle_state is not None

    def write(self, key: StateKey[T], value: T) -> None:
        self._data[key.name] = value

    def read(self, key: StateKey[T]) -> T:
        """The value under ``key``; ``KeyError`` when no plugin wrote it this cycle."""
        return self._data[key.name]  # type: ignore[return-value]  # typed by its key (no cast call: hot)

    def get(self, key: StateKey[T]) -> T | None:
        """The value under ``key``, or None when no plugin wrote it this cycle."""
        return self._data.get(key.name)  # type: ignore[return-value]  # typed by its key

    def delete(self, key: StateKey[T]) -> None:
        self._data.pop(key.name, None)

    def __contains__(self, key: StateKey[T]) -> bool:
        return key.name in self._data

    def clone(self) -> "CycleState":
        """A copy for what-if evaluation (preemption): ``StateData`` values are cloned, others shared.

        Whether a value is ``StateData`` is decided once per type (a ``clone`` attribute
        on its class), not with ``isinstance`` against the runtime-checkable protocol,
        which costs microseconds per value and preemption clones per node tried."""
        other = CycleState()
        data: dict[str, object] = {}
        cloners = _CLONERS
        for k, v in self._data.items():
            kind = type(v)
            if kind in cloners:
                cloner = cloners[kind]
            else:
                cloner = cloners[kind] = _cloner_of(kind)
            data[k] = v if cloner is None else cloner(v)
        other._data = data
        other.skip_filter_plugins = self.skip_filter_plugins
        other.skip_score_plugins = self.skip_score_plugins
        other.pod_group_cycle_state = self.pod_group_cycle_state  # shared, as upstream's Clone shares it
        other.skip_all_post_filter_plugins = self.skip_all_post_filter_plugins
        return other


PODS_TO_ACTIVATE: StateKey[dict[str, PodInfo]] = StateKey("kubernetes.io/pods-to-activate")
"""Pods (by uid) a plugin wants moved to the active queue once this pod's scheduling
cycle succeeds (upstream's ``PodsToActivate``); the scheduler writes an empty map at
the start of every cycle."""
