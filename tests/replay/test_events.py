"""A recorded replay (``run_replay(spec, record=True)``): every pod's events and the cluster
against virtual time, consistent with the replay's own figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.replay import ReplaySpec, load_trace, run_replay

DATA = Path(__file__).parent / "data"
NODES, PODS = str(DATA / "nodes.csv"), str(DATA / "pods.csv")


def _timeline(tmp_path: Path, pods: str, gpus: int = 1) -> tuple[str, str]:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text(f"sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,{gpus},T4\n")
    trace = tmp_path / "pods.csv"
    trace.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n" + pods)
    return str(nodes), str(trace)


def test_recording_changes_no_figure_of_the_replay() -> None:
    plain = run_replay(ReplaySpec(NODES, PODS, "FGD", seed=3))
    recorded = run_replay(ReplaySpec(NODES, PODS, "FGD", seed=3), record=True)
    assert plain.points == recorded.points and plain.pod_events == [] and plain.series == []
    assert len(recorded.pod_events) == recorded.pods_arrived


def test_in_fgd_each_pod_is_bound_on_a_trace_node_or_dropped_with_the_reason() -> None:
    result = run_replay(ReplaySpec(NODES, PODS, "BestFit", seed=1, arrival=1.3), record=True)
    names = {node.name for node in load_trace(NODES, PODS).nodes}
    bound = [e for e in result.pod_events if e.node is not None]
    dropped = [e for e in result.pod_events if e.node is None]
    assert len(bound) == result.pods_scheduled and len(dropped) == result.pods_failed > 0
    assert {e.node for e in bound} <= names  # the trace's names, not the tie-break's renamed ones
    assert all(e.gpu_devices for e in bound if e.gpu_milli)
    assert all(e.failure.startswith("dropped: did not fit when it arrived: 0/") for e in dropped)
    assert [e.arrival_index for e in result.pod_events] == list(range(result.pods_arrived))


def test_a_whole_gpu_pod_lists_each_device_it_holds(tmp_path: Path) -> None:
    nodes, pods = _timeline(tmp_path, "a,1000,1024,2,1000,0,100\nb,1000,1024,1,300,5,100\n", gpus=4)
    result = run_replay(ReplaySpec(nodes, pods, "BestFit", mode="timeline"), record=True)
    devices = {e.pod: e.gpu_devices.split("|") for e in result.pod_events}
    assert len(devices["a"]) == 2 and len(devices["b"]) == 1
    assert not set(devices["a"]) & set(devices["b"])  # a share never lands on a device taken whole


def test_in_the_timeline_a_waiting_pod_is_bound_after_the_departure_that_made_room(tmp_path: Path) -> None:
    nodes, pods = _timeline(tmp_path, "a,1000,1024,1,1000,0,100\nb,1000,1024,1,1000,10,500\n")
    result = run_replay(ReplaySpec(nodes, pods, "BestFit", mode="timeline"), record=True)
    a, b = result.pod_events
    assert (a.arrival, a.bound, a.departure) == (0.0, 0.0, 100.0)
    assert b.arrival == 10.0 and b.bound is not None and b.bound >= 100.0 and b.departure == 500.0
    assert b.attempts >= 2 and b.failure == ""


def test_in_the_timeline_a_pod_gone_before_it_fits_says_why(tmp_path: Path) -> None:
    nodes, pods = _timeline(tmp_path, "a,1000,1024,1,1000,0,100\nb,1000,1024,1,1000,10,50\n")
    result = run_replay(ReplaySpec(nodes, pods, "FGD", mode="timeline"), record=True)
    b = result.pod_events[1]
    assert b.bound is None and b.departure == 50.0
    assert b.failure.startswith("left before it was scheduled: 0/1 nodes are available")


def test_a_pod_still_waiting_when_the_trace_ends_is_a_failure(tmp_path: Path) -> None:
    nodes, pods = _timeline(tmp_path, "a,1000,1024,1,1000,0,\nb,1000,1024,1,1000,10,\n")
    result = run_replay(ReplaySpec(nodes, pods, "FGD", mode="timeline"), record=True)
    assert result.pod_events[1].failure.startswith("still pending when the trace ended")
    end = result.series[-1]
    assert (end.event, end.pods_running, end.pods_pending, end.pods_failed) == ("end", 1, 0, 1)


def test_the_series_follows_virtual_time_and_ends_after_the_final_departures(tmp_path: Path) -> None:
    nodes, pods = _timeline(tmp_path, "a,1000,1024,1,1000,0,100\nb,1000,1024,1,500,10,50\nc,1000,1024,1,400,200,300\n")
    result = run_replay(ReplaySpec(nodes, pods, "FGD", mode="timeline"), record=True)
    times = [p.time for p in result.series]
    assert times == sorted(times) and times[-1] == 300.0
    assert [p.event for p in result.series] == ["arrival", "arrival", "departure", "departure", "arrival",
                                                 "departure", "end"]
    assert [p.allocated_gpus for p in result.series] == [1.0, 1.0, 1.0, 0.0, 0.4, 0.0, 0.0]
    assert result.series[-1].gpu_allocation_ratio == result.final.allocation_ratio == 0.0


@pytest.mark.parametrize("mode", ["fgd", "timeline"])
def test_the_last_series_point_agrees_with_the_replays_end(mode: str) -> None:
    result = run_replay(ReplaySpec(NODES, PODS, "GpuPacking", seed=5, mode=mode), record=True)  # type: ignore[arg-type]
    end = result.series[-1]
    assert end.pods_arrived == result.pods_arrived and end.pods_failed == result.pods_failed
    assert end.gpu_allocation_ratio == pytest.approx(result.final.allocation_ratio)
    assert sum(1 for e in result.pod_events if e.bound is not None) == result.pods_scheduled
