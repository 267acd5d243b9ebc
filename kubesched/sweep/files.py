"""A sweep written to a directory: ``sweep.json`` (everything), CSV files for spreadsheets
and dataframes, and (``html``, with matplotlib) ``report.html``.

* ``sweep.json``: the grid, timing, failures, the summary rows and every result: replays
  as ``kubesched replay`` writes them (its ``json_document``: each replay's points, the
  averaged curves), comparisons as ``kubesched compare --json`` writes them.
* ``results.csv``: one row per task (per task and configuration for comparisons), failed
  tasks included with their error.
* ``summary.csv``: the table's rows, a mean and a std column per figure.
* ``points.csv`` (replays): every recorded level of every replay, long format.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path
from typing import Sequence

import orjson

from kubesched.planning import CompareResult, CompareSpec, to_document
from kubesched.replay import ReplayResult, ReplaySpec, policy_name
from kubesched.replay.report import json_document

from .grid import Grid, ReplayGrid
from .outcome import SweepOutcome
from .summary import CompareRow, ReplayRow, Stat, compare_rows, replay_rows

__all__ = ["CompareSweep", "ReplaySweep", "Sweep", "sweep_document", "write_files"]

ReplaySweep = SweepOutcome[ReplaySpec, ReplayResult]
CompareSweep = SweepOutcome[CompareSpec, CompareResult]
Sweep = ReplaySweep | CompareSweep
Cell = str | int | float | None


def sweep_document(grid: Grid, outcome: Sweep) -> dict[str, object]:
    """The whole sweep as JSON-ready data."""
    head: dict[str, object] = {
        "kind": grid.kind,
        "grid": dataclasses.asdict(grid),
        "tasks": len(outcome.specs),
        "finished": len(outcome.finished),
        "failed": [dataclasses.asdict(f) for f in outcome.failures],
        "cancelled": outcome.cancelled,
        "interrupted": outcome.interrupted,
        "workers": outcome.workers,
        "workers_used": outcome.workers_used,
        "workers_lost": outcome.workers_lost,
        "recomputed": outcome.recomputed,
        "stranded": outcome.stranded,
        "seconds": outcome.seconds,
    }
    if isinstance(grid, ReplayGrid):
        replays = _replays(outcome)
        head["summary"] = [dataclasses.asdict(r) for r in replay_rows(replays)]
        head["results"] = json_document(replays)
    else:
        comparisons = _comparisons(outcome)
        head["summary"] = [dataclasses.asdict(r) for r in compare_rows(comparisons)]
        head["results"] = [to_document(r) for r in comparisons]
    return head


def write_files(grid: Grid, outcome: Sweep, directory: str | Path) -> list[Path]:
    """``sweep.json`` and the CSV files in ``directory`` (which must exist); their paths."""
    out = Path(directory)
    json_path = out / "sweep.json"
    json_path.write_bytes(orjson.dumps(sweep_document(grid, outcome), option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    written = [json_path]
    if isinstance(grid, ReplayGrid):
        replays = _replays(outcome)
        written.append(_write_csv(out / "results.csv", *_replay_results(outcome)))
        written.append(_write_csv(out / "summary.csv", *_summary_table(replay_rows(replays))))
        written.append(_write_csv(out / "points.csv", *_replay_points(replays)))
    else:
        written.append(_write_csv(out / "results.csv", *_compare_results(outcome)))
        written.append(_write_csv(out / "summary.csv", *_summary_table(compare_rows(_comparisons(outcome)))))
    return written


def _replays(outcome: Sweep) -> list[ReplayResult]:
    return [r for r in outcome.finished if isinstance(r, ReplayResult)]


def _comparisons(outcome: Sweep) -> list[CompareResult]:
    return [r for r in outcome.finished if isinstance(r, CompareResult)]


def _write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(rows)
    return path


_POINT_FIELDS = ("level", "arrived", "allocation_ratio", "allocated_gpus", "unallocated_gpus", "fragmentation_gpus",
                 "fragmentation_ratio", "pods_arrived", "pods_scheduled", "pods_failed")


def _errors(outcome: Sweep) -> dict[int, str]:
    return {f.index: f.error for f in outcome.failures}


def _replay_results(outcome: Sweep) -> tuple[list[str], list[list[Cell]]]:
    header = ["pods", "policy", "seed", "mode", "arrival", "status", "error", *_POINT_FIELDS[1:], "seconds"]
    errors = _errors(outcome)
    rows: list[list[Cell]] = []
    for i, spec in enumerate(outcome.specs):
        if not isinstance(spec, ReplaySpec):
            continue
        result = outcome.results[i]
        head: list[Cell] = [spec.pods, policy_name(spec.policy), spec.seed, spec.mode, spec.arrival]
        if isinstance(result, ReplayResult) and result.points:
            end = result.final
            rows.append([*head, "ok", "", *(getattr(end, f) for f in _POINT_FIELDS[1:]), round(result.seconds, 3)])
        else:
            status = "failed" if i in errors else "cancelled"
            rows.append([*head, status, errors.get(i, ""), *([None] * (len(_POINT_FIELDS) - 1)), None])
    return header, rows


def _replay_points(results: Sequence[ReplayResult]) -> tuple[list[str], list[list[Cell]]]:
    header = ["pods", "policy", "seed", "mode", "arrival", *_POINT_FIELDS]
    rows: list[list[Cell]] = []
    for result in results:
        spec = result.spec
        for point in result.points:
            rows.append([spec.pods, result.policy, spec.seed, spec.mode, spec.arrival,
                         *(getattr(point, f) for f in _POINT_FIELDS)])
    return header, rows


_COMPARE_FIELDS = ("scheduled", "unschedulable", "gated", "preempted", "other_schedulers", "nodes_used",
                   "nodes_with_new_pods", "attempts")


def _compare_results(outcome: Sweep) -> tuple[list[str], list[list[Cell]]]:
    header = ["snapshot", "seed", "config", "status", "error", *_COMPARE_FIELDS, "moved", "became_unschedulable",
              "became_schedulable", "cpu_share", "memory_share", "room", "seconds"]
    errors = _errors(outcome)
    rows: list[list[Cell]] = []
    for i, spec in enumerate(outcome.specs):
        if not isinstance(spec, CompareSpec):
            continue
        result = outcome.results[i]
        if not isinstance(result, CompareResult):
            status = "failed" if i in errors else "cancelled"
            rows.append([spec.snapshot, spec.seed, " vs ".join(spec.configs), status, errors.get(i, ""),
                         *([None] * (len(header) - 5))])
            continue
        for k, run in enumerate(result.configs):
            change = result.changes[k - 1] if k else None
            cpu, memory = run.resource("cpu"), run.resource("memory")
            rows.append([
                spec.snapshot, spec.seed, run.label, "ok", "", *(getattr(run, f) for f in _COMPARE_FIELDS),
                change.moved if change else None, change.became_unschedulable if change else None,
                change.became_schedulable if change else None, cpu.share if cpu else None,
                memory.share if memory else None, run.fragmentation.room, round(run.seconds, 4),
            ])
    return header, rows


def _summary_table(rows: Sequence[ReplayRow] | Sequence[CompareRow]) -> tuple[list[str], list[list[Cell]]]:
    """Each row's fields; a ``Stat`` becomes two columns, ``<name>_mean`` and ``<name>_std``."""
    if not rows:
        return [], []
    header: list[str] = []
    for f in dataclasses.fields(rows[0]):
        value = getattr(rows[0], f.name)
        header += [f"{f.name}_mean", f"{f.name}_std"] if isinstance(value, Stat) or f.name in _OPTIONAL_STATS else [f.name]
    table: list[list[Cell]] = []
    for row in rows:
        cells: list[Cell] = []
        for f in dataclasses.fields(row):
            value = getattr(row, f.name)
            if isinstance(value, Stat):
                cells += [value.mean, value.std]
            elif f.name in _OPTIONAL_STATS:
                cells += [None, None]
            elif isinstance(value, list):
                cells.append(" ".join(str(v) for v in value))
            else:
                cells.append(value)
        table.append(cells)
    return header, table


_OPTIONAL_STATS = frozenset({"moved", "became_unschedulable", "became_schedulable"})
