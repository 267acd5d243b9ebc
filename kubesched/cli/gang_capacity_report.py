"""``kubesched capacity`` on a pod-group shape, as text: cluster-capacity's report with a
whole group for a replica.

For each shape: what a group is (policy, topology constraint, its pods and what each
asks for), "The cluster can schedule N more group(s) ...", then why not one more: the
termination (the PodGroupScheduled condition's message for the group that did not fit),
each placement it was tried in and why the group did not fit there, and the topology
domains the counted groups landed in. The per-node distribution table is
``capacity_cmd``'s, with a column per shape.
"""

from __future__ import annotations

from ..planning.gang_capacity import GangCapacity
from .report import format_bytes, format_cpu

__all__ = ["gang_requirement_lines", "gang_count_line", "gang_termination_lines", "PLACEMENTS_SHOWN"]

PLACEMENTS_SHOWN = 10  # placements listed one a line; the rest summed up by reason


def _shape(gang: GangCapacity) -> str:
    return f"gang, minCount {gang.min_count}" if gang.policy == "gang" else gang.policy


def gang_requirement_lines(gang: GangCapacity) -> list[str]:
    lines = [f"{gang.name} pod group ({gang.title}, {gang.source}):", f"    - policy: {_shape(gang)}"]
    for key in gang.topology_keys:
        lines.append(f"    - topology: each group within one {key}")
    lines.append(f"    - pods per group: {gang.pods_per_group}")
    for member in gang.members:
        req = member.requirements
        asks = [f"CPU {format_cpu(req.cpu_millis)}", f"Memory {format_bytes(req.memory_bytes)}"]
        asks += [f"{name} {amount}" for name, amount in req.extended.items()]
        if req.node_selector:
            asks.append(f"NodeSelector {','.join(f'{k}={v}' for k, v in req.node_selector.items())}")
        if req.priority:
            asks.append(f"Priority {req.priority}")
        lines.append(f"        - {member.count} x {member.title}: {', '.join(asks)}")
    return lines + [""]


def gang_count_line(gang: GangCapacity) -> str:
    whole = "all or nothing" if gang.policy == "gang" else "each counted only when all its pods are bound"
    return (f"The cluster can schedule {gang.groups} more group(s) of the pod group {gang.name} "
            f"({gang.pods_per_group} pod(s) each, {whole}).")


def gang_termination_lines(gang: GangCapacity, prefix: str) -> list[str]:
    lines = [f"{prefix}Termination reason: {gang.termination}"]
    infeasible = [p for p in gang.placements if not p.feasible]
    if gang.placements:
        lines.append(f"{prefix}Placements the next group was tried in ({len(infeasible)} of {len(gang.placements)} "
                     "infeasible):")
        shown = gang.placements[:PLACEMENTS_SHOWN]
        for p in shown:
            name = p.name or "all nodes"
            verdict = f"infeasible: {p.reason}" if not p.feasible else "feasible" + (
                f", score {p.score}" if p.score is not None else "")
            lines.append(f"    - {name} ({p.nodes} node(s)): {verdict}")
        rest = gang.placements[PLACEMENTS_SHOWN:]
        if rest:
            by_reason: dict[str, int] = {}
            for p in rest:
                by_reason[p.reason or "feasible"] = by_reason.get(p.reason or "feasible", 0) + 1
            for reason, count in sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0])):
                lines.append(f"    - {count} more: {reason}")
    elif gang.pod_message:
        lines.append(f"{prefix}Its pods: {gang.pod_message}")
    if gang.withdrawn_bound:
        lines.append(f"{prefix}{gang.withdrawn_bound} of its pods were bound; withdrawn with it, as only whole "
                     "groups are counted")
    if gang.per_domain:
        key = gang.topology_keys[0] if gang.topology_keys else "domain"
        lines.append(f"{prefix}Groups per {key}: " + ", ".join(f"{d} {n}" for d, n in gang.per_domain.items()))
    lines.extend(f"{prefix}note: {note}" for note in gang.notes)
    return lines
