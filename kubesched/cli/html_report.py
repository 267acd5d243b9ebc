"""``simulate --report FILE.html``: one self-contained page of every decision.

The page needs no network: the data is one JSON document inside it and a small script
renders it. Sized for 5,000 nodes and 10,000 pending pods (a few MB, opening in
seconds): the pod list is paginated and filtered in the browser, a pod's details
(filter verdicts grouped by reason, the per-plugin weighted scores of the best nodes
against the chosen one, preemption, Permit/binding outcomes and allocated devices when
the attempt records carry them) are drawn only when it is opened, and identical details
(the same failure on many replicas) are stored once.

Layout of the data (``DATA`` in the page; lists of lists to keep it small):
``pods``: ``[namespace, name, status, node, attempts, message index, detail index]``,
``messages``: the distinct messages, ``details``: the distinct decision records,
``nodes`` and ``scorePlugins``: node names and score plugin lists the others refer to by index.
"""

from __future__ import annotations

import html
from importlib import resources
from typing import Any

import orjson

from ..cluster.simulated import SimulationResult
from ..cluster.what_if import WhatIfRecord
from .decisions import Decision
from .pod_group_report import pod_groups_page_data
from .report import summary_line
from .summary import RunSummary
from .what_if_report import what_if_document

__all__ = ["html_report", "report_data", "STATUSES"]

STATUSES = ("scheduled", "unschedulable", "gated", "preempted", "other scheduler")


def _status(result: SimulationResult, key: str) -> int:
    outcome = result.outcomes.get(key)
    if outcome is None:
        return 4
    if outcome.node:
        return 0
    if outcome.gated:
        return 2
    if outcome.preempted_by:
        return 3
    return 1


