"""The framework runner: calls a profile's plugins at each extension point.

Mirrors upstream's ``frameworkImpl``: the order of plugins, PreFilter's merging of
node sets and its Skip bookkeeping, Filter stopping at a node's first failing
plugin, Score's normalisation and weighting. Filters and scores run over the node
table in one go for batch plugins and node by node for per-node ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .cycle_state import CycleState
from .interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeVerdicts,
    PostFilterResult,
    PreFilterResult,
)
from .status import Code, Status

if TYPE_CHECKING:  # pragma: no cover
    from ..cache.cache import Snapshot
    from ..objects.nodeinfo import NodeInfo
    from ..objects.pod import PodInfo

__all__ = ["Framework", "FilterOutcome", "ScoreOutcome", "FrameworkError", "go_list", "EXTENSION_POINTS", "POINT_METHODS"]

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)

# Which method makes a plugin usable at an extension point.
POINT_METHODS: dict[str, tuple[str, ...]] = {
    "preEnqueue": ("pre_enqueue",),
    "queueSort": ("less",),
    "preFilter": ("pre_filter",),
    "filter": ("filter_nodes", "filter"),
    "postFilter": ("post_filter",),
    "preScore": ("pre_score",),
    "score": ("score_nodes", "score"),
    "reserve": ("reserve",),
    "permit": ("permit",),
    "preBind": ("pre_bind",),
    "bind": ("bind",),
    "postBind": ("post_bind",),
}


MAX_PERMIT_TIMEOUT = 15 * 60.0  # seconds; upstream caps a Permit wait at 15 minutes


class FrameworkError(RuntimeError):
    """A plugin broke the contract (bad score range, exception, ...)."""


@dataclass(slots=True)
class FilterOutcome:
    """Which plugin rejected which row: ``status_index[row]`` into ``statuses``, -1 if none.

    Treat both arrays as read-only: when no row was rejected ``status_index`` is shared.
    """

    status_index: np.ndarray
    statuses: list[Status]
    passed: np.ndarray  # bool per row: survived every filter

    def status_of(self, row: int) -> Status | None:
        idx = int(self.status_index[row])
        return self.statuses[idx] if idx >= 0 else None


@dataclass(slots=True)
class ScoreOutcome:
    """Weighted scores per plugin over the scored rows, and their totals."""

    rows: np.ndarray
    by_plugin: dict[str, np.ndarray] = field(default_factory=dict)
    total: np.ndarray | None = None


class Framework:
    """One profile's plugins, in order, with their score weights."""

    def __init__(
        self,
        profile_name: str,
        points: dict[str, list[Any]],
        weights: dict[str, int],
        percentage_of_nodes_to_score: int | None = None,
        instances: dict[str, Any] | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.points = {p: list(points.get(p, [])) for p in EXTENSION_POINTS}
        self.weights = dict(weights)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.instances = instances or {}
        sort = self.points["queueSort"]
        self.queue_sort = sort[0] if sort else None
        self._batch_filter = [hasattr(p, "filter_nodes") for p in self.points["filter"]]
        self._batch_score = [hasattr(p, "score_nodes") for p in self.points["score"]]
        self._normalize = [getattr(p, "normalize_score", None) for p in self.points["score"]]
        self._weight_columns: dict[tuple[str, ...], np.ndarray] = {}  # active score plugins -> weights

    # -- introspection ------------------------------------------------------
    def plugin(self, name: str) -> Any:
        return self.instances.get(name)

    def plugin_names(self, point: str) -> list[str]:
        return [p.name for p in self.points[point]]

    def has_filter_plugins(self) -> bool:
        return bool(self.points["filter"])

    def has_score_plugins(self) -> bool:
        return bool(self.points["score"])

    def list_plugins(self) -> dict[str, list[dict[str, Any]]]:
        out = {}
        for point in EXTENSION_POINTS:
            entries = []
            for p in self.points[point]:
                entry = {"name": p.name}
                if point == "score":
                    entry["weight"] = self.weights.get(p.name, 1)
                entries.append(entry)
            if entries:
                out[point] = entries
        return out

    # -- queueing -----------------------------------------------------------
    def run_pre_enqueue(self, pod: "PodInfo") -> Status | None:
        for plugin in self.points["preEnqueue"]:
            status = plugin.pre_enqueue(pod)
            if status is not None and not status.is_success():
                return status.with_plugin(plugin.name)
        return None

    # -- PreFilter ----------------------------------------------------------
    def run_pre_filter(
        self, state: CycleState, pod: "PodInfo", snapshot: "Snapshot"
    ) -> tuple[PreFilterResult, Status | None, list[str]]:
        """Returns the merged node set, the rejecting status (if any) and the plugins that narrowed."""
        result = PreFilterResult()
        skipped: set[str] = set()
        narrowing: list[str] = []
        rejected: Status | None = None
        for plugin in self.points["preFilter"]:
            try:
                res, status = plugin.pre_filter(state, pod, snapshot)
            except Exception as err:  # a plugin bug must not lose the pod
                return result, Status.as_error(err, plugin.name), narrowing
            if status is not None and status.is_skip():
                skipped.add(plugin.name)
                continue
            if status is not None and not status.is_success():
                status = status.with_plugin(plugin.name)
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return result, status, narrowing
                if status.code == Code.UNSCHEDULABLE:
                    rejected = status
                    continue
                return result, Status(
                    Code.ERROR, f'running PreFilter plugin "{plugin.name}": {status.message}', plugin=plugin.name
                ), narrowing
            if res is not None and not res.all_nodes():
                narrowing.append(plugin.name)
            result = result.merge(res)
            if not result.all_nodes() and not result.node_names:
                if len(narrowing) == 1:
                    msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) {go_list(sorted(narrowing))} simultaneously"
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), narrowing
        state.skip_filter_plugins = frozenset(skipped)
        return result, rejected, narrowing

    # -- Filter -------------------------------------------------------------
    def run_filters(self, state: CycleState, pod: "PodInfo", snapshot: "Snapshot", candidates: np.ndarray) -> FilterOutcome:
        """Filter every candidate row; a row stops at its first failing plugin.

        ``candidates`` is a bool mask over table rows (live nodes the PreFilter allowed).
        """
        size = len(candidates)
        status_index: np.ndarray | None = None  # allocated at the first rejection
        statuses: list[Status] = []
        undecided = candidates  # never written in place: a new array whenever rows drop out
        shrunk = True  # whether to check for an empty ``undecided`` before the next plugin
        node_infos = snapshot.node_infos
        skip = state.skip_filter_plugins
        for plugin, batch in zip(self.points["filter"], self._batch_filter):
            if skip and plugin.name in skip:
                continue
            if shrunk:
                if not undecided.any():
                    break
                shrunk = False
            if batch:
                try:
                    verdicts: NodeVerdicts = plugin.filter_nodes(state, pod, snapshot)
                except Exception as err:
                    raise FrameworkError(f'running "{plugin.name}" filter plugin: {err}') from err
                if not verdicts.statuses:
                    continue  # no status to fail with: every row passes
                codes = verdicts.codes[:size]
                failed = undecided & (codes > 0)
                if failed.any():
                    if status_index is None:
                        status_index = np.full(size, -1, dtype=np.int32)
                    base = len(statuses)
                    statuses.extend(s.with_plugin(plugin.name) for s in verdicts.statuses)
                    status_index[failed] = codes[failed] - 1 + base
                    undecided = undecided & ~failed
                    shrunk = True
            else:
                memo: dict[Status, int] = {}
                undecided = undecided.copy()
                for row in np.flatnonzero(undecided):
                    try:
                        status = plugin.filter(state, pod, node_infos[row])
                    except Exception as err:
                        raise FrameworkError(f'running "{plugin.name}" filter plugin: {err}') from err
                    if status is None or status.is_success():
                        continue
                    if status.code == Code.ERROR:
                        raise FrameworkError(f'running "{plugin.name}" filter plugin: {status.message}')
                    status = status.with_plugin(plugin.name)
                    idx = memo.get(status)
                    if idx is None:
                        idx = memo[status] = len(statuses)
                        statuses.append(status)
                    if status_index is None:
                        status_index = np.full(size, -1, dtype=np.int32)
                    status_index[row] = idx
                    undecided[row] = False
                    shrunk = True
        if status_index is None:
            status_index = _no_rejections(size)
        return FilterOutcome(status_index, statuses, undecided)

    def run_filters_on_node(self, state: CycleState, pod: "PodInfo", node: "NodeInfo", snapshot: "Snapshot") -> Status | None:
        """Every filter on one node, in order (used by preemption's what-if checks)."""
        mask = np.zeros(snapshot.table.size, dtype=bool)
        mask[node.row] = True
        outcome = self.run_filters(state, pod, snapshot, mask)
        return outcome.status_of(node.row)

    # -- PostFilter ---------------------------------------------------------
    def run_post_filter(self, state: CycleState, pod: "PodInfo", filtered: Any) -> tuple[PostFilterResult | None, Status]:
        reasons: list[str] = []
        for plugin in self.points["postFilter"]:
            result, status = plugin.post_filter(state, pod, filtered)
            if status is None or status.is_success():
                return result, Status(Code.SUCCESS, plugin=plugin.name)
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result, status.with_plugin(plugin.name)
            if status.code != Code.UNSCHEDULABLE:
                return None, Status.as_error(RuntimeError(status.message), plugin.name)
            reasons.extend(status.reasons)
        return None, Status(Code.UNSCHEDULABLE, *reasons)

    # -- PreScore / Score ---------------------------------------------------
    def run_pre_score(self, state: CycleState, pod: "PodInfo", snapshot: "Snapshot", rows: np.ndarray) -> Status | None:
        skipped = set()
        for plugin in self.points["preScore"]:
            status = plugin.pre_score(state, pod, snapshot, rows)
            if status is None or status.is_success():
                continue
            if status.is_skip():
                skipped.add(plugin.name)
                continue
            return Status(Code.ERROR, f'running PreScore plugin "{plugin.name}": {status.message}', plugin=plugin.name)
        state.skip_score_plugins = frozenset(skipped)
        return None

    def run_score(self, state: CycleState, pod: "PodInfo", snapshot: "Snapshot", rows: np.ndarray) -> ScoreOutcome:
        outcome = ScoreOutcome(rows=rows)
        count = len(rows)
        node_infos = snapshot.node_infos
        skip = state.skip_score_plugins
        names: list[str] = []
        results: list[np.ndarray] = []
        for plugin, batch, normalize in zip(self.points["score"], self._batch_score, self._normalize):
            if skip and plugin.name in skip:
                continue
            if batch:
                scores = np.asarray(plugin.score_nodes(state, pod, snapshot, rows), dtype=np.int64)
            else:
                scores = np.fromiter((plugin.score(state, pod, node_infos[r]) for r in rows), dtype=np.int64, count=count)
            if normalize is not None:
                normalized = normalize(state, pod, scores)
                if normalized is not None:
                    scores = np.asarray(normalized, dtype=np.int64)
            names.append(plugin.name)
            results.append(scores)
        if not names:
            outcome.total = np.zeros(count, dtype=np.int64)
            return outcome
        # All plugins' scores as one array: a handful of operations whatever their number.
        stacked = np.empty((len(names), count), dtype=np.int64)
        for i, scores in enumerate(results):
            try:
                stacked[i] = scores
            except ValueError as err:
                raise FrameworkError(f"plugin {names[i]!r} returned {scores.shape} scores for {count} nodes") from err
        # One reduction checks both bounds: a negative int64 is a huge uint64.
        if count and np.maximum.reduce(stacked.view(np.uint64), axis=1).max() > MAX_NODE_SCORE:
            for name, scores in zip(names, stacked):
                if scores.max() > MAX_NODE_SCORE or scores.min() < MIN_NODE_SCORE:
                    bad = int(scores.max() if scores.max() > MAX_NODE_SCORE else scores.min())
                    raise FrameworkError(
                        f"plugin {name!r} returns an invalid score {bad}, "
                        f"it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
        weights = self._weight_columns.get(tuple(names))
        if weights is None:
            weights = np.array([[self.weights.get(name, 1)] for name in names], dtype=np.int64)
            self._weight_columns[tuple(names)] = weights
        weighted = stacked * weights
        outcome.by_plugin = dict(zip(names, weighted))
        outcome.total = np.add.reduce(weighted, axis=0)
        return outcome

    # -- Reserve / Permit / binding ----------------------------------------
    def run_reserve(self, state: CycleState, pod: "PodInfo", node_name: str) -> Status | None:
        for plugin in self.points["reserve"]:
            status = plugin.reserve(state, pod, node_name)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running Reserve plugin "{plugin.name}": {status.message}', plugin=plugin.name)
        return None

    def run_unreserve(self, state: CycleState, pod: "PodInfo", node_name: str) -> None:
        for plugin in reversed(self.points["reserve"]):
            plugin.unreserve(state, pod, node_name)

    def run_permit(self, state: CycleState, pod: "PodInfo", node_name: str) -> tuple[Status | None, dict[str, float]]:
        """A rejecting status; or Wait with each waiting plugin's timeout (capped at 15 min); or None."""
        waits: dict[str, float] = {}
        for plugin in self.points["permit"]:
            status, timeout = plugin.permit(state, pod, node_name)
            if status is None or status.is_success():
                continue
            if status.is_rejected():
                return status.with_plugin(plugin.name), {}
            if status.code == Code.WAIT:
                waits[plugin.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                continue
            return Status(Code.ERROR, f'running Permit plugin "{plugin.name}": {status.message}', plugin=plugin.name), {}
        if waits:
            return Status(Code.WAIT), waits
        return None, {}

    def run_pre_bind(self, state: CycleState, pod: "PodInfo", node_name: str) -> Status | None:
        for plugin in self.points["preBind"]:
            status = plugin.pre_bind(state, pod, node_name)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running PreBind plugin "{plugin.name}": {status.message}', plugin=plugin.name)
        return None

    def run_bind(self, state: CycleState, pod: "PodInfo", node_name: str) -> Status | None:
        if not self.points["bind"]:
            return Status(Code.ERROR, "no bind plugin is configured")
        for plugin in self.points["bind"]:
            status = plugin.bind(state, pod, node_name)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status(Code.ERROR, f'running Bind plugin "{plugin.name}": {status.message}', plugin=plugin.name)
            return None
        return Status(Code.SKIP)

    def run_post_bind(self, state: CycleState, pod: "PodInfo", node_name: str) -> None:
        for plugin in self.points["postBind"]:
            plugin.post_bind(state, pod, node_name)


_NO_REJECTIONS: dict[int, np.ndarray] = {}


def _no_rejections(size: int) -> np.ndarray:
    """A shared, read-only ``status_index`` of ``size`` rows, none rejected."""
    found = _NO_REJECTIONS.get(size)
    if found is None:
        if len(_NO_REJECTIONS) > 64:
            _NO_REJECTIONS.clear()
        found = np.full(size, -1, dtype=np.int32)
        found.flags.writeable = False
        _NO_REJECTIONS[size] = found
    return found


def go_list(items: list[str]) -> str:
    """Go's ``%v`` of a string slice: ``[a b c]``."""
    return "[" + " ".join(items) + "]"
