"""Check: a placement plugin answers what a pod-group cycle can act on.

A PlacementGenerate plugin (``generate_placements``) is asked, for every pod group of every
cluster (``with_pod_groups``), to cut two parents: every node, and a random half of them
(as a nested generator would be); its answer must be ``(GeneratePlacementsResult | None,
Status | None)``, and on success each placement a ``Placement`` with a name of its own and
nodes of the parent only, each once, as the parent's own ``NodeInfo`` objects (the
scheduler runs the group's pods on them). The same question asked twice must get the same
placements (``simulate`` is deterministic).

A PlacementScore plugin (``score_placement``) scores, for every group, the placements of
the cluster's zones plus the whole cluster, each with the group's pods proposed on random
nodes of it; the answer must be ``(int, Status | None)``, the same when asked twice, and
after ``normalize_placement_score`` (when the plugin has it: it must keep the list's
length and placements) every score of a successful run must be within 0..100, as the
framework requires of the weighted sum.
"""

from __future__ import annotations

import numbers
from typing import Sequence, TypeVar

from ..framework.cycle_state import CycleState
from ..framework.interfaces import Plugin
from ..framework.placement import (
    MAX_SCORE,
    MIN_SCORE,
    Assignment,
    GeneratePlacementsResult,
    Placement,
    PlacementGeneratePlugin,
    PlacementScore,
    PlacementScoreExtensions,
    PlacementScorePlugin,
    PodGroupAssignments,
)
from ..framework.podgroups import PodGroupInfo
from ..framework.registry import PluginSpec
from ..framework.status import Status
from ..objects.nodeinfo import NodeInfo
from ._support import ContractError, ContractReport, build, clusters_or_default, decode
from .clusters import RandomCluster
from .pod_groups import PodGroupCluster, with_pod_groups

__all__ = ["assert_placement_contract"]

A = TypeVar("A")
ZONE = "topology.kubernetes.io/zone"


def assert_placement_contract(
    spec: PluginSpec[A],
    args: object = None,
    clusters: Sequence[RandomCluster] | None = None,
) -> ContractReport:
    """The PlacementGenerate and PlacementScore checks that apply to the plugin (see the
    module docstring). Fails when the plugin is neither, or when nothing was compared."""
    found = clusters_or_default(clusters)
    decoded = decode(spec, args)
    report = ContractReport(spec.name, [], clusters=len(found))
    for cluster in found:
        world = with_pod_groups(cluster)
        plugin = _build(spec, decoded, world)
        generator = plugin if isinstance(plugin, PlacementGeneratePlugin) else None
        scorer = plugin if isinstance(plugin, PlacementScorePlugin) else None
        if generator is None and scorer is None:
            raise ContractError(f"plugin {spec.name} has neither generate_placements nor score_placement")
        for _, info in world.groups:
            report.pods += len(info.unscheduled_pods)
            if generator is not None:
                _check_generate(generator, info, world, report)
            if scorer is not None:
                _check_score(scorer, info, world, report)
    for name, done in (("placement generation", report.placements_generated), ("placement scores", report.placement_scores)):
        if name in report.checks and not done:
            raise ContractError(f"plugin {spec.name}: the {name} check compared nothing (no cluster had a pod group "
                                f"with nodes; pass clusters with pending pods and nodes)")
    if not report.checks:
        raise ContractError(f"plugin {spec.name}: no cluster had a pod group to check it on")
    return report


def _build(spec: PluginSpec[A], decoded: A | None, world: PodGroupCluster) -> Plugin:
    try:
        plugin = spec.build(decoded, world.handle)
    except Exception as err:
        raise ContractError(f"plugin {spec.name}: its factory raised on {world.describe()}: "
                            f"{type(err).__name__}: {err}") from err
    if getattr(plugin, "name", None) != spec.name:
        raise ContractError(f"plugin {spec.name}: its factory made a plugin named {getattr(plugin, 'name', None)!r}")
    return plugin


