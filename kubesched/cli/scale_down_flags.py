"""``simulate --scale-down``: its options, checked before anything runs, and the plan made
after the run (see ``planning.scale_down``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from ..cluster.simulated import SimulationResult
from ..cluster.snapshot import ClusterSnapshot
from ..framework.config import SchedulerConfig
from ..framework.registry import Registry
from ..planning.scale_down import ScaleDownOptions, ScaleDownResult, cluster_after, plan_scale_down
from .common import fail

__all__ = ["ScaleDownFlags", "scale_down_options", "run_scale_down"]

F = TypeVar("F", bound=Callable[..., Any])
_THRESHOLD = click.FloatRange(0.0, 1.0)


@dataclass(slots=True)
class ScaleDownFlags:
    scale_down: bool = False
    utilization_threshold: float | None = None
    gpu_utilization_threshold: float | None = None
    ignore_daemonsets_utilization: bool = False
    ignore_mirror_pods_utilization: bool = False

    @classmethod
    def pop(cls, kwargs: dict[str, Any]) -> "ScaleDownFlags":
        """The options ``scale_down_options`` added, taken out of a command's keyword arguments;
        a scale-down option without ``--scale-down`` exits 2."""
        flags = cls(kwargs.pop("scale_down"), kwargs.pop("utilization_threshold"), kwargs.pop("gpu_utilization_threshold"),
                    kwargs.pop("ignore_daemonsets_utilization"), kwargs.pop("ignore_mirror_pods_utilization"))
        if not flags.scale_down:
            given = [name for name, value in (
                ("--utilization-threshold", flags.utilization_threshold is not None),
                ("--gpu-utilization-threshold", flags.gpu_utilization_threshold is not None),
                ("--ignore-daemonsets-utilization", flags.ignore_daemonsets_utilization),
                ("--ignore-mirror-pods-utilization", flags.ignore_mirror_pods_utilization)) if value]
            if given:
                fail([f"{given[0]} tunes --scale-down: give --scale-down too"])
        return flags

    def options(self) -> ScaleDownOptions:
        defaults = ScaleDownOptions()
        return ScaleDownOptions(
            defaults.utilization_threshold if self.utilization_threshold is None else self.utilization_threshold,
            defaults.gpu_utilization_threshold if self.gpu_utilization_threshold is None else self.gpu_utilization_threshold,
            self.ignore_daemonsets_utilization, self.ignore_mirror_pods_utilization)


def scale_down_options(command: F) -> F:
    options = [
        click.option("--scale-down", is_flag=True,
                     help="After the run: which nodes cluster-autoscaler's scale-down would remove and where their "
                          "pods would go (see docs/autoscaling.md)."),
        click.option("--utilization-threshold", type=_THRESHOLD, metavar="RATIO",
                     help="Scale-down: a node whose requests over allocatable (the larger of cpu and memory) are "
                          "below this is a candidate (default 0.5, cluster-autoscaler's "
                          "--scale-down-utilization-threshold)."),
        click.option("--gpu-utilization-threshold", type=_THRESHOLD, metavar="RATIO",
                     help="Scale-down: the same for nodes with GPUs, on nvidia.com/gpu (default 0.5)."),
        click.option("--ignore-daemonsets-utilization", is_flag=True,
                     help="Scale-down: leave DaemonSet pods out of the utilisation, as cluster-autoscaler's flag."),
        click.option("--ignore-mirror-pods-utilization", is_flag=True,
                     help="Scale-down: leave mirror pods out of the utilisation, as cluster-autoscaler's flag."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def run_scale_down(snapshot: ClusterSnapshot, result: SimulationResult, flags: ScaleDownFlags, config: SchedulerConfig,
                   registry: Registry, tie_break: str, seed: int | None) -> ScaleDownResult:
    """The plan on the cluster as the run left it (its placements made, its preemptions' victims gone)."""
    return plan_scale_down(cluster_after(snapshot, result), config, registry, flags.options(), tie_break, seed)
