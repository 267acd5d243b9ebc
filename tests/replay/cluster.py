"""Small hand-made GPU clusters on the replay's scheduler profile, for the replay tests."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework import CycleState
from kubesched.framework.interfaces import PreFilterPlugin, PreScorePlugin
from kubesched.objects import PodInfo
from kubesched.plugins.gpushare import GPU_MILLI, GPU_MODEL, DeviceState, TypicalPod
from kubesched.plugins.gpushare.share import GpuShare
from kubesched.replay import plugin_name
from kubesched.replay.profile import SCHEDULER_NAME, replay_config, replay_registry

__all__ = ["gpu_node", "gpu_pod", "simulation", "devices", "placed_devices", "score_all"]


def gpu_node(name: str, gpus: int, model: str = "G2", cpu: int = 96_000, memory_mib: int = 393_216) -> dict[str, Any]:
    resources = {"cpu": f"{cpu}m", "memory": f"{memory_mib}Mi", "pods": "110", GPU_MILLI: str(gpus * 1000)}
    labels = {GPU_MODEL: model} if model else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": resources}}


def gpu_pod(name: str, milli: int = 0, count: int = 1, cpu: int = 4_000, node: str = "", models: str = "",
            memory_mib: int = 1024) -> dict[str, Any]:
    """A pod asking ``count`` devices of ``milli`` each (a share when ``count == 1`` and
    ``milli < 1000``); bound to ``node`` when given."""
    requests = {"cpu": f"{cpu}m", "memory": f"{memory_mib}Mi"}
    if milli:
        requests[GPU_MILLI] = str(milli * count)
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name}
    if models:
        meta["annotations"] = {GPU_MODEL: models}
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"requests": requests}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def simulation(policy: str, objects: list[dict[str, Any]], typical: list[TypicalPod] | None = None,
               seed: int = 1, tie_break: str = "name") -> Simulation:
    """A loaded (not yet run) simulation of ``objects`` on the replay profile of ``policy``."""
    registry = replay_registry()
    config = replay_config(plugin_name(policy), seed, typical or [], registry)
    snapshot = snapshot_from_objects([("test", o) for o in objects])
    return Simulation(snapshot, config, registry, tie_break=tie_break, seed=seed)


def devices(sim: Simulation) -> DeviceState:
    plugin = sim.scheduler.profiles[SCHEDULER_NAME].plugin("GpuShare")
    assert isinstance(plugin, GpuShare)
    return plugin.devices


def placed_devices(sim: Simulation, pod: str) -> tuple[str, tuple[int, ...]]:
    """The node and devices ``default/<pod>`` holds."""
    placement = devices(sim).placements[pod]
    return placement.node, placement.devices


def score_all(sim: Simulation, policy: str, pod: PodInfo) -> dict[str, int]:
    """The policy's raw Score of every node for ``pod`` (after GpuShare's PreFilter), by node name."""
    fwk = sim.scheduler.profiles[SCHEDULER_NAME]
    snapshot = sim.scheduler.cache.snapshot()
    state = CycleState()
    for name in ("GpuShare", plugin_name(policy)):
        plugin = fwk.plugin(name)
        if isinstance(plugin, PreFilterPlugin):
            plugin.pre_filter(state, pod, snapshot)
    table = snapshot.table
    rows = table.order
    scorer = fwk.plugin(plugin_name(policy))
    if isinstance(scorer, PreScorePlugin):
        scorer.pre_score(state, pod, snapshot, rows)
    scores = scorer.score_nodes(state, pod, snapshot, rows)  # type: ignore[union-attr]
    return {table.names[int(r)]: int(s) for r, s in zip(rows, scores)}