class _Table:
    """Distinct strings (node names, plugin lists) stored once, referred to by index."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def __call__(self, value: Any) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.index)
        return found

    def values(self) -> list[Any]:
        return list(self.index)


def _detail(decision: Decision | None, preempted: list[list[str]], victim_of: str | None, nodes: _Table,
            plugin_lists: _Table, cycles: _Table | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if decision is not None:
        out["a"] = decision.attempt
        out["p"] = decision.profile
        out["ev"] = decision.evaluated
        out["fe"] = decision.feasible
        if decision.filters:
            out["f"] = [[g.plugin, g.code, g.reasons, g.count, g.nodes] for g in decision.filters]
        if decision.pre_filter is not None:
            g = decision.pre_filter
            out["pf"] = [g.plugin, g.code, g.reasons, g.count]
        if decision.scores:
            out["sp"] = plugin_lists(tuple(decision.score_plugins))
            out["s"] = [[nodes(row.node), row.total, row.by_plugin] for row in decision.scores]
            out["c"] = nodes(decision.node) if decision.node else -1
        if decision.preemption is not None:
            out["pre"] = decision.preemption
        if decision.extra:
            out["x"] = {name: _jsonable(value) for name, value in decision.extra.items()}
            cycle = out["x"].pop("podGroup", None)
            if cycle is not None and cycles is not None:  # a pod-group cycle: stored once for all its pods
                out["g"] = cycles(orjson.dumps(cycle, option=orjson.OPT_SORT_KEYS))
            binding = out["x"].pop("binding", None)
            if isinstance(binding, dict):  # as --explain names them: the Permit record and the rest
                permit = binding.get("permit")
                if permit is not None and permit != {"code": "Success"}:  # a plain Success says nothing new
                    out["x"]["permit"] = permit
                if binding.get("devices"):  # DRA's allocations, when the binding cycle records them
                    out["x"]["devices"] = binding["devices"]
                # (DRA's per-claim "allocations" repeat the devices' lines at length: left to --explain.)
                rest = {k: v for k, v in binding.items() if k not in ("permit", "devices", "allocations")}
                if rest and rest != {"result": "bound"}:  # a plain binding says nothing the status does not
                    out["x"]["binding"] = rest
    if preempted:
        out["v"] = preempted  # [victim, node] this pod's preemption evicted in the run
    if victim_of:
        out["vo"] = victim_of
    return out


def _jsonable(value: Any) -> Any:
    """Extra fields as JSON: dataclasses and the like through their ``__dict__``/slots, else ``str``."""
    try:
        return orjson.loads(orjson.dumps(value, default=_fallback))
    except TypeError:
        return str(value)


def _fallback(value: Any) -> Any:
    slots = getattr(type(value), "__slots__", None)
    if slots:
        return {name: getattr(value, name) for name in slots if hasattr(value, name)}
    if hasattr(value, "__dict__"):
        return vars(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def report_data(summary: RunSummary, decisions: dict[str, Decision], what_if: WhatIfRecord | None = None,
                listed: dict[str, int] | None = None, scale_up: dict[str, Any] | None = None,
                scale_down: dict[str, Any] | None = None) -> dict[str, Any]:
    """The page's data as JSON-ready lists."""
    result = summary.result
    messages: dict[str, int] = {"": 0}
    details: dict[bytes, int] = {}
    by_preemptor: dict[str, list[list[str]]] = {}
    victim_of: dict[str, str] = {}
    for victim, preemptor, node in result.preemptions:
        by_preemptor.setdefault(preemptor, []).append([victim, node])
        victim_of[victim] = preemptor
    pods: list[list[Any]] = []
    nodes, plugin_lists, cycles = _Table(), _Table(), _Table()
    keys = list(result.outcomes) + [k for k in result.ignored_pods if k not in result.outcomes]
    for key in keys:
        outcome = result.outcomes.get(key)
        namespace, _, name = key.partition("/")
        status = _status(result, key)
        message = outcome.message if outcome is not None and status != 0 else ""
        if status == 3 and outcome is not None and outcome.preempted_by:
            message = message or f"preempted by {outcome.preempted_by}"
        message_index = messages.setdefault(message, len(messages))
        detail = _detail(decisions.get(key), by_preemptor.get(key, []), victim_of.get(key), nodes, plugin_lists, cycles)
        encoded = orjson.dumps(detail, option=orjson.OPT_SORT_KEYS)
        detail_index = details.setdefault(encoded, len(details))
        pods.append([namespace, name, status, nodes(outcome.node) if outcome is not None and outcome.node else -1,
                     outcome.attempts if outcome is not None else 0, message_index, detail_index])
    groups = [[g.pool, g.zone, g.nodes, *g.cpu, *g.memory, *g.pods, g.new] for g in summary.groups]
    top = [[n.name, n.pool, n.zone, *n.cpu, *n.memory, *n.pods, n.new] for n in summary.top_nodes]
    snap = summary.snapshot
    return {
        "source": summary.source,
        "line": summary_line(summary),
        "counts": {"pending": len(result.outcomes), "scheduled": len(result.scheduled),
                   "unschedulable": len(result.unschedulable), "gated": len(result.gated),
                   "preempted": sum(1 for o in result.outcomes.values() if o.preempted_by),
                   "otherSchedulers": len(result.ignored_pods), "nodes": len(summary.nodes),
                   "attempts": result.attempts},
        "statuses": list(STATUSES),
        "groups": groups,
        "top": top,
        "reasons": [[g.reason, len(g.pods)] for g in summary.unschedulable],
        "preemptions": [list(p) for p in result.preemptions],
        "notes": [str(w) for w in snap.warnings] + [
            f"{len(v)} pending pod(s) need {k}, not modelled: not scheduled" for k, v in sorted(snap.unmodelled.items())],
        "whatIf": what_if_document(what_if, result) if what_if is not None else None,
        "scaleUp": scale_up,  # simulate --scale-up's document (scale_up_report.py), or None
        "scaleDown": scale_down,  # simulate --scale-down's document (planning/scale_down_report.py), or None
        # GenericWorkload's pod groups (pod_group_report.py), and the snapshot's PodGroups left unread with it off
        "podGroups": pod_groups_page_data(summary.pod_groups, {key: i for i, key in enumerate(keys)}),
        "podGroupsIgnored": summary.ignored_pod_groups,
        "groupRetries": [[group, count] for group, count in sorted(result.group_backoff_retries.items())],
        "groupCycles": [orjson.loads(c) for c in cycles.values()],  # the pod-group cycles details refer to ("g")
        "listed": listed or {},
        "messages": list(messages),
        "nodes": nodes.values(),
        "scorePlugins": [list(p) for p in plugin_lists.values()],
        "details": [orjson.loads(d) for d in details],
        "pods": pods,
    }


def _asset(name: str) -> str:
    return resources.files("kubesched.cli").joinpath("report_assets", name).read_text(encoding="utf-8")


def html_report(summary: RunSummary, decisions: dict[str, Decision], what_if: WhatIfRecord | None = None,
                listed: dict[str, int] | None = None, scale_up: dict[str, Any] | None = None,
                scale_down: dict[str, Any] | None = None) -> bytes:
    """The page, as bytes to write."""
    data = orjson.dumps(report_data(summary, decisions, what_if, listed, scale_up, scale_down)).replace(b"</", b"<\\/")
    title = html.escape(f"kubesched simulate: {summary.source}")
    head = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>'
            f"<style>{_asset('report.css')}</style></head>\n<body>\n")
    body = _asset("report_body.html").replace("{{title}}", title)
    return (head + body + '<script id="data" type="application/json">').encode() + data + (
        f"</script>\n<script>{_asset('report.js')}</script>\n</body></html>\n").encode()
