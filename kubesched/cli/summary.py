"""What a simulation found, as data: the text report and ``--format json`` both print it.

Sized for big clusters: nodes are summed per group (node pool, or instance type, and
zone) with the few most utilised nodes listed, and pods that failed the same way are
one group with a count, so a 5,000-node run with 300 identical replicas still reads
in a screen. The full per-node table is built only when asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..cluster.simulated import PodOutcome, Simulation, SimulationResult
from ..cluster.snapshot import ClusterSnapshot
from ..scheduler.binding_record import PermitWait
from .pod_group_summary import PodGroupSummary, ignored_pod_groups, pod_group_summaries

__all__ = ["NodeUsage", "NodeGroup", "PodGroup", "RunSummary", "summarize", "POOL_LABELS", "ZONE_LABELS"]

# Labels naming a node's pool, most specific first (Karpenter, EKS, GKE, AKS), then its
# instance type when no pool label is set.
POOL_LABELS = ("karpenter.sh/nodepool", "eks.amazonaws.com/nodegroup", "cloud.google.com/gke-nodepool",
               "kubernetes.azure.com/agentpool", "agentpool", "node.kubernetes.io/instance-type",
               "beta.kubernetes.io/instance-type")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
TOP_NODES = 10


@dataclass(slots=True)
class NodeUsage:
    name: str
    pool: str
    zone: str
    cpu: tuple[int, int]  # requested, allocatable millicores
    memory: tuple[int, int]  # bytes
    pods: tuple[int, int]
    new: int  # pods the simulation placed here

    @property
    def utilisation(self) -> float:
        """The larger of the cpu and memory shares requested (what runs out first)."""
        return max(_share(*self.cpu), _share(*self.memory))


@dataclass(slots=True)
class NodeGroup:
    pool: str
    zone: str
    nodes: int = 0
    cpu: list[int] = field(default_factory=lambda: [0, 0])
    memory: list[int] = field(default_factory=lambda: [0, 0])
    pods: list[int] = field(default_factory=lambda: [0, 0])
    new: int = 0


@dataclass(slots=True)
class PodGroup:
    """Pods with the same message (unschedulable, gated) or scheduler name (left alone)."""

    reason: str
    pods: list[str]


@dataclass(slots=True)
class RunSummary:
    source: str
    tie_break: str
    seed: int | None
    result: SimulationResult
    nodes: list[NodeUsage]
    groups: list[NodeGroup]
    unschedulable: list[PodGroup]
    gated: list[PodGroup]
    other_schedulers: list[PodGroup]
    snapshot: ClusterSnapshot
    permit: list[PodGroup] = field(default_factory=list)  # pods that waited at Permit, by how their last wait went
    # Workload-aware scheduling (GenericWorkload): each PodGroup with its members and condition
    # (``pod_group_summary.py``); the snapshot's PodGroups left aside with the gate off.
    pod_groups: list[PodGroupSummary] = field(default_factory=list)
    ignored_pod_groups: int = 0

    @property
    def top_nodes(self) -> list[NodeUsage]:
        return sorted(self.nodes, key=lambda n: (-n.utilisation, n.name))[:TOP_NODES]


def _share(used: int, total: int) -> float:
    return used / total if total else 0.0


def _first_label(labels: dict[str, str], keys: Iterable[str]) -> str:
    return next((labels[k] for k in keys if labels.get(k)), "-")


def _by_reason(pairs: Iterable[tuple[str, str]]) -> list[PodGroup]:
    """Groups of pods by reason, the biggest first (then by reason)."""
    groups: dict[str, list[str]] = {}
    for pod, reason in pairs:
        groups.setdefault(reason, []).append(pod)
    return sorted((PodGroup(reason, pods) for reason, pods in groups.items()), key=lambda g: (-len(g.pods), g.reason))


def _outcome_pairs(outcomes: Iterable[PodOutcome]) -> Iterable[tuple[str, str]]:
    return ((o.pod, o.message) for o in outcomes)


def summarize(sim: Simulation, result: SimulationResult, source: str, tie_break: str, seed: int | None) -> RunSummary:
    labels = {node.name: node.labels for node in sim.snapshot.nodes}
    placed: dict[str, int] = {}
    for _, node in result.placements:
        placed[node] = placed.get(node, 0) + 1
    nodes: list[NodeUsage] = []
    groups: dict[tuple[str, str], NodeGroup] = {}
    for usage in sim.node_usage():
        name = str(usage["node"])
        node_labels = labels.get(name, {})
        row = NodeUsage(name, _first_label(node_labels, POOL_LABELS), _first_label(node_labels, ZONE_LABELS),
                        usage["cpu"], usage["memory"], usage["pods"], placed.get(name, 0))
        nodes.append(row)
        group = groups.setdefault((row.pool, row.zone), NodeGroup(row.pool, row.zone))
        group.nodes += 1
        for total, part in ((group.cpu, row.cpu), (group.memory, row.memory), (group.pods, row.pods)):
            total[0] += part[0]
            total[1] += part[1]
        group.new += row.new
    scheduler_of = {pod.key: pod.scheduler_name for pod in sim.snapshot.pending_pods}
    return RunSummary(
        source=source, tie_break=tie_break, seed=seed if tie_break == "random" else None, result=result,
        nodes=nodes, groups=sorted(groups.values(), key=lambda g: (g.pool, g.zone)),
        unschedulable=_by_reason(_outcome_pairs(result.unschedulable)),
        gated=_by_reason(_outcome_pairs(result.gated)),
        other_schedulers=_by_reason((key, scheduler_of.get(key, "")) for key in result.ignored_pods),
        snapshot=sim.snapshot,
        permit=_by_reason(permit_pairs(sim.scheduler.permit_log)),
        pod_groups=pod_group_summaries(sim, result),
        ignored_pod_groups=ignored_pod_groups(sim),
    )


def permit_pairs(log: Iterable[PermitWait]) -> list[tuple[str, str]]:
    """Each pod that waited at Permit with how its last wait went: the plugins it waited
    for and their reasons, then "allowed" or the rejection's message."""
    last: dict[str, PermitWait] = {}
    for wait in log:
        last.pop(wait.pod, None)
        last[wait.pod] = wait
    pairs = []
    for pod, wait in last.items():
        plugins = ", ".join(f"{p} ({r})" if r else p for p, r in sorted(wait.reasons.items()))
        ending = "allowed" if wait.outcome == "allowed" else f"rejected: {wait.message}"
        pairs.append((pod, f"waited for {plugins}; {ending}"))
    return pairs
