"""``--explain-pods`` / ``--explain-selector`` without ``--explain FILE``: the answer on the
terminal. For each matching pod: where it went, or why it is pending (the filter
verdicts grouped by reason, with node counts) and whether preemption would help (the
node it would be nominated to and the pods it would evict, or why not). Pods tried in a
pod-group cycle come after the cycle's own block (``explain_group_text.py``): the group,
its pods in the order tried, the placements and their scores, and how the cycle ended."""

from __future__ import annotations

from .decisions import Decision
from .explain_group_text import group_cycle_lines

__all__ = ["explanation_lines"]

# Fields other parts add to an attempt that answer "why pending" (the report page shows them all).
TERMINAL_EXTRAS = ("permit", "binding", "devices", "allocated_devices")


def _preemption(decision: Decision) -> str:
    p = decision.preemption
    if p is None:
        # A PostFilter that refused before trying (DefaultPreemption and a pod-group member)
        # leaves only its words in the FitError's message.
        _, said, refusal = decision.message.rpartition(", preemption: ")
        if said and refusal:
            return f"preemption would not help: {refusal}"
        return "preemption: not tried (no PostFilter plugin ran, or the pod may not preempt)"
    if p.get("nominatedNode"):
        victims = p.get("victims") or []
        shown = ", ".join(victims[:5]) + (f" and {len(victims) - 5} more" if len(victims) > 5 else "")
        return (f"preemption would help: node {p['nominatedNode']} after evicting {len(victims)} pod(s)"
                + (f": {shown}" if shown else ""))
    return f"preemption would not help: {p.get('message') or 'no node where evicting lower-priority pods makes room'}"


def explanation_lines(decisions: list[Decision], outcomes_node: dict[str, str | None],
                      never_tried: dict[str, str] | None = None) -> list[str]:
    """One block per pod; ``outcomes_node``: where each pod finally is (after preemption);
    ``never_tried``: matching pods no attempt was made for, and why (gated, another scheduler's)."""
    if not decisions and not never_tried:
        return ["No pending pod matched --explain-pods / --explain-selector."]
    lines = [f"{pod}: pending, never attempted: {why}" for pod, why in (never_tried or {}).items()]
    # A pod-group cycle is said once, before the pods it tried (in the order tried).
    cycles: dict[tuple[str, int], list[Decision]] = {}
    for d in decisions:
        key = _cycle_key(d)
        if key is not None:
            cycles.setdefault(key, []).append(d)
    said: set[tuple[str, int]] = set()
    for d in decisions:
        key = _cycle_key(d)
        if key is None:
            lines.extend(_pod_lines(d, outcomes_node))
        elif key not in said:
            said.add(key)
            record = d.extra["podGroup"]
            lines.extend(group_cycle_lines(record))
            order = {pod: i for i, pod in enumerate(record.get("order") or [])}
            for member in sorted(cycles[key], key=lambda m: order.get(m.pod, len(order))):
                lines.extend(_pod_lines(member, outcomes_node))
    return lines


def _cycle_key(d: Decision) -> tuple[str, int] | None:
    record = d.extra.get("podGroup")
    if not isinstance(record, dict):
        return None
    return str(record.get("group")), int(record.get("cycle") or 0)


def _pod_lines(d: Decision, outcomes_node: dict[str, str | None]) -> list[str]:
    """Where one pod went, or why it is pending."""
    lines: list[str] = []
    final = outcomes_node.get(d.pod)
    if d.node and final:
        lines.append(f"{d.pod}: scheduled on {final} (attempt {d.attempt}, {d.feasible} of {d.evaluated} "
                     "evaluated node(s) feasible)")
        if d.scores:
            best = d.scores[0]
            lines.append(f"  best score {best.total} on {best.node}; chosen {d.node}")
        if d.preemption is not None and d.preemption.get("nominatedNode"):
            lines.append(f"  an earlier attempt found no node; {_preemption(d).replace('would help', 'helped')}")
        chosen = d.extra.get("binding")
        if isinstance(chosen, dict):
            lines.extend(_permit_lines(chosen))
            devices = chosen.get("devices")  # DRA: the devices its claims got
            for device in devices if isinstance(devices, list) else []:
                lines.append(f"  device {device}")
        return lines
    binding = d.extra.get("binding")
    if d.node and isinstance(binding, dict) and binding.get("result") in ("unschedulable", "error"):
        lines.append(f"{d.pod}: pending after {d.attempt} attempt(s): node {d.node} was chosen, then "
                     f"{binding.get('stage')} failed: {binding.get('message')}")
        lines.extend(_permit_lines(binding))
        return lines
    lines.append(f"{d.pod}: pending after {d.attempt} attempt(s): {d.message}")
    if d.pre_filter is not None:
        lines.append(f"  PreFilter {d.pre_filter.plugin}: {'; '.join(d.pre_filter.reasons)}")
    for group in d.filters:
        plugin = group.plugin or "extender"
        examples = f" (e.g. {', '.join(group.nodes)})" if group.nodes else ""
        lines.append(f"  {group.count} node(s): {plugin}: {'; '.join(group.reasons) or group.code}{examples}")
    lines.append(f"  {_preemption(d)}")
    for name, value in d.extra.items():
        if name == "binding" and isinstance(value, dict):
            lines.extend(_permit_lines(value))
        elif name in TERMINAL_EXTRAS:
            lines.append(f"  {name}: {value}")
    return lines


def _permit_lines(binding: dict[str, object]) -> list[str]:
    """A Permit wait, as one line: the plugins and their reasons, how long, how it ended."""
    permit = binding.get("permit")
    if not isinstance(permit, dict) or not permit.get("waits"):
        return []
    waits = permit["waits"] if isinstance(permit["waits"], list) else []
    plugins = ", ".join(f"{w.get('plugin')} ({w.get('reason')}, timeout {w.get('timeout')})" for w in waits
                        if isinstance(w, dict))
    ending = permit.get("outcome", "still waiting")
    return [f"  Permit: waited {permit.get('waited', '?')}s for {plugins}: {ending}"]
