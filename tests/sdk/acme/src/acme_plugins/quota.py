"""TeamQuota: the pods and CPU each team (namespace) may run, with preemption support.

``limits[<namespace>][pods|cpu]`` (cpu in millicores) caps a namespace; namespaces not
listed are not capped (PreFilter answers Skip for their pods). Filter rejects a pod
over its team's quota as Unschedulable on every node: evicting the team's own
lower-priority pods can make room, so DefaultPreemption tries, and ``add_pod`` /
``remove_pod`` (PreFilterExtensions) keep the count right in its what-if runs. Usage
is an incremental index over placed pods (``Handle.add_pod_observer``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.framework import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    PluginSpec,
    PreFilterResult,
    QueueingHint,
    SignFragment,
    SnapshotView,
    StateKey,
    Status,
)
from kubesched.framework.signing import RESOURCES_SIGNER, resources_signer
from kubesched.objects import NodeInfo, PodInfo

OVER_QUOTA = Status(Code.UNSCHEDULABLE, "team over quota")
RESOURCES = ("pods", "cpu")


@dataclass(frozen=True)
class TeamQuotaArgs:
    limits: dict[str, dict[str, int]] = field(default_factory=dict)

    def validate(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        for team, limits in self.limits.items():
            for resource, value in limits.items():
                where = f"limits[{team}][{resource}]"
                if resource not in RESOURCES:
                    problems.append((where, f"unknown resource, want one of {', '.join(RESOURCES)}"))
                elif value < 0:
                    problems.append((where, f"must not be negative, got {value}"))
        return problems


class Usage:
    """One team's placed pods and their CPU requests (millicores)."""

    __slots__ = ("pods", "cpu")

    def __init__(self, pods: int = 0, cpu: int = 0) -> None:
        self.pods, self.cpu = pods, cpu

    def clone(self) -> Usage:
        return Usage(self.pods, self.cpu)

    def change(self, pod: PodInfo, sign: int) -> None:
        self.pods += sign
        self.cpu += sign * pod.requests.requests.milli_cpu


USAGE: StateKey[Usage] = StateKey("acme.io/team-quota")


class TeamUsage:
    """Usage per namespace, kept current by the scheduler's cache (a ``PodObserver``)."""

    def __init__(self) -> None:
        self.by_team: dict[str, Usage] = {}

    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None:
        self.by_team.setdefault(pod.namespace, Usage()).change(pod, +1)

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None:
        self.by_team.setdefault(pod.namespace, Usage()).change(pod, -1)

    def nodes_changed(self) -> None:
        pass


class TeamQuota:
    name = "TeamQuota"

    def __init__(self, args: TeamQuotaArgs, handle: Handle) -> None:
        self.limits = {team: dict(limits) for team, limits in args.limits.items()}
        self.usage = TeamUsage()
        handle.add_pod_observer(self.usage)

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if pod.namespace not in self.limits:
            return None, SKIP
        used = self.usage.by_team.get(pod.namespace)
        state.write(USAGE, used.clone() if used is not None else Usage())
        return None, None

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its answers read the pod's namespace and its cpu request."""
        return [SignFragment("acme.io/team", pod.namespace), SignFragment(RESOURCES_SIGNER, resources_signer(pod))], None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        used, limits = state.read(USAGE), self.limits[pod.namespace]
        if used.pods + 1 > limits.get("pods", used.pods + 1):
            return OVER_QUOTA
        if used.cpu + pod.requests.requests.milli_cpu > limits.get("cpu", used.cpu + pod.requests.requests.milli_cpu):
            return OVER_QUOTA
        return None

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.namespace == pod_to_schedule.namespace:
            state.read(USAGE).change(pod, +1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.namespace == pod_to_schedule.namespace:
            state.read(USAGE).change(pod, -1)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), same_team_left)]


def same_team_left(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """A deleted pod frees quota only for its own team."""
    if isinstance(old, PodInfo) and old.namespace == pod.namespace:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: TeamQuotaArgs, handle: Handle) -> TeamQuota:
    return TeamQuota(args, handle)


spec = PluginSpec("TeamQuota", new, args_type=TeamQuotaArgs)
