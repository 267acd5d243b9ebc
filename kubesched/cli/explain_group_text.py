"""A pod-group cycle as text, for ``--explain-pods`` on the terminal.

One block per group cycle, before the lines of the pods it tried::

    pod group ml/train (gang, minCount 4, within one topology.kubernetes.io/rack): cycle 4, 4 pod(s) tried in order: ml/train-3, ml/train-0, ml/train-1, ml/train-2
      placement rack-a (2 nodes): feasible, score 150 = NodeResourcesFit 100 + PodGroupPodsCount 50  <- chosen
      placement rack-b (2 nodes): infeasible: 1/4 pod(s) fit; the first that did not: ml/train-1: 0/2 nodes are available: ...
      result: bound to placement rack-a; PodGroupScheduled True (Scheduled)

The input is the ``podGroup`` record ``--explain`` writes (``scheduler/explain.py``), so
the two say the same. A cycle over many domains lists the chosen and the feasible
placements and sums up the infeasible ones by reason, with a few names each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["group_cycle_lines", "PLACEMENTS_SHOWN"]

PLACEMENTS_SHOWN = 8  # feasible placements listed one a line; the rest summed up
NAMES_SHOWN = 3


def _shape(record: Mapping[str, Any]) -> str:
    policy = record.get("policy")
    parts = []
    if policy == "gang":
        parts.append(f"gang, minCount {record.get('minCount')}")
    elif policy:
        parts.append(str(policy))
    for key in record.get("topologyKeys") or ():
        parts.append(f"within one {key}")
    return f" ({', '.join(parts)})" if parts else ""


def _score(placement: Mapping[str, Any]) -> str:
    if "score" not in placement:
        return ""
    scores = placement.get("scores") or {}
    terms = " + ".join(f"{plugin} {value}" for plugin, value in scores.items())
    return f", score {placement['score']}" + (f" = {terms}" if terms else "")


def _nodes(placement: Mapping[str, Any]) -> str:
    return f"{placement.get('nodes')} node{'s' if placement.get('nodes') != 1 else ''}"


def _name(placement: Mapping[str, Any]) -> str:
    return str(placement.get("name") or "(all nodes)")


def _placement_lines(record: Mapping[str, Any]) -> list[str]:
    placements: list[Mapping[str, Any]] = list(record.get("placements") or [])
    chosen = record.get("placement")
    lines: list[str] = []
    if len(placements) == 1 and not placements[0].get("name"):  # no topology constraint: the whole cluster
        only = placements[0]
        if not only.get("feasible"):
            lines.append(f"  on all {_nodes(only)}: infeasible: {only.get('reason') or 'infeasible'}")
        return lines
    feasible = [p for p in placements if p.get("feasible")]
    shown = feasible[:PLACEMENTS_SHOWN]
    if chosen is not None and all(p.get("name") != chosen for p in shown):
        shown += [p for p in feasible if p.get("name") == chosen]
    for p in shown:
        mark = "  <- chosen" if p.get("name") == chosen else ""
        lines.append(f"  placement {_name(p)} ({_nodes(p)}): feasible{_score(p)}{mark}")
    if len(shown) < len(feasible):
        lines.append(f"  and {len(feasible) - len(shown)} more feasible placement(s)")
    infeasible = [p for p in placements if not p.get("feasible")]
    if len(infeasible) <= PLACEMENTS_SHOWN:
        for p in infeasible:
            why = p.get("reason") or "infeasible"
            lines.append(f"  placement {_name(p)} ({_nodes(p)}): infeasible: {why}")
    else:  # many domains: one line per reason
        by_reason: dict[str, list[str]] = {}
        for p in infeasible:
            by_reason.setdefault(str(p.get("reason") or ""), []).append(_name(p))
        for why, names in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            example = ", ".join(names[:NAMES_SHOWN]) + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")
            lines.append(f"  {len(names)} placement(s) infeasible ({example}): {why or 'infeasible'}")
    tied = record.get("tiedPlacements") or []
    if len(tied) > 1:
        rule = ("picked at random (--tie-break random, seeded)" if record.get("tieBreak") == "random"
                else "the first in generation order taken (upstream picks at random; --tie-break random does too)")
        top = next((p.get("score") for p in placements if p.get("name") == tied[0]), None)
        lines.append(f"  {', '.join(tied)} tied at score {top}: {rule}")
    elif len(feasible) == 1 and len(placements) > 1:
        lines.append(f"  {_name(feasible[0])} is the only feasible placement: not scored")
    return lines


def _result(record: Mapping[str, Any]) -> str:
    condition = record.get("condition") or {}
    said = ""
    if condition:
        said = f"PodGroupScheduled {condition.get('status')} ({condition.get('reason')})"
        if condition.get("message"):
            said += f": {condition['message']}"
    status = str(record.get("status") or "")
    if not status:
        where = record.get("placement")
        head = f"bound to placement {where}" if where else "scheduled"
        return f"  result: {head}" + (f"; {said}" if said else "")
    head = f"not scheduled: {status}" + (f" ({record['reason']})" if record.get("reason") else "")
    if said and condition.get("message") and str(condition["message"]) in status:
        said = f"PodGroupScheduled {condition.get('status')} ({condition.get('reason')})"
    return f"  result: {head}" + (f"; {said}" if said else "")


def group_cycle_lines(record: Mapping[str, Any]) -> list[str]:
    """The lines of one pod-group cycle (``record``: the ``podGroup`` of an explain record)."""
    order = list(record.get("order") or [])
    lines = [f"pod group {record.get('group')}{_shape(record)}: cycle {record.get('cycle')}, "
             f"{len(order)} pod(s) tried in order: {', '.join(order)}"]
    if record.get("fromBackoff"):
        lines.append("  begun by a member popped from backoffQ while activeQ was empty (SchedulerPopFromBackoffQ): "
                     "a failed group retried before its backoff ended")
    lines.extend(_placement_lines(record))
    lines.append(_result(record))
    return lines
