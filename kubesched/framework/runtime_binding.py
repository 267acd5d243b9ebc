"""Reserve, Permit and the binding cycle's points for the framework runner.

Upstream's ``RunReservePluginsReserve`` / ``Unreserve``, ``RunPermitPlugins`` (a Wait
with each plugin's timeout, capped), ``RunPreBindPlugins`` with its pre-flight,
``RunBindPlugins`` (Skip passes to the next binder) and ``RunPostBindPlugins``: the
points after a node is chosen, which the scheduler runs once per placed pod. Its own
module because they share nothing with filtering and scoring; ``Framework``
(``runtime.py``) inherits it.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter

from ..objects.pod import PodInfo
from .cycle_state import CycleState, StateKey
from .interfaces import BindPlugin, PermitPlugin, PostBindPlugin, PreBindPlugin, ReservePlugin
from .measured import PluginObserver, PointObserver, code_label, first_status, measured, no_status, own_status
from .outcomes import MAX_PERMIT_TIMEOUT, FrameworkError
from .status import Code, Status

__all__ = ["BindingRuns", "PERMIT_WAIT_REASONS"]

PERMIT_WAIT_REASONS: StateKey[dict[str, str]] = StateKey("kubesched.io/permit-wait-reasons")
"""Written by ``run_permit`` when plugins answer Wait: each one's Wait message (its
reason), for explain records and reports (upstream logs them)."""


_SKIP_CODE = Code.SKIP
_NO_WAITS: dict[str, float] = {}  # what run_permit hands back when no plugin waits: read, never written


class BindingRuns:
    """The Reserve, Permit, PreBind, Bind and PostBind points of ``Framework``."""

    observe_point: PointObserver | None
    observe_plugin: PluginObserver | None
    _reserve: list[ReservePlugin]
    _permit: list[PermitPlugin]
    _pre_bind: list[PreBindPlugin]
    _pre_flights: list[Callable[[CycleState, PodInfo, str], Status | None]] | None
    _bind: list[BindPlugin]
    _post_bind: list[PostBindPlugin]

    @measured("Reserve", own_status)
    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._reserve:
            started = perf_counter() if observe is not None else 0.0
            status = plugin.reserve(state, pod, node_name)
            if observe is not None:
                observe(plugin.name, "Reserve", code_label(status), perf_counter() - started)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running Reserve plugin "{plugin.name}": {status.message}', plugin=plugin.name)
        return None

    @measured("Unreserve", no_status)
    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order; one that raises does not keep
        the others from releasing what they hold. The first error is raised at the end."""
        first: Exception | None = None
        for plugin in reversed(self._reserve):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception as err:
                first = first or FrameworkError(f'running Unreserve plugin "{plugin.name}": {err}')
        if first is not None:
            raise first

    @measured("Permit", first_status)
    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, dict[str, float]]:
        """A rejecting status; or Wait with each waiting plugin's timeout (capped at 15 min); or None."""
        if not self._permit:
            return None, _NO_WAITS
        waits: dict[str, float] = {}
        reasons: dict[str, str] = {}
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._permit:
            started = perf_counter() if observe is not None else 0.0
            status, timeout = plugin.permit(state, pod, node_name)
            if observe is not None:
                observe(plugin.name, "Permit", code_label(status), perf_counter() - started)
            if status is None or status.is_success():
                continue
            if status.is_rejected():
                return status.with_plugin(plugin.name), {}
            if status.code == Code.WAIT:
                waits[plugin.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                reasons[plugin.name] = status.message
                continue
            return Status(Code.ERROR, f'running Permit plugin "{plugin.name}": {status.message}', plugin=plugin.name), {}
        if waits:
            state.write(PERMIT_WAIT_REASONS, reasons)
            return Status(Code.WAIT), waits
        return None, _NO_WAITS

    def _init_pre_flights(self) -> None:
        """Each PreBind plugin's ``PreBindPreFlight`` method, found by name once (isinstance
        against a runtime_checkable Protocol costs ~60 µs); None when one has none."""
        methods = [getattr(plugin, "pre_bind_pre_flight", None) for plugin in self._pre_bind]
        self._pre_flights = None if any(m is None for m in methods) else [m for m in methods if m is not None]

    def pre_bind_skipped(self, state: CycleState, pod: PodInfo, node_name: str) -> bool:
        """Every PreBind plugin's pre-flight says Skip for this pod (none has anything to do)."""
        pre_flights = self._pre_flights
        if pre_flights is None:
            return False
        for pre_flight in pre_flights:
            status = pre_flight(state, pod, node_name)
            if status is None or status.code != _SKIP_CODE:
                return False
        return True

    @measured("PreBind", own_status)
    def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._pre_bind:
            started = perf_counter() if observe is not None else 0.0
            status = plugin.pre_bind(state, pod, node_name)
            if observe is not None:
                observe(plugin.name, "PreBind", code_label(status), perf_counter() - started)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running PreBind plugin "{plugin.name}": {status.message}', plugin=plugin.name)
        return None

    @measured("Bind", own_status)
    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if not self._bind:
            return Status(Code.ERROR, "no bind plugin is configured")
        observe = self.observe_plugin if state.record_plugin_metrics else None
        for plugin in self._bind:
            started = perf_counter() if observe is not None else 0.0
            status = plugin.bind(state, pod, node_name)
            if observe is not None:
                observe(plugin.name, "Bind", code_label(status), perf_counter() - started)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running Bind plugin "{plugin.name}": {status.message}', plugin=plugin.name)
            return None
        return Status(Code.SKIP)

    @measured("PostBind", no_status)
    def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for plugin in self._post_bind:
            plugin.post_bind(state, pod, node_name)
