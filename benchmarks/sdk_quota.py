"""An out-of-tree per-team quota plugin, as bench_sdk_preemption.py loads it.

``TeamQuota`` caps the number of placed pods per team (pod label ``acme.io/team``):
PreFilter counts the team's placed pods (an incremental index, ``PodObserver``) and
skips pods of teams without a cap; Filter rejects every node as ``Unschedulable``
(evicting pods might help, so DefaultPreemption dry-runs) once the team is at its
cap. Both Filter forms: the batch form serves scheduling, the per-node form
preemption's what-if runs.

``TeamQuotaWithExtensions`` adds ``PreFilterExtensions`` (``add_pod``/``remove_pod``
keep the count right while preemption removes and re-adds pods) and a state that
clones, so preemption copies it for each node it tries.

It imports only the public contract, as a third-party package would.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kubesched.framework import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeVerdicts,
    PluginSpec,
    PreFilterResult,
    SignFragment,
    SnapshotView,
    StateKey,
    Status,
)
from kubesched.framework.views import BoolArray
from kubesched.objects import NodeInfo, PodInfo

TEAM = "acme.io/team"
OVER_QUOTA = Status(Code.UNSCHEDULABLE, "team over quota")


@dataclass(frozen=True)
class TeamQuotaArgs:
    """``limits``: the most pods each team may run; teams not listed are not capped."""

    limits: dict[str, int] = field(default_factory=dict)


class QuotaState:
    """The team's count of placed pods for one cycle; cloned by preemption's what-if runs."""

    __slots__ = ("team", "used", "limit")

    def __init__(self, team: str, used: int, limit: int) -> None:
        self.team, self.used, self.limit = team, used, limit

    def clone(self) -> QuotaState:
        return QuotaState(self.team, self.used, self.limit)


STATE: StateKey[QuotaState] = StateKey("acme.io/team-quota")


class TeamCounts:
    """Placed pods per team, kept current by the scheduler (``Handle.add_pod_observer``)."""

    def __init__(self) -> None:
        self.used: dict[str, int] = {}

    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None:
        team = pod.labels.get(TEAM)
        if team is not None:
            self.used[team] = self.used.get(team, 0) + 1

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None:
        team = pod.labels.get(TEAM)
        if team is not None:
            self.used[team] -= 1

    def nodes_changed(self) -> None:
        pass


class TeamQuota:
    name = "TeamQuota"

    def __init__(self, args: TeamQuotaArgs, handle: Handle) -> None:
        self.limits = dict(args.limits)
        self.counts = TeamCounts()
        handle.add_pod_observer(self.counts)

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        team = pod.labels.get(TEAM)
        limit = self.limits.get(team) if team is not None else None
        if team is None or limit is None:
            return None, SKIP
        state.write(STATE, QuotaState(team, self.counts.used.get(team, 0), limit))
        return None, None

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """What the answers read of the pod: its team (so OpportunisticBatching stays on)."""
        return [SignFragment(TEAM, pod.labels.get(TEAM))], None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        quota = state.read(STATE)
        return OVER_QUOTA if quota.used >= quota.limit else None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView,
                     candidates: BoolArray) -> NodeVerdicts:
        quota = state.read(STATE)
        size = snapshot.table.size
        if quota.used < quota.limit:
            return NodeVerdicts.all_pass(size)
        return NodeVerdicts.from_mask(np.zeros(size, dtype=bool), OVER_QUOTA)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only a team's pod leaving frees quota.
        return [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE))]


class TeamQuotaWithExtensions(TeamQuota):
    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        quota = state.read(STATE)
        if pod.labels.get(TEAM) == quota.team:
            quota.used += 1
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        quota = state.read(STATE)
        if pod.labels.get(TEAM) == quota.team:
            quota.used -= 1
        return None


def new(args: TeamQuotaArgs, handle: Handle) -> TeamQuota:
    return TeamQuota(args, handle)


def new_with_extensions(args: TeamQuotaArgs, handle: Handle) -> TeamQuotaWithExtensions:
    return TeamQuotaWithExtensions(args, handle)


spec = PluginSpec("TeamQuota", new, args_type=TeamQuotaArgs)
spec_with_extensions = PluginSpec("TeamQuota", new_with_extensions, args_type=TeamQuotaArgs)
