"""``Attempt``: one scheduling attempt as its observers see it.

Explain output, ``capacity``, ``compare`` and the metrics read attempts; their own
module so that those readers, the scheduling cycle and the binding cycle (which marks
an attempt bound) share the record without importing the scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..framework.preemption import PreemptionOutcome
from ..objects.pod import PodInfo
from .algorithm import ScheduleResult, Walk

__all__ = ["Attempt", "PlacementTrial", "PodGroupCycleRecord"]


@dataclass(slots=True)
class PlacementTrial:
    """A placement a pod-group cycle tried: its nodes, whether the group was feasible there
    and, when placements were scored, its total."""

    name: str
    nodes: int
    feasible: bool
    score: int | None = None
    # For the explain output: the weighted score of each PlacementScore plugin (empty when the
    # placements were not scored) and, for an infeasible placement, why the group did not fit it.
    plugin_scores: dict[str, int] = field(default_factory=dict)
    reason: str = ""


@dataclass(slots=True)
class PodGroupCycleRecord:
    """One pod-group cycle, shared by the attempts of the pods it tried: the group, the pods
    in the order tried, the placements (TopologyAwareWorkloadScheduling), the placement
    bound, the group's status and the ``PodGroupScheduled`` condition it called for."""

    group: str  # namespace/name
    cycle: int  # the queue's scheduling cycle when the group was popped
    order: list[str] = field(default_factory=list)  # pod keys, in the order tried
    placements: list[PlacementTrial] = field(default_factory=list)
    placement: str | None = None  # the placement bound (None: not a placement cycle, or none feasible)
    status: str = ""  # "" when feasible; else why the group failed
    condition: tuple[str, str, str] | None = None  # (status, reason, message) called for
    # The member that started the cycle was popped from backoffQ while activeQ was empty
    # (SchedulerPopFromBackoffQ): a failed group retried before its backoff ended.
    from_backoff: bool = False
    # For the explain output: the group's shape ("gang" or "basic"; "" when its PodGroup was
    # not found), and the placements tied for the best score with how the tie was broken
    # ("first": the first in generation order; "random": the scheduler's seeded pick).
    policy: str = ""
    min_count: int | None = None
    topology_keys: tuple[str, ...] = ()
    tied: list[str] = field(default_factory=list)
    tie_break: str = ""
    # For the explain output, when a group with no placements failed: how many of its pods
    # fit and the first that did not, with its message (placements carry their own).
    reason: str = ""


@dataclass(slots=True)
class Attempt:
    """One scheduling attempt, as observers (explain output, metrics) see it."""

    pod: PodInfo
    attempt: int
    profile: str
    result: ScheduleResult | None  # set when a node was chosen
    error: Exception | None  # FitError when no node fits, another error otherwise
    node_names: list[str]  # table row -> node name, at the time of the attempt
    started: float
    finished: float
    bound: bool = False
    post_filter: PreemptionOutcome | None = None  # what preemption decided, when it ran
    walk: Walk | None = None  # the node walk: start index, advance, feasible found, batching hint
    # Reserve, Permit, PreBind and Bind once a node was chosen, filled in as the binding
    # cycle goes (a JSON-ready dict: see ``binding_record.py``); None before that or when no node was chosen.
    binding: dict[str, Any] | None = None
    # Called once ``binding`` is final (bound, or failed after its node was chosen), for an
    # observer that waits for it (``--explain`` writes the record then).
    on_decided: Callable[[Attempt], None] | None = None
    # The pod-group cycle the attempt was part of (None: the pod was scheduled alone).
    pod_group: PodGroupCycleRecord | None = None
