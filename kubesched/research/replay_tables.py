"""Replays as tables: every pod's events, the cluster against virtual time, the level points.

One table for any number of replays (policies x seeds), in long form: each row carries
its replay's policy, seed and trace, so ``groupby("policy")`` compares policies. The pod
events and the series come from replays run with ``run_replay(spec, record=True)``
(``kubesched replay --output`` records them).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..replay import ReplayResult
from ..replay.events import POD_EVENT_COLUMNS, SERIES_COLUMNS, ColumnType
from .table import Table

__all__ = ["EVENTS", "SERIES", "pod_events", "series", "level_points", "write_replay_tables"]

EVENTS = "events"  # events.csv, events.parquet
SERIES = "series"  # series.csv, series.parquet
_KEYS: tuple[tuple[str, ColumnType], ...] = (("policy", "str"), ("seed", "int"), ("trace", "str"), ("mode", "str"))
_POINT_COLUMNS: tuple[tuple[str, ColumnType], ...] = (
    ("level", "float"), ("arrived", "float"), ("allocation_ratio", "float"), ("allocated_gpus", "float"),
    ("unallocated_gpus", "float"), ("fragmentation_gpus", "float"), ("fragmentation_ratio", "float"),
    ("pods_arrived", "int"), ("pods_scheduled", "int"), ("pods_failed", "int"))


def _key(result: ReplayResult) -> tuple[str, int, str, str]:
    return result.policy, result.spec.seed, result.trace, result.spec.mode


def pod_events(results: Sequence[ReplayResult]) -> Table:
    """One row per arrived pod of each replay: arrival, bind time, node, GPU devices, departure, failure."""
    names = [name for name, _ in POD_EVENT_COLUMNS]
    return Table.from_rows(EVENTS, _KEYS + POD_EVENT_COLUMNS, (
        (*_key(r), *(getattr(e, n) for n in names)) for r in results for e in r.pod_events))


def series(results: Sequence[ReplayResult]) -> Table:
    """One row per event of each replay: GPUs and cpu allocated, pods running, pending and failed."""
    names = [name for name, _ in SERIES_COLUMNS]
    return Table.from_rows(SERIES, _KEYS + SERIES_COLUMNS, (
        (*_key(r), *(getattr(p, n) for n in names)) for r in results for p in r.series))


def level_points(results: Sequence[ReplayResult]) -> Table:
    """One row per recorded level of each replay (what ``replay.json`` holds as ``points``)."""
    names = [name for name, _ in _POINT_COLUMNS]
    return Table.from_rows("points", _KEYS + _POINT_COLUMNS, (
        (*_key(r), *(getattr(p, n) for n in names)) for r in results for p in r.points))


def write_replay_tables(results: Sequence[ReplayResult], directory: str | Path) -> list[Path]:
    """``events.csv``, ``events.parquet``, ``series.csv`` and ``series.parquet`` in ``directory``."""
    out = Path(directory)
    written: list[Path] = []
    for table in (pod_events(results), series(results)):
        written += [table.write_csv(out / f"{table.name}.csv"), table.write_parquet(out / f"{table.name}.parquet")]
    return written
