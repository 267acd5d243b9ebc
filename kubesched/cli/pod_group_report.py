"""Pod groups in ``simulate``'s report: the text section, and the data ``-o json`` and the
HTML page carry (``pod_group_summary.py`` makes the rows).

The text is a table of the groups (policy, topology constraint, pods placed and pending,
the domain the group landed in, its ``PodGroupScheduled`` condition), then the gangs left
wholly unbound, called out with the condition's message (why not one pod of them runs),
then the other groups whose condition is not True. A run with a thousand gangs shows
the groups that did not make it first and stops at ``GROUPS_SHOWN`` rows; ``-o json``
lists every group.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, JustifyMethod
from rich.table import Table

from .pod_group_summary import PodGroupSummary

__all__ = ["pod_group_lines", "pod_group_table", "pod_groups_document", "pod_groups_page_data", "render_pod_groups",
           "GROUPS_SHOWN"]

GROUPS_SHOWN = 20
EXAMPLES = 3


def _print(console: Console, text: str) -> None:
    console.print(text, highlight=False, markup=False)


def _rank(group: PodGroupSummary) -> int:
    """Display order: gangs left with nothing, other groups not scheduled, the rest."""
    if group.wholly_unbound:
        return 0
    if group.condition is not None and group.condition.status != "True" or group.pending:
        return 1
    return 2


def _condition_cell(group: PodGroupSummary) -> str:
    if group.condition is None:
        return "-" if group.policy != "missing" else "- (pods wait at PreEnqueue)"
    return f"{group.condition.status} ({group.condition.reason})"


def _domain_cell(group: PodGroupSummary) -> str:
    if group.topology_keys:
        return ", ".join(group.domains) or "-"
    return "-"


def _examples(pods: list[str]) -> str:
    shown = ", ".join(pods[:EXAMPLES])
    return f"{shown} and {len(pods) - EXAMPLES} more" if len(pods) > EXAMPLES else shown


def _headline(groups: list[PodGroupSummary]) -> str:
    scheduled = sum(1 for g in groups if g.condition is not None and g.condition.status == "True" and not g.pending)
    unbound = sum(1 for g in groups if g.wholly_unbound)
    parts = [f"{scheduled} with every pod bound"]
    if unbound:
        parts.append(f"{unbound} gang(s) left wholly unbound")
    partial = len(groups) - scheduled - unbound
    if partial:
        parts.append(f"{partial} with pods pending")
    return f"Pod groups ({len(groups)}): {', '.join(parts)}"


def pod_group_table(groups: list[PodGroupSummary]) -> Table:
    """The groups, those not scheduled first, at most ``GROUPS_SHOWN``."""
    shown = sorted(groups, key=_rank)[:GROUPS_SHOWN]
    title = _headline(groups)
    if len(shown) < len(groups):
        title += f" ({len(shown)} shown, those not scheduled first; -o json lists every group)"
    table = Table(title=title, title_justify="left")
    before = any(g.bound_before for g in groups)
    columns: list[tuple[str, JustifyMethod]] = [
        ("GROUP", "left"), ("POLICY", "left"), ("TOPOLOGY", "left"), ("PLACED", "right"),
        *((("BOUND BEFORE", "right"),) if before else ()), ("PENDING", "right"), ("NODES", "right"),
        ("DOMAIN", "left"), ("PodGroupScheduled", "left")]
    for name, justify in columns:
        table.add_column(name, justify=justify)
    for g in shown:
        cells = [g.key, g.policy_text, ", ".join(g.topology_keys) or "-", f"{len(g.placed)}/{len(g.members)}",
                 *((str(len(g.bound_before)),) if before else ()), str(len(g.pending)), str(g.nodes),
                 _domain_cell(g), _condition_cell(g)]
        table.add_row(*cells)
    return table


def pod_group_lines(groups: list[PodGroupSummary], ignored: int) -> list[str]:
    """What the table cannot hold: the gangs left wholly unbound and why, the other groups
    not scheduled, and PodGroups left unread because GenericWorkload is off."""
    lines: list[str] = []
    if ignored:
        lines.append(f"{ignored} PodGroup(s) in the snapshot were not read: GenericWorkload is off, so their pods "
                     "were scheduled one by one, as upstream does with the gate off (--feature-gates "
                     "GenericWorkload=true,GangScheduling=true[,TopologyAwareWorkloadScheduling=true] schedules them "
                     "as groups)")
    unbound = [g for g in groups if g.wholly_unbound]
    if unbound:
        lines.append(f"Gangs left wholly unbound ({len(unbound)}): all or nothing, and not one of their pods is bound:")
        lines.extend(_why(g) for g in unbound)
    others = [g for g in groups if not g.wholly_unbound and _rank(g) == 1]
    if others:
        lines.append(f"Pod groups with pods pending ({len(others)}):")
        lines.extend(_why(g) for g in others)
    return lines


def _why(g: PodGroupSummary) -> str:
    pending = f"{len(g.pending)} pod(s) pending: {_examples(g.pending)}"
    if g.condition is not None and g.condition.status != "True":
        why = f"{g.condition.reason}: {g.condition.message}" if g.condition.message else g.condition.reason
    elif g.policy == "missing":
        why = "no PodGroup of that name in the snapshot: its pods wait at PreEnqueue until one exists"
    elif g.cycles == 0:
        why = "never tried as a group (its pods are gated: see the gated pods below)"
    else:
        why = "the group was scheduled, but these pods did not fit"
    if g.pod_message and g.pod_message not in why:
        why += f"; its pods: {g.pod_message}"
    return f"  {g.key} ({g.policy_text}; {pending}): {why}"


def render_pod_groups(console: Console, groups: list[PodGroupSummary], ignored: int) -> None:
    if groups:
        console.print(pod_group_table(groups))
    for line in pod_group_lines(groups, ignored):
        _print(console, line)


def pod_groups_document(groups: list[PodGroupSummary]) -> list[dict[str, Any]]:
    """Every group as JSON-ready data, in the snapshot's order."""
    out = []
    for g in groups:
        condition = ({"status": g.condition.status, "reason": g.condition.reason, "message": g.condition.message}
                     if g.condition is not None else None)
        out.append({
            "name": g.key, "policy": g.policy, "minCount": g.min_count, "topologyKeys": list(g.topology_keys),
            "members": len(g.members), "placed": dict(g.placed), "boundBefore": list(g.bound_before),
            "pending": list(g.pending), "podMessage": g.pod_message, "nodes": g.nodes, "domains": list(g.domains), "condition": condition,
            "cycles": g.cycles, "placement": g.placement, "backoffRetries": g.backoff_retries,
            "whollyUnbound": g.wholly_unbound,
        })
    return out


def pod_groups_page_data(groups: list[PodGroupSummary], pod_index: dict[str, int]) -> list[dict[str, Any]]:
    """The groups for the HTML page, those not scheduled first: counts rather than pod
    names (the page's pod list has them), and ``pods``, the indices of the members in
    that list, so that a group's pods can be listed with one click."""
    out = []
    for g in sorted(groups, key=_rank):
        condition = [g.condition.status, g.condition.reason, g.condition.message] if g.condition is not None else None
        out.append({
            "name": g.key, "policy": g.policy_text, "topology": ", ".join(g.topology_keys), "placed": len(g.placed),
            "boundBefore": len(g.bound_before), "members": len(g.members), "pending": len(g.pending),
            "nodes": g.nodes, "domains": g.domains, "condition": condition, "podMessage": g.pod_message,
            "cycles": g.cycles, "placement": g.placement, "retries": g.backoff_retries, "unbound": g.wholly_unbound,
            "pods": [pod_index[k] for k in (*g.placed, *g.pending) if k in pod_index],
        })
    return out
