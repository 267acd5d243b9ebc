"""The scheduler a replay runs: upstream's filters, GpuShare, and one GPU policy as the only Score.

As in the paper's simulator: every feasible node is scored (percentageOfNodesToScore
100), the policy is the only Score plugin (upstream's are disabled, and their
PreScore with them), GpuShare filters and reserves devices, and preemption is off (a
replay's pods share one priority). The typical pods for FGD (and the fragmentation
the replay reports) are the trace's.
"""

from __future__ import annotations

from typing import Any

from kubesched.framework import Registry
from kubesched.framework.config import API_VERSION, KIND, SchedulerConfig, parse_config
from kubesched.plugins.gpushare import GPU_SHARE, TypicalPod, fgd, random_score
from kubesched.plugins.gpushare import registry as gpushare_registry
from kubesched.plugins.registry import in_tree_registry

__all__ = ["SCHEDULER_NAME", "replay_config", "replay_registry"]

SCHEDULER_NAME = "default-scheduler"
_WITH_PRE_SCORE = frozenset({random_score.NAME})


def replay_registry() -> Registry:
    """The in-tree plugins and the GPU-sharing ones."""
    return in_tree_registry().merged(gpushare_registry())


def replay_config(plugin: str, seed: int, typical: list[TypicalPod], registry: Registry) -> SchedulerConfig:
    """The profile for policy ``plugin`` (a Score plugin name)."""
    args: dict[str, Any] = {}
    if plugin == random_score.NAME:
        args = {"seed": seed}
    elif plugin == fgd.NAME:
        args = {"typicalPods": [
            {"cpuMilli": t.shape.cpu_milli, "gpuMilli": t.shape.gpu_milli, "gpuCount": t.shape.gpu_count,
             "gpuModel": t.shape.gpu_model, "weight": t.weight}
            for t in typical
        ]}
    pre_score = [{"name": plugin}] if plugin in _WITH_PRE_SCORE else []
    document = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "percentageOfNodesToScore": 100,
        "profiles": [{
            "schedulerName": SCHEDULER_NAME,
            "plugins": {
                "multiPoint": {"enabled": [{"name": GPU_SHARE}, {"name": plugin}],
                               "disabled": [{"name": "DefaultPreemption"}]},
                "preScore": {"disabled": [{"name": "*"}], "enabled": pre_score},
                "score": {"disabled": [{"name": "*"}], "enabled": [{"name": plugin, "weight": 1}]},
            },
            "pluginConfig": [{"name": plugin, "args": args}] if args else [],
        }],
    }
    return parse_config(document, registry)