def _where(plugin: Plugin, info: PodGroupInfo, world: PodGroupCluster) -> str:
    return f"plugin {plugin.name}, pod group {info.key}, on {world.describe()}"


# -- PlacementGenerate ---------------------------------------------------------------------
def _check_generate(plugin: PlacementGeneratePlugin, info: PodGroupInfo, world: PodGroupCluster,
                    report: ContractReport) -> None:
    if "placement generation" not in report.checks:
        report.checks.append("placement generation")
    everything = Placement("", tuple(world.cluster.snapshot.list()))
    rng = world.cluster.rng(f"parent/{info.key}")
    half = Placement("half", tuple(n for n in everything.nodes if rng.random() < 0.5))
    for parent in (everything, half):
        first = _generate(plugin, info, parent, world)
        second = _generate(plugin, info, parent, world)
        if first != second:
            raise ContractError(f"{_where(plugin, info, world)}: asked twice with the same parent, it answered "
                                f"{first} then {second}; placements must be deterministic")
        if first is not None:
            report.placements_generated += len(first)


def _generate(plugin: PlacementGeneratePlugin, info: PodGroupInfo, parent: Placement,
              world: PodGroupCluster) -> list[tuple[str, tuple[str, ...]]] | None:
    """The answer as (name, node names) per placement, checked; None for a non-success status."""
    where = _where(plugin, info, world)
    try:
        answer = plugin.generate_placements(CycleState(), info, parent)
    except Exception as err:
        raise ContractError(f"{where}: generate_placements raised {type(err).__name__}: {err}") from err
    if not isinstance(answer, tuple) or len(answer) != 2:
        raise ContractError(f"{where}: generate_placements returned {answer!r}, not (GeneratePlacementsResult | None, "
                            f"Status | None)")
    result, status = answer
    if status is not None and not isinstance(status, Status):
        raise ContractError(f"{where}: generate_placements' status is {status!r}, not a Status or None")
    if status is not None and not status.is_success():
        return None
    if result is None:
        return []
    if not isinstance(result, GeneratePlacementsResult):
        raise ContractError(f"{where}: generate_placements returned {type(result).__name__}, not a GeneratePlacementsResult")
    allowed = {id(n): n.node.name for n in parent.nodes}
    seen_names: set[str] = set()
    out: list[tuple[str, tuple[str, ...]]] = []
    for placement in result.placements:
        if not isinstance(placement, Placement):
            raise ContractError(f"{where}: a placement is a {type(placement).__name__}, not a Placement")
        if not isinstance(placement.name, str):
            raise ContractError(f"{where}: placement name {placement.name!r} is not a string")
        if placement.name in seen_names:
            raise ContractError(f"{where}: two placements are named {placement.name!r}; a name identifies one")
        seen_names.add(placement.name)
        names = _checked_nodes(where, placement, parent, allowed)
        out.append((placement.name, names))
    return out


def _checked_nodes(where: str, placement: Placement, parent: Placement, allowed: dict[int, str]) -> tuple[str, ...]:
    names: list[str] = []
    seen: set[int] = set()
    for info in placement.nodes:
        if not isinstance(info, NodeInfo):
            raise ContractError(f"{where}: placement {placement.name!r} holds a {type(info).__name__}, not a NodeInfo")
        if id(info) not in allowed:
            inside = any(n.node.name == info.node.name for n in parent.nodes)
            raise ContractError(
                f"{where}: placement {placement.name!r} has node {info.node.name}, "
                + ("a copy of the parent's NodeInfo, not the parent's own object" if inside else
                   f"which is not in the parent placement {parent.name!r} ({len(parent.nodes)} nodes)")
                + "; a placement may only narrow its parent")
        if id(info) in seen:
            raise ContractError(f"{where}: placement {placement.name!r} has node {info.node.name} twice")
        seen.add(id(info))
        names.append(info.node.name)
    return tuple(names)


