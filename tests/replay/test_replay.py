"""The replay engine: the paper's protocol and the timeline mode, deterministic for a seed."""

from __future__ import annotations

import pickle
import random
from datetime import datetime, timezone
from pathlib import Path

import yaml

from kubesched.replay import ReplaySpec, default_levels, load_trace, run_replay
from kubesched.replay.alibaba import read_nodes, read_pods
from kubesched.replay.arrivals import fgd_arrivals
from kubesched.replay.trace import DELETION_TIMESTAMP, node_object, pod_object

DATA = Path(__file__).parent / "data"
NODES, PODS = str(DATA / "nodes.csv"), str(DATA / "pods.csv")


def test_a_replay_is_the_same_for_the_same_seed() -> None:
    first = run_replay(ReplaySpec(NODES, PODS, "FGD", seed=7))
    again = run_replay(ReplaySpec(NODES, PODS, "FGD", seed=7))
    assert first.points == again.points
    assert (first.pods_scheduled, first.pods_failed) == (again.pods_scheduled, again.pods_failed)


def test_the_seed_orders_the_arrivals() -> None:
    trace = load_trace(NODES, PODS)
    order = [[a.name for a in fgd_arrivals(trace.pods, trace.gpu_capacity_milli, 1.3, random.Random(seed))]
             for seed in (1, 1, 2)]
    assert order[0] == order[1] != order[2]


def test_pods_arrive_until_their_gpu_would_pass_the_target() -> None:
    trace = load_trace(NODES, PODS)
    arrivals = fgd_arrivals(trace.pods, trace.gpu_capacity_milli, 2.0, random.Random(3))
    asked = sum(a.pod.gpu_milli for a in arrivals)
    assert asked <= 2.0 * trace.gpu_capacity_milli
    assert len(arrivals) > len(trace.pods)  # the trace asks less than 200%: copies make up the rest
    assert any(a.name.endswith("-tuned-0") for a in arrivals) and len({a.name for a in arrivals}) == len(arrivals)


def test_the_state_is_recorded_at_every_level_up_to_the_target() -> None:
    result = run_replay(ReplaySpec(NODES, PODS, "BestFit", seed=1, arrival=1.3))
    assert [p.level for p in result.points] == list(default_levels(1.3))
    allocation = [p.allocation_ratio for p in result.points]
    assert allocation == sorted(allocation)  # pods never leave in the paper's protocol
    assert result.final.pods_arrived == result.pods_arrived == result.pods_scheduled + result.pods_failed
    assert abs(result.final.allocated_gpus + result.final.unallocated_gpus - result.gpu_capacity) < 1e-9
    assert 0 < result.final.fragmentation_gpus <= result.final.unallocated_gpus


def test_specs_and_results_are_picklable_plain_data() -> None:
    spec = ReplaySpec(NODES, PODS, "GpuPacking", seed=5, levels=(0.5, 1.0))
    result = run_replay(spec)
    copy = pickle.loads(pickle.dumps(result))
    assert copy.spec == spec and copy.points == result.points
    # The levels asked for, then the end of the replay (just short of the 130% target).
    assert [p.level for p in copy.points][:2] == [0.5, 1.0] and 1.25 < copy.final.level <= 1.3


def _timeline(tmp_path: Path, pods: str) -> tuple[str, str]:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,1,T4\n")
    trace = tmp_path / "pods.csv"
    trace.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n" + pods)
    return str(nodes), str(trace)


def test_in_the_timeline_a_pod_waits_until_a_departure_makes_room(tmp_path: Path) -> None:
    nodes, pods = _timeline(tmp_path, "a,1000,1024,1,1000,0,100\nb,1000,1024,1,1000,10,500\n")
    result = run_replay(ReplaySpec(nodes, pods, "BestFit", mode="timeline", levels=(0.5, 1.0, 2.0)))
    assert (result.pods_scheduled, result.pods_failed) == (2, 0)
    assert [p.pods_scheduled for p in result.points] == [1, 1, 1]  # b waits: a is still there when b arrives


def test_in_the_timeline_a_pod_gone_before_it_fits_counts_as_failed(tmp_path: Path) -> None:
    nodes, pods = _timeline(tmp_path, "a,1000,1024,1,1000,0,100\nb,1000,1024,1,1000,10,50\nc,1000,1024,1,400,200,300\n")
    result = run_replay(ReplaySpec(nodes, pods, "FGD", mode="timeline"))
    assert (result.pods_scheduled, result.pods_failed) == (2, 1)
    assert result.points[-1].allocation_ratio == 0.4  # when c, the last pod, arrived


def test_the_timeline_modes_end_state_is_after_the_traces_final_departures(tmp_path: Path) -> None:
    nodes, pods = _timeline(tmp_path, "a,1000,1024,1,1000,0,100\nb,1000,1024,1,1000,10,50\nc,1000,1024,1,400,200,300\n")
    result = run_replay(ReplaySpec(nodes, pods, "FGD", mode="timeline"))
    assert result.end is not None and result.final is result.end
    assert (result.final.allocation_ratio, result.final.pods_failed) == (0.0, 1)  # c left at 300


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(1_700_000_000 + seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def test_a_kubernetes_trace_replays_like_the_same_csv_trace(tmp_path: Path) -> None:
    docs = [node_object(row) for row in read_nodes(NODES)]
    for row in read_pods(PODS):
        pod = pod_object(row)
        pod["metadata"]["creationTimestamp"] = _rfc3339(row.creation_time)
        if row.deletion_time is not None:
            pod["metadata"].setdefault("annotations", {})[DELETION_TIMESTAMP] = _rfc3339(row.deletion_time)
        docs.append(pod)
    path = tmp_path / "trace.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    for mode in ("fgd", "timeline"):
        from_csv = run_replay(ReplaySpec(NODES, PODS, "FGD", seed=4, mode=mode))  # type: ignore[arg-type]
        from_yaml = run_replay(ReplaySpec(str(path), str(path), "FGD", seed=4, mode=mode))  # type: ignore[arg-type]
        assert from_yaml.points == from_csv.points
