"""An attempt as a JSON record, in the shape of the conformance corpus's ``expected`` results."""

from __future__ import annotations

from typing import Any

from ..framework.signing import signature_digest
from ..framework.status import Status
from .fit_error import Diagnosis, FitError
from .preemption import post_filter_record
from .algorithm import Walk
from .attempt import PlacementTrial, PodGroupCycleRecord
from .scheduler import Attempt

__all__ = ["attempt_record", "pod_group_record", "walk_record"]


def _status(status: Status) -> dict[str, Any]:
    return {"plugin": status.plugin, "code": status.code.label, "reasons": list(status.reasons)}


def _filtered(diagnosis: Diagnosis | None, names: list[str], num_nodes_rows: list[int]) -> dict[str, Any]:
    if diagnosis is None:
        return {}
    out = {name: _status(s) for name, s in diagnosis.node_statuses(names).items()}
    if diagnosis.absent_status is not None:
        for row in num_nodes_rows:
            name = names[row]
            if name not in out:
                out[name] = _status(diagnosis.absent_status)
    return dict(sorted(out.items()))


def walk_record(walk: Walk) -> dict[str, Any]:
    """How the cycle looked for nodes: the start index it began at, how far it moved it
    (``evaluated``; 0 when a hint or the nominated node was taken), the feasible nodes it
    kept, and OpportunisticBatching's hint ("used", "not-used" or "none") and signature."""
    out: dict[str, Any] = {"start": walk.start, "evaluated": walk.advanced, "feasibleFound": walk.feasible_found,
                           "hint": walk.hint}
    if walk.hint_node:
        out["hintNode"] = walk.hint_node
    if walk.nominated_node:
        out["nominatedNode"] = walk.nominated_node
    signed = walk.signature() if walk.signature is not None else None
    if signed is not None:
        out["signature"] = signature_digest(signed)
    return out


def pod_group_record(cycle: PodGroupCycleRecord) -> dict[str, Any]:
    """The pod-group cycle an attempt was part of: the group, the scheduling cycle it was
    popped in, its shape (policy, minCount, topology keys), its pods in the order tried, the
    placements tried (name, nodes, feasible, the total and per-plugin scores when scored,
    why the group did not fit an infeasible one), the one bound and the placements it tied
    with (and how the tie was broken), why the group failed (and, with no placements, how
    many of its pods fit and the first that did not), and the PodGroupScheduled condition
    the cycle called for."""
    out: dict[str, Any] = {"group": cycle.group, "cycle": cycle.cycle, "order": list(cycle.order)}
    if cycle.policy:
        out["policy"] = cycle.policy
        if cycle.min_count is not None:
            out["minCount"] = cycle.min_count
        if cycle.topology_keys:
            out["topologyKeys"] = list(cycle.topology_keys)
    if cycle.placements:
        out["placements"] = [_placement_trial(t) for t in cycle.placements]
        out["placement"] = cycle.placement
        if cycle.tied:
            out["tiedPlacements"] = list(cycle.tied)
            out["tieBreak"] = cycle.tie_break
    if cycle.from_backoff:
        out["fromBackoff"] = True
    if cycle.status:
        out["status"] = cycle.status
    if cycle.reason:
        out["reason"] = cycle.reason
    if cycle.condition is not None:
        status, reason, message = cycle.condition
        out["condition"] = {"status": status, "reason": reason, "message": message}
    return out


def _placement_trial(trial: PlacementTrial) -> dict[str, Any]:
    out: dict[str, Any] = {"name": trial.name, "nodes": trial.nodes, "feasible": trial.feasible}
    if trial.score is not None:
        out["score"] = trial.score
    if trial.plugin_scores:
        out["scores"] = dict(trial.plugin_scores)
    if trial.reason:
        out["reason"] = trial.reason
    return out


def attempt_record(attempt: Attempt, live_rows: list[int]) -> dict[str, Any]:
    """``live_rows``: the table rows of every node at the time of the attempt (snapshot order)."""
    names = attempt.node_names
    record: dict[str, Any] = {"pod": attempt.pod.key, "attempt": attempt.attempt, "profile": attempt.profile}
    if attempt.pod_group is not None:
        record["podGroup"] = pod_group_record(attempt.pod_group)
    if attempt.walk is not None:
        record["walk"] = walk_record(attempt.walk)
    result, error = attempt.result, attempt.error
    if result is None:
        diagnosis = error.diagnosis if isinstance(error, FitError) else None
        pre_filter = diagnosis.absent_status if diagnosis is not None and diagnosis.pre_filter_msg else None
        filtered = _filtered(diagnosis, names, live_rows)
        record.update(
            feasible=[],
            filtered=filtered,
            preFilter=_status(pre_filter) if pre_filter is not None else None,
            scores={},
            best=[],
            chosen=None,
            message=str(error),
        )
        if attempt.post_filter is not None:
            message = diagnosis.post_filter_msg if diagnosis is not None else ""
            record["postFilter"] = post_filter_record(attempt.post_filter, message)
        if not isinstance(error, FitError):
            record["error"] = str(error)
        return record
    diagnosis = result.diagnosis
    absent_rows: list[int] = []
    if diagnosis is not None and diagnosis.candidates is not None:
        allowed = set(diagnosis.candidates.tolist())
        absent_rows = [r for r in live_rows if r not in allowed]
    scores: dict[str, Any] = {}
    if result.scores is not None and result.scores.total is not None:
        rows = result.scores.rows.tolist()
        total = result.scores.total
        for i, row in enumerate(rows):
            entry = {plugin: int(values[i]) for plugin, values in result.scores.by_plugin.items()}
            entry["total"] = int(total[i])
            scores[names[row]] = entry
    record.update(
        feasible=sorted(names[r] for r in result.feasible_rows.tolist()),
        filtered=_filtered(diagnosis, names, absent_rows),
        preFilter=None,
        scores=dict(sorted(scores.items())),
        best=sorted(names[r] for r in result.best_rows.tolist()),
        chosen=result.suggested_host,
        message=None,
    )
    if attempt.binding is not None:
        _binding_fields(record, attempt.binding)
    return record


def _binding_fields(record: dict[str, Any], binding: dict[str, Any]) -> None:
    """``permit`` and ``binding`` (see ``binding_record.py``); a pod that failed after its
    node was chosen has that failure as its ``message``."""
    out = {k: v for k, v in binding.items() if k != "permit"}
    if out.get("result") == "pending":
        out["result"] = "waiting"  # still held at Permit when the record was written
    record["binding"] = out
    permit = binding.get("permit")
    if permit is not None:
        record["permit"] = dict(permit)
    if out.get("message"):
        record["message"] = out["message"]