# -- PlacementScore ------------------------------------------------------------------------
def _candidates(info: PodGroupInfo, world: PodGroupCluster) -> list[PodGroupAssignments]:
    """The whole cluster and each zone, the group's pods proposed on random nodes of each."""
    nodes = tuple(world.cluster.snapshot.list())
    placements = [Placement("cluster", nodes)]
    zones: dict[str, list[NodeInfo]] = {}
    for node in nodes:
        zone = node.node.labels.get(ZONE)
        if zone is not None:
            zones.setdefault(zone, []).append(node)
    placements += [Placement(zone, tuple(members)) for zone, members in sorted(zones.items())]
    rng = world.cluster.rng(f"proposals/{info.key}")
    out = []
    for placement in placements:
        if not placement.nodes:
            continue
        chosen = [pod for pod in info.unscheduled_pods if rng.random() < 0.8]
        proposed = [Assignment(pod, rng.choice(placement.nodes).node.name) for pod in chosen]
        out.append(PodGroupAssignments(placement, proposed))
    return out


def _check_score(plugin: PlacementScorePlugin, info: PodGroupInfo, world: PodGroupCluster,
                 report: ContractReport) -> None:
    if "placement scores" not in report.checks:
        report.checks.append("placement scores")
    where = _where(plugin, info, world)
    candidates = _candidates(info, world)
    if not candidates:
        return
    state = CycleState()
    scores: list[PlacementScore] = []
    for assignments in candidates:
        score = _score(plugin, state, info, assignments, where)
        if score is None:
            return  # a failure status: the cycle fails, nothing to range-check
        if _score(plugin, CycleState(), info, assignments, where) != score:
            raise ContractError(f"{where}: placement {assignments.placement.name!r} scored differently when asked "
                                f"twice; scores must be deterministic")
        scores.append(PlacementScore(assignments.placement, score))
    placements = [s.placement for s in scores]
    if isinstance(plugin, PlacementScoreExtensions):
        try:
            status = plugin.normalize_placement_score(state, info, scores)
        except Exception as err:
            raise ContractError(f"{where}: normalize_placement_score raised {type(err).__name__}: {err}") from err
        if status is not None and not isinstance(status, Status):
            raise ContractError(f"{where}: normalize_placement_score returned {status!r}, not a Status or None")
        if len(scores) != len(placements) or any(s.placement is not p for s, p in zip(scores, placements)):
            raise ContractError(f"{where}: normalize_placement_score changed the list's placements; it may only "
                                f"change each entry's score")
        if status is not None and not status.is_success():
            return
    for entry in scores:
        value = entry.score
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise ContractError(f"{where}: placement {entry.placement.name!r} has the score {value!r}, not an integer")
        if not MIN_SCORE <= value <= MAX_SCORE:
            raise ContractError(f"{where}: placement {entry.placement.name!r} has the score {value} after normalizing; "
                                f"scores must be in [{MIN_SCORE}, {MAX_SCORE}] (or the plugin must normalise them)")
        report.placement_scores += 1
        report.score_values.add(int(value))


def _score(plugin: PlacementScorePlugin, state: CycleState, info: PodGroupInfo, assignments: PodGroupAssignments,
           where: str) -> int | None:
    try:
        answer = plugin.score_placement(state, info, assignments)
    except Exception as err:
        raise ContractError(f"{where}: score_placement raised {type(err).__name__}: {err}") from err
    if not isinstance(answer, tuple) or len(answer) != 2:
        raise ContractError(f"{where}: score_placement returned {answer!r}, not (int, Status | None)")
    score, status = answer
    if status is not None and not isinstance(status, Status):
        raise ContractError(f"{where}: score_placement's status is {status!r}, not a Status or None")
    if status is not None and not status.is_success():
        return None
    if not isinstance(score, numbers.Integral) or isinstance(score, bool):
        raise ContractError(f"{where}: score_placement returned the score {score!r}, not an integer")
    return int(score)
