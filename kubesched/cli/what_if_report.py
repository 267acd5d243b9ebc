"""The what-if part of ``simulate``'s report: each edit, then for a drain what ``kubectl
drain`` would refuse, which pods it deletes for good, which evicted pods found a node
elsewhere, which did not and why, and the PodDisruptionBudgets it would violate.
As text (after the summary) and as JSON (``whatIf`` of ``--format json``)."""

from __future__ import annotations

from typing import Any

from ..cluster.simulated import SimulationResult
from ..cluster.what_if import WhatIfRecord

__all__ = ["what_if_lines", "what_if_document", "drain_outcomes", "edit_lines", "refusal_lines"]

SHOWN = 20  # pods listed per part of the text report


def drain_outcomes(record: WhatIfRecord, result: SimulationResult) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(placed, not placed)``: evicted pods with the node they went to, or why none."""
    placed: list[tuple[str, str]] = []
    stuck: list[tuple[str, str]] = []
    for evicted in record.evicted:
        unmovable = record.unmovable.get(evicted.pod)
        if unmovable is not None:
            stuck.append((evicted.pod, f"cannot move: {unmovable}"))
            continue
        outcome = result.outcomes.get(evicted.pod)
        if outcome is not None and outcome.node:
            placed.append((evicted.pod, outcome.node))
        else:
            why = outcome.message if outcome is not None and outcome.message else "not scheduled (no profile took it)"
            stuck.append((evicted.pod, why))
    return placed, stuck


def refusal_lines(record: WhatIfRecord) -> list[str]:
    """kubectl drain's errors as it prints them (``cannot delete <what>: <pods>``)."""
    return [f"cannot delete {message}: {', '.join(pods)}" for message, pods in record.refused.items()]


def edit_lines(record: WhatIfRecord) -> list[str]:
    """What the edits did, before any scheduling (``capacity`` and ``compare``, whose reports
    do not follow evicted pods): the edits, and how many pods a drain sends back to the queue."""
    lines = ["What-if edits, applied before scheduling:"] + [f"  {edit}" for edit in record.edits]
    if record.drained_nodes:
        stayed = ", ".join(f"{count} {what}" for what, count in sorted(record.left_in_place.items()))
        lines.append(f"  {len(record.drained_nodes)} node(s) drained: {len(record.evicted)} pod(s) pending again"
                     + (f" (left in place: {stayed})" if stayed else "")
                     + "; `simulate` with the same edits says where each goes")
        lines += [f"  kubectl drain would refuse: {line}" for line in refusal_lines(record)]
    return lines


def what_if_lines(record: WhatIfRecord, result: SimulationResult) -> list[str]:
    lines = ["What-if edits, applied before scheduling:"]
    lines += [f"  {edit}" for edit in record.edits]
    if record.added:
        lines.append("  added: " + ", ".join(f"{count} {kind}" for kind, count in sorted(record.added.items())))
    if record.drained_nodes:
        stayed = ", ".join(f"{count} {what}" for what, count in sorted(record.left_in_place.items()))
        lines.append(f"Drained {len(record.drained_nodes)} node(s): {len(record.evicted)} pod(s) evicted"
                     + (f" (left in place, as kubectl drain leaves them: {stayed})" if stayed else ""))
        refusals = refusal_lines(record)
        if refusals:
            lines.append("  kubectl drain would refuse this drain (the pods stay; the rest is simulated past them):")
            lines += [f"    {line}" for line in refusals]
        for why, pods in record.deleted.items():
            lines.append(f"  {len(pods)} deleted, not placed: {why}: " + _some(pods))
        placed, stuck = drain_outcomes(record, result)
        lines.append(f"  {len(placed)} evicted pod(s) fit elsewhere:")
        lines += [f"    {pod} -> {node}" for pod, node in placed[:SHOWN]]
        if len(placed) > SHOWN:
            lines.append(f"    and {len(placed) - SHOWN} more")
        if stuck:
            lines.append(f"  {len(stuck)} evicted pod(s) fit nowhere:")
            lines += [f"    {pod}: {why}" for pod, why in stuck[:SHOWN]]
            if len(stuck) > SHOWN:
                lines.append(f"    and {len(stuck) - SHOWN} more")
        flagged = [e for e in record.evicted if e.flags]
        for evicted in flagged[:SHOWN]:
            lines.append(f"  {evicted.pod}: " + "; ".join(evicted.flags))
        if record.kept_off:
            lines.append(f"  {len(record.kept_off)} pod(s) tolerate the cordon: kept off the drained nodes by a node "
                         "affinity term (metadata.name NotIn): " + _some(record.kept_off))
        violated = [b for b in record.budgets if b.violated]
        if violated:
            lines.append(f"  {len(violated)} PodDisruptionBudget(s) the drain would violate (kubectl drain waits "
                         "on them until replacements are ready):")
            lines += [f"    {b.budget}: allows {b.allowed} disruption(s), the drain evicts {len(b.evicted)}"
                      for b in violated]
        elif record.budgets:
            lines.append(f"  no PodDisruptionBudget violated ({len(record.budgets)} cover evicted pods)")
    return lines


def _some(pods: list[str]) -> str:
    return ", ".join(pods[:SHOWN]) + (f" and {len(pods) - SHOWN} more" if len(pods) > SHOWN else "")


def what_if_document(record: WhatIfRecord, result: SimulationResult) -> dict[str, Any]:
    placed, stuck = drain_outcomes(record, result)
    flags = {e.pod: e.flags for e in record.evicted if e.flags}
    return {
        "edits": record.edits,
        "added": dict(sorted(record.added.items())),
        "removed": record.removed,
        "drainedNodes": record.drained_nodes,
        "leftInPlace": dict(sorted(record.left_in_place.items())),
        "evicted": [{"pod": e.pod, "node": e.node} for e in record.evicted],
        "placedElsewhere": [{"pod": pod, "node": node} for pod, node in placed],
        "notPlaced": [{"pod": pod, "message": why, "flags": flags.get(pod, [])} for pod, why in stuck],
        "flagged": [{"pod": pod, "flags": f} for pod, f in flags.items()],
        "refused": [{"message": f"cannot delete {message}", "pods": pods} for message, pods in record.refused.items()],
        "warnings": [{"message": message, "pods": pods} for message, pods in record.warnings.items()],
        "deleted": [{"why": why, "pods": pods} for why, pods in record.deleted.items()],
        "unmovable": [{"pod": pod, "why": why} for pod, why in record.unmovable.items()],
        "keptOff": record.kept_off,
        "budgets": [{"budget": b.budget, "disruptionsAllowed": b.allowed, "evicted": b.evicted, "violated": b.violated}
                    for b in record.budgets],
    }
