"""kubesched for analysis: simulations from Python, results as tables (pandas, Arrow, Parquet).

* ``Snapshot`` / ``simulate``: load a cluster snapshot, edit it if you like, schedule its
  pending pods, and get placements, attempts, pods and node utilisation as ``Table``s.
* ``pod_events`` / ``series`` / ``level_points``: recorded replays
  (``run_replay(spec, record=True)``) as tables.
* ``Table``: ``to_pandas()``, ``to_arrow()``, ``write_csv()``, ``write_parquet()``; pandas
  and pyarrow are the ``research`` extra (``pip install 'kubesched[research]'``).

See docs/research.md.
"""

from ..planning.inputs import PlanningError
from .replay_tables import level_points, pod_events, series, write_replay_tables
from .simulate import SimulationRun, simulate
from .snapshot import Snapshot, SnapshotError, WhatIfError, WhatIfRecord
from .table import RESEARCH_EXTRA, ExtraMissing, Table

__all__ = [
    "ExtraMissing",
    "PlanningError",
    "RESEARCH_EXTRA",
    "SimulationRun",
    "Snapshot",
    "SnapshotError",
    "Table",
    "WhatIfError",
    "WhatIfRecord",
    "level_points",
    "pod_events",
    "series",
    "simulate",
    "write_replay_tables",
]
