"""GPU sharing accounting: devices never hold more than 1,000 milli-GPU, whole-GPU pods
never share, models and device room are enforced, and freed devices come back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kubesched.plugins.gpushare import DeviceState, GpuRequest
from kubesched.replay.alibaba import read_nodes, read_pods
from kubesched.replay.trace import node_object, pod_object

from .cluster import devices, gpu_node, gpu_pod, placed_devices, simulation

DATA = Path(__file__).parent / "data"


def _state(*counts: int) -> DeviceState:
    """A device state for nodes with these GPU counts (rows 0, 1, ...)."""
    state = DeviceState()
    state._grow(len(counts))
    for row, count in enumerate(counts):
        state._reset(row, f"n{row}", count)
    return state


def test_a_device_never_takes_more_than_1000_milli() -> None:
    state = _state(2)
    state.assign("a", 0, (0,), GpuRequest(700, 1))
    with pytest.raises(ValueError, match="cannot hold"):
        state.assign("b", 0, (0,), GpuRequest(400, 1))
    assert state.free[0].tolist() == [300, 1000]


def test_releasing_a_pod_gives_its_devices_back_once() -> None:
    state = _state(2)
    state.assign("a", 0, (0, 1), GpuRequest(1000, 2))
    assert state.release("a") and not state.release("a")
    assert state.free[0].tolist() == [1000, 1000] and state.allocated_milli() == 0


def test_whole_gpus_need_idle_devices_even_when_the_total_is_free() -> None:
    state = _state(2)
    state.assign("a", 0, (0,), GpuRequest(300, 1))
    state.assign("b", 0, (1,), GpuRequest(300, 1))
    rows = np.array([0])
    assert state.total_free(rows).tolist() == [1400]
    assert not state.fits(GpuRequest(1000, 1), rows)[0]
    assert state.fits(GpuRequest(700, 1), rows)[0] and not state.fits(GpuRequest(800, 1), rows)[0]


def test_a_share_must_fit_on_one_device_not_across_two() -> None:
    # Two 700 shares leave 300 on each device: 600 free in total, but no device holds 500.
    sim = simulation("BestFit", [gpu_node("n", 2), gpu_pod("a", 700, node="n"), gpu_pod("b", 700, node="n"),
                                 gpu_pod("wants-500", 500)])
    result = sim.run()
    assert result.placements == []
    assert "didn't have GPU devices with room for the pod" in result.outcomes["default/wants-500"].message


def test_a_pod_runs_only_on_a_gpu_model_it_accepts() -> None:
    sim = simulation("BestFit", [gpu_node("a-g2", 8, model="G2"), gpu_node("b-t4", 2, model="T4"),
                                 gpu_pod("t4-only", 1000, models="T4|P100"), gpu_pod("a100-only", 1000, models="A100")])
    result = sim.run()
    assert result.placements == [("default/t4-only", "b-t4")]
    assert "didn't have the GPU model the pod asks for" in result.outcomes["default/a100-only"].message


@pytest.mark.parametrize("policy", ["Random", "DotProduct", "GpuClustering", "GpuPacking", "BestFit", "FGD"])
def test_replaying_a_trace_keeps_every_device_within_its_1000_milli(policy: str) -> None:
    sim = simulation(policy, _trace_objects())
    result = sim.run()
    state = devices(sim)
    assert result.placements and (state.free >= 0).all() and (state.free <= 1000).all()
    held = np.zeros_like(state.free)
    for placement in state.placements.values():
        for device in placement.devices:
            held[placement.row, device] += placement.request.milli
    assert (held + state.free == np.where(np.arange(state.free.shape[1]) < state.devices[:, None], 1000, 0)).all()


@pytest.mark.parametrize("policy", ["Random", "GpuPacking", "FGD"])
def test_whole_gpu_pods_never_share_a_device(policy: str) -> None:
    sim = simulation(policy, _trace_objects())
    sim.run()
    taken: dict[tuple[int, int], list[str]] = {}
    for uid, placement in devices(sim).placements.items():
        for device in placement.devices:
            taken.setdefault((placement.row, device), []).append(uid)
    whole = {uid for uid, p in devices(sim).placements.items() if not p.request.share}
    assert whole
    assert all(len(pods) == 1 for pods in taken.values() if whole & set(pods))


def test_a_deleted_pod_frees_its_devices() -> None:
    sim = simulation("BestFit", [gpu_node("n", 1), gpu_pod("a", 600, node="n")])
    assert placed_devices(sim, "a") == ("n", (0,))
    bound = next(p for p in sim.scheduler.cache.pods() if p.name == "a")
    sim.scheduler.on_pod_delete(bound)
    assert devices(sim).free[0].tolist() == [1000] and not devices(sim).placements



def _trace_objects() -> list[dict[str, object]]:
    """The sample trace as Kubernetes objects: its nodes, and its pods pending."""
    return [*(node_object(row) for row in read_nodes(DATA / "nodes.csv")),
            *(pod_object(row) for row in read_pods(DATA / "pods.csv"))]
