"""Placements: the extension points of a pod-group cycle (upstream's PlacementGenerate and
PlacementScore, TopologyAwareWorkloadScheduling).

A pod-group cycle may try the group on several sets of nodes and keep the best:

1. the profile's one PlacementGenerate plugin cuts the cluster (the *parent* placement,
   every node) into candidate ``Placement``\\ s, e.g. one per value of a topology label;
   without such a plugin the parent is the only candidate;
2. the scheduler runs the group's pods (filter, score, select, assume) inside each
   placement's nodes; a placement where enough pods fit is *feasible*, and its
   ``PodGroupAssignments`` say where each pod would go;
3. when more than one is feasible, every PlacementScore plugin scores each of them
   (``score_placement``), rescales its scores to 0..100 if it is a
   ``PlacementScoreExtensions``, and the weighted sum picks the placement bound.

Placements may overlap; a plugin must return only nodes of its parent (the contract
suite, ``kubesched.testing``, checks it).

Returning ``None`` for a ``Status`` means success, as elsewhere in the framework.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from .cycle_state import PodGroupCycleState
from .interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, Plugin
from .podgroups import PodGroupInfo
from .status import Status

__all__ = [
    "MAX_SCORE",
    "MIN_SCORE",
    "Assignment",
    "GeneratePlacementsResult",
    "Placement",
    "PlacementGeneratePlugin",
    "PlacementPluginScores",
    "PlacementScore",
    "PlacementScoreExtensions",
    "PlacementScorePlugin",
    "PluginScore",
    "PodGroupAssignments",
    "ProposedAssignment",
]

MAX_SCORE = MAX_NODE_SCORE
"""The highest score a PlacementScore plugin may give after normalising (upstream's ``MaxScore``)."""
MIN_SCORE = MIN_NODE_SCORE


@dataclass(slots=True, frozen=True, eq=False)
class Placement:
    """A set of nodes a pod group may be scheduled on (upstream's ``Placement``).

    ``name`` identifies the placement in diagnostics (``--explain``); its choice is the
    generating plugin's (TopologyPlacementGenerator names each after its domain). The
    parent placement the scheduler starts from is unnamed. Placements compare by
    identity, as upstream's pointers do.
    """

    name: str
    nodes: tuple[NodeInfo, ...]

    def node_names(self) -> list[str]:
        return [info.node.name for info in self.nodes]


@dataclass(slots=True)
class GeneratePlacementsResult:
    """What a PlacementGenerate plugin answers: the candidate placements, in the order the
    scheduler tries them; empty when the group fits no placement of this kind."""

    placements: list[Placement] = field(default_factory=list)


class ProposedAssignment(Protocol):
    """A pod of the group and the node the cycle proposes for it (upstream's ``ProposedAssignment``)."""

    @property
    def pod(self) -> PodInfo: ...

    @property
    def node_name(self) -> str: ...


@dataclass(slots=True, frozen=True)
class Assignment:
    """A plain ``ProposedAssignment``."""

    pod: PodInfo
    node_name: str


@dataclass(slots=True)
class PodGroupAssignments:
    """A feasible placement and where the cycle would put the group's pods in it (upstream's
    ``PodGroupAssignments``). ``proposed_assignments`` hold only the pods that fit, each a
    pod of the cycle's ``PodGroupInfo``; pods already assumed or bound are in the group's state."""

    placement: Placement
    proposed_assignments: Sequence[ProposedAssignment] = ()


@dataclass(slots=True)
class PlacementScore:
    """One plugin's score of one placement, as ``normalize_placement_score`` rescales it in place."""

    placement: Placement
    score: int


@dataclass(slots=True, frozen=True)
class PluginScore:
    """A plugin's weighted score."""

    name: str
    score: int


@dataclass(slots=True)
class PlacementPluginScores:
    """A placement's weighted score from each PlacementScore plugin, and their sum (upstream's
    ``PlacementPluginScores``; the scheduler breaks ties between equal totals)."""

    placement: Placement
    scores: list[PluginScore] = field(default_factory=list)
    total_score: int = 0


@runtime_checkable
class PlacementGeneratePlugin(Plugin, Protocol):
    """Cuts ``parent`` into the placements the group is tried on. At most one per profile.

    Every node of an answer must be a node of ``parent`` (an ``info`` of
    ``parent.nodes``). An empty answer makes the group unschedulable ("no feasible
    placements found"); a non-success status fails the cycle with it.
    """

    def generate_placements(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, parent: Placement
    ) -> tuple[GeneratePlacementsResult | None, Status | None]: ...


@runtime_checkable
class PlacementScorePlugin(Plugin, Protocol):
    """Scores a feasible placement from its proposed assignments; higher is better.

    Called only when more than one placement is feasible. The raw score may be any
    integer when the plugin is also a ``PlacementScoreExtensions`` that rescales it;
    after that step every score must be within ``MIN_SCORE..MAX_SCORE``, or the cycle
    fails. A non-success status fails the cycle.
    """

    def score_placement(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, assignments: PodGroupAssignments
    ) -> tuple[int, Status | None]: ...


@runtime_checkable
class PlacementScoreExtensions(Protocol):
    """Rescales one plugin's scores of every feasible placement (``NormalizePlacementScore``),
    changing ``scores[i].score`` in place."""

    def normalize_placement_score(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, scores: list[PlacementScore]
    ) -> Status | None: ...
