"""What a replay can record besides its level points: every pod's story, and the cluster
against virtual time.

* ``PodEvent``: one row per arrived pod: when it arrived, when and where it was bound
  (node, GPU device indexes), when it left, and why it never ran if it did not.
* ``SeriesPoint``: the cluster after each event of the replay (an arrival, a departure,
  a retry that bound pods, the end): GPUs and cpu allocated, pods running, pending,
  failed, against the virtual clock.

Recording is asked for (``run_replay(spec, record=True)``): a sweep of hundreds of replays
does not carry thousands of rows per replay back from its workers. Both are plain,
picklable data; ``COLUMNS`` name each field's type for tables (CSV, Parquet, pandas).
In the fgd mode the virtual clock does not move (pods arrive one after another with no
times): ``arrival_index`` and ``pods_arrived`` order the rows there.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

__all__ = ["PodEvent", "SeriesPoint", "POD_EVENT_COLUMNS", "SERIES_COLUMNS", "ColumnType"]

ColumnType = Literal["str", "int", "float", "bool"]


@dataclass(slots=True)
class PodEvent:
    """One pod of the replay, from its arrival to its departure."""

    pod: str
    arrival_index: int  # 0 for the first pod to arrive
    arrival: float  # virtual seconds since the trace's first arrival
    cpu_milli: int  # requested
    gpu_milli: int  # requested, all devices together
    attempts: int = 0  # scheduling attempts
    bound: float | None = None  # virtual time of the binding
    node: str | None = None
    gpu_devices: str = ""  # device indexes on the node, "0|3" ("": none)
    departure: float | None = None  # when it left the cluster or the queue (None: still there at the end)
    failure: str = ""  # why it never ran ("": it did)


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    """The cluster right after one event of the replay."""

    time: float  # virtual seconds since the trace's first arrival
    event: str  # "arrival", "departure", "retry" (backed-off pods bound), "end"
    pods_arrived: int
    pods_running: int  # bound and not departed
    pods_pending: int  # arrived, not bound, not gone
    pods_failed: int  # gone without ever running (dropped in fgd, departed while pending in timeline)
    allocated_gpus: float  # GPUs held by running pods
    gpu_allocation_ratio: float  # of the cluster's GPUs
    cpu_allocation_ratio: float  # requested cpu of running pods, of the cluster's cpu
    arrived_gpu_ratio: float  # GPU requested by every pod arrived so far, of the cluster's GPUs


def _columns(cls: type) -> tuple[tuple[str, ColumnType], ...]:
    kinds: dict[str, ColumnType] = {"str": "str", "int": "int", "float": "float", "bool": "bool",
                                    "float | None": "float", "str | None": "str", "int | None": "int"}
    return tuple((f.name, kinds[str(f.type)]) for f in fields(cls))


POD_EVENT_COLUMNS = _columns(PodEvent)
SERIES_COLUMNS = _columns(SeriesPoint)
