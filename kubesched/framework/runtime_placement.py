"""PlacementGenerate and PlacementScore for the framework runner (a pod-group cycle's points).

Upstream's ``RunPlacementGeneratePlugins`` and ``RunPlacementScorePlugins``:

* generation asks the profile's one PlacementGenerate plugin to cut the parent placement
  (every node) into candidates; without one, the parent is the only candidate; an empty
  answer is Unschedulable, "no feasible placements found";
* scoring asks every PlacementScore plugin for a score per feasible placement, lets a
  plugin that is a ``PlacementScoreExtensions`` rescale its scores, checks each is within
  0..100, multiplies it by the plugin's weight and sums per placement.

Any plugin failure fails the pod-group cycle with an Error status worded as upstream's.
``Framework`` (``runtime.py``) inherits this mixin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ..objects.nodeinfo import NodeInfo
from .cycle_state import PodGroupCycleState
from .interfaces import Plugin
from .measured import PointObserver, measured, second_status
from .placement import (
    MAX_SCORE,
    MIN_SCORE,
    GeneratePlacementsResult,
    Placement,
    PlacementGeneratePlugin,
    PlacementPluginScores,
    PlacementScore,
    PlacementScoreExtensions,
    PlacementScorePlugin,
    PluginScore,
    PodGroupAssignments,
)
from .podgroups import PodGroupInfo
from .status import Code, Status

__all__ = ["PlacementRuns", "NO_FEASIBLE_PLACEMENTS"]

NO_FEASIBLE_PLACEMENTS = "no feasible placements found"


def _failed(plugin: str, status: Status | None, err: BaseException | None = None) -> str:
    """``plugin %q failed with: <its error>``, as upstream wraps a plugin's status."""
    message = str(err) if err is not None else (status.message if status is not None else "")
    return f'plugin "{plugin}" failed with: {message}'


class PlacementRuns:
    """The PlacementGenerate and PlacementScore points of ``Framework``."""

    observe_point: PointObserver | None
    placement_weights: dict[str, int]
    _placement_generate: list[PlacementGeneratePlugin]
    _placement_score: list[PlacementScorePlugin]

    def _init_placements(self, generate: list[Plugin], score: list[Plugin], weights: dict[str, int]) -> None:
        self._placement_generate = cast(list[PlacementGeneratePlugin], generate)
        self._placement_score = cast(list[PlacementScorePlugin], score)
        self.placement_weights = dict(weights)

    def has_placement_plugins(self) -> bool:
        """Whether the profile generates or scores placements at all."""
        return bool(self._placement_generate or self._placement_score)

    @measured("PlacementGenerate", second_status)
    def run_placement_generate(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[Placement], Status | None]:
        """The candidate placements of ``pod_group`` among ``nodes``, or a non-success status
        (the plugin's own, or Unschedulable when it found none)."""
        parent = Placement("", tuple(nodes))
        if not self._placement_generate:
            return [parent], None
        plugin = self._placement_generate[0]
        try:
            result, status = plugin.generate_placements(state, pod_group, parent)
        except Exception as err:  # a plugin bug fails the group's cycle, not the scheduler
            return [], Status.as_error(err, plugin.name)
        if status is not None and not status.is_success():
            return [], status.with_plugin(plugin.name)
        placements = result.placements if isinstance(result, GeneratePlacementsResult) else []
        if not placements:
            return [], Status(Code.UNSCHEDULABLE, NO_FEASIBLE_PLACEMENTS, plugin=plugin.name)
        return list(placements), None

    @measured("PlacementScore", second_status)
    def run_placement_score(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, assignments: Sequence[PodGroupAssignments]
    ) -> tuple[list[PlacementPluginScores], Status | None]:
        """Each feasible placement's weighted scores, in the order of ``assignments``; an Error
        status when a plugin fails or gives a score outside 0..100 after normalising."""
        plugins = self._placement_score
        raw: dict[str, list[PlacementScore]] = {p.name: [] for p in plugins}
        for pga in assignments:
            for plugin in plugins:
                try:
                    score, status = plugin.score_placement(state, pod_group, pga)
                except Exception as err:
                    return [], Status(Code.ERROR, "running PlacementScore plugins: " + _failed(plugin.name, None, err),
                                      plugin=plugin.name, error=err)
                if status is not None and not status.is_success():
                    return [], Status(Code.ERROR, "running PlacementScore plugins: " + _failed(plugin.name, status),
                                      plugin=plugin.name)
                raw[plugin.name].append(PlacementScore(pga.placement, int(score)))
        for plugin in plugins:
            if not isinstance(plugin, PlacementScoreExtensions):
                continue
            prefix = "running NormalizePlacementScore on PlacementScore plugins: "
            try:
                status = plugin.normalize_placement_score(state, pod_group, raw[plugin.name])
            except Exception as err:
                return [], Status(Code.ERROR, prefix + _failed(plugin.name, None, err), plugin=plugin.name, error=err)
            if status is not None and not status.is_success():
                return [], Status(Code.ERROR, prefix + _failed(plugin.name, status), plugin=plugin.name)
        out: list[PlacementPluginScores] = []
        for index, pga in enumerate(assignments):
            entry = PlacementPluginScores(pga.placement)
            for plugin in plugins:
                score = raw[plugin.name][index].score
                if score > MAX_SCORE or score < MIN_SCORE:
                    return [], Status(
                        Code.ERROR,
                        f'applying score defaultWeights on PlacementScore plugins: plugin "{plugin.name}" returns an '
                        f"invalid score {score}, it should in the range of [{MIN_SCORE}, {MAX_SCORE}] after normalizing",
                        plugin=plugin.name,
                    )
                weighted = score * self.placement_weights.get(plugin.name, 1)
                entry.scores.append(PluginScore(plugin.name, weighted))
                entry.total_score += weighted
            out.append(entry)
        return out, None
