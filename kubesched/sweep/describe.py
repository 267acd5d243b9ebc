"""A task in one line, for progress, failures and logs: which cell of the grid it is."""

from __future__ import annotations

from pathlib import Path

from kubesched.planning import CompareSpec
from kubesched.replay import ReplaySpec, policy_name

__all__ = ["describe"]


def describe(spec: object) -> str:
    """``FGD seed 42, arrival 130%, openb_pod_list_default.csv`` or
    ``cluster.json seed 42, default vs packing.yaml``."""
    if isinstance(spec, ReplaySpec):
        arrival = f", arrival {spec.arrival * 100:g}%" if spec.mode == "fgd" else ", timeline"
        return f"{policy_name(spec.policy)} seed {spec.seed}{arrival}, {Path(spec.pods).name}"
    if isinstance(spec, CompareSpec):
        configs = " vs ".join(c if c == "default" else Path(c).name for c in spec.configs)
        return f"{Path(spec.snapshot).name} seed {spec.seed}, {configs}"
    return repr(spec)
