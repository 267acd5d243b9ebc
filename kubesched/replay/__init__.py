"""Trace replay on kubesched's scheduler, and the GPU-fragmentation experiment of the FGD paper.

``run_replay(ReplaySpec(nodes, pods, policy, seed, mode, arrival, levels))`` replays a
trace (the Alibaba GPU trace's CSV, or Kubernetes YAML/JSON) on a virtual clock and
returns a ``ReplayResult``: at each arrival level, the GPUs allocated and unallocated
and the fragmentation. Both are plain, picklable data. ``kubesched.replay.report``
renders results (averaged over seeds) as a table, PNG plots and an HTML report; it
needs the ``research`` extra (matplotlib).
"""

from .engine import Progress, run_replay
from .errors import ReplayError, TraceError, TraceProblem
from .spec import DEFAULT_ARRIVAL, DEFAULT_SEED, LevelPoint, Mode, ReplayResult, ReplaySpec, default_levels, plugin_name, policy_name
from .trace import Trace, load_trace

__all__ = [
    "DEFAULT_ARRIVAL",
    "DEFAULT_SEED",
    "LevelPoint",
    "Mode",
    "Progress",
    "ReplayError",
    "ReplayResult",
    "ReplaySpec",
    "Trace",
    "TraceError",
    "TraceProblem",
    "default_levels",
    "load_trace",
    "plugin_name",
    "policy_name",
    "run_replay",
]
