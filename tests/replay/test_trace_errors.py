"""Bad traces are reported cell by cell: the file, the line and the column, every problem at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.replay import ReplaySpec, TraceError, load_trace, run_replay
from kubesched.replay.alibaba import read_nodes, read_pods

DATA = Path(__file__).parent / "data"
POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n"


def _problems(path: Path, read: object = read_pods) -> list[str]:
    with pytest.raises(TraceError) as caught:
        read(path)  # type: ignore[operator]
    return [str(p) for p in caught.value.problems]


def _write(tmp_path: Path, text: str, name: str = "pods.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_cell_that_is_not_a_number_names_file_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, POD_HEADER + "p0,1000,512,1,500,,0,10\np1,lots,512,1,500,,0,10\n")
    assert _problems(path) == [f"{path}:3: cpu_milli: must be an integer, got 'lots'"]


def test_every_bad_cell_is_reported_not_only_the_first(tmp_path: Path) -> None:
    path = _write(tmp_path, POD_HEADER + "p0,1000,512,1,1500,,0,10\np0,1000,512,0,300,,5,1\n")
    assert _problems(path) == [
        f"{path}:2: gpu_milli: must be between 0 and 1000, got 1500",
        f"{path}:3: name: duplicate pod 'p0'",
        f"{path}:3: gpu_milli: must be 0 for a pod with num_gpu 0, got 300",
        f"{path}:3: deletion_time: is before creation_time (1 < 5)",
    ]


def test_a_missing_column_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path, "name,cpu_milli,memory_mib,num_gpu\np0,1,1,0\n")
    problems = _problems(path)
    assert len(problems) == 1 and problems[0].startswith(f"{path}:1: gpu_milli: missing column(s)")


def test_a_row_with_too_many_cells_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, POD_HEADER + "p0,1000,512,1,500,,0,10,extra\n")
    assert _problems(path) == [f"{path}:2: has 9 cells, the header 8"]


def test_bad_node_rows_are_reported_too(tmp_path: Path) -> None:
    path = _write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn0,0,1024,2,T4\n,1000,1024,-1,T4\n", "nodes.csv")
    assert _problems(path, read_nodes) == [
        f"{path}:2: cpu_milli: must be at least 1, got 0",
        f"{path}:3: sn: is required",
        f"{path}:3: gpu: must be at least 0, got -1",
    ]


def test_the_timeline_mode_needs_creation_times(tmp_path: Path) -> None:
    path = _write(tmp_path, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,512,1,500\n")
    assert read_pods(path)[0].creation_time == 0.0
    with pytest.raises(TraceError, match="creation_time: missing column"):
        read_pods(path, need_times=True)


def test_a_missing_file_is_one_problem(tmp_path: Path) -> None:
    with pytest.raises(TraceError) as caught:
        load_trace(str(DATA / "nodes.csv"), str(tmp_path / "nope.csv"))
    assert [str(p) for p in caught.value.problems] == [f"{tmp_path / 'nope.csv'}: No such file or directory"]


def test_a_kubernetes_trace_with_a_bad_gpu_request_is_refused(tmp_path: Path) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: odd, namespace: default}\n"
                    "spec: {containers: [{name: c, resources: {requests: {kubesched.io/gpu-milli: '1500'}}}]}\n")
    with pytest.raises(TraceError, match="Pod default/odd: kubesched.io/gpu-milli request 1500 is neither"):
        run_replay(ReplaySpec(str(DATA / "nodes.csv"), str(pods), "FGD"))


# -- Kubernetes-object traces: the same checks, each problem naming its pod -------------------
KUBE_NODE = """apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110", kubesched.io/gpu-milli: "2000"}}
"""


def _kube_pod(name: str, created: str | None = "2026-01-01T00:00:00Z", deleted: str | None = None,
              gpu: str = "500") -> str:
    meta = f"name: {name}, namespace: default"
    if created is not None:
        meta += f", creationTimestamp: '{created}'"
    if deleted is not None:
        meta += f", annotations: {{kubesched.io/deletion-timestamp: '{deleted}'}}"
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{{meta}}}\nspec:\n  containers:\n  - name: main\n"
            f"    resources: {{requests: {{cpu: '1', memory: 1Gi, kubesched.io/gpu-milli: '{gpu}'}}}}\n")


def _kube_problems(tmp_path: Path, pods: str, mode: str = "timeline") -> list[str]:
    nodes = _write(tmp_path, KUBE_NODE, "nodes.yaml")
    path = _write(tmp_path, pods, "pods.yaml")
    with pytest.raises(TraceError) as caught:
        load_trace(str(nodes), str(path), need_times=mode == "timeline")
    return [str(p) for p in caught.value.problems]


def test_a_kubernetes_pod_deleted_before_it_was_created_is_an_error(tmp_path: Path) -> None:
    pods = _kube_pod("late", "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z")
    assert _kube_problems(tmp_path, pods) == [
        f"{tmp_path / 'pods.yaml'}: Pod default/late metadata.annotations[kubesched.io/deletion-timestamp]: "
        "is before metadata.creationTimestamp (2026-01-01T00:00:00Z < 2026-01-02T00:00:00Z)"]


def test_the_timeline_mode_needs_every_kubernetes_pods_creation_timestamp(tmp_path: Path) -> None:
    assert _kube_problems(tmp_path, _kube_pod("ok") + _kube_pod("undated", created=None)) == [
        f"{tmp_path / 'pods.yaml'}: Pod default/undated metadata.creationTimestamp: "
        "is required: the timeline mode replays pods at their creation time"]


def test_the_fgd_mode_does_not_need_creation_timestamps(tmp_path: Path) -> None:
    nodes = _write(tmp_path, KUBE_NODE, "nodes.yaml")
    pods = _write(tmp_path, _kube_pod("undated", created=None), "pods.yaml")
    assert len(load_trace(str(nodes), str(pods), need_times=False).pods) == 1


def test_every_problem_of_a_kubernetes_trace_is_reported_at_once(tmp_path: Path) -> None:
    pods = (_kube_pod("late", "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z") + _kube_pod("undated", created=None)
            + _kube_pod("garbled", deleted="next tuesday") + _kube_pod("odd", gpu="1500") + _kube_pod("fine"))
    problems = _kube_problems(tmp_path, pods)
    assert sorted(p.split(": ")[1].split()[1] for p in problems) == ["default/garbled", "default/late", "default/odd",
                                                                     "default/undated"]


def test_replay_exits_2_with_every_kubernetes_trace_problem(tmp_path: Path) -> None:
    nodes = _write(tmp_path, KUBE_NODE, "nodes.yaml")
    pods = _write(tmp_path, _kube_pod("late", "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z")
                  + _kube_pod("undated", created=None), "pods.yaml")
    result = CliRunner().invoke(cli, ["replay", str(nodes), str(pods), "--mode", "timeline", "--policy", "FGD"])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 2 and "Pod default/late" in errors[0] and "Pod default/undated" in errors[1]


def test_a_bound_kubernetes_pods_departure_is_read_too(tmp_path: Path) -> None:
    nodes = _write(tmp_path, KUBE_NODE, "nodes.yaml")
    pod = _kube_pod("ran", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z").replace("spec:\n", "spec:\n  nodeName: gpu-1\n")
    pods = _write(tmp_path, pod + _kube_pod("waits", "2026-01-01T00:30:00Z"), "pods.yaml")
    trace = load_trace(str(nodes), str(pods), need_times=True)
    assert {p.info.name: p.deleted for p in trace.pods} == {"ran": 3600.0, "waits": None}


def test_a_bound_kubernetes_pod_deleted_before_it_was_created_is_an_error(tmp_path: Path) -> None:
    pod = _kube_pod("late", "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z").replace("spec:\n", "spec:\n  nodeName: gpu-1\n")
    [problem] = _kube_problems(tmp_path, pod)
    assert "Pod default/late metadata.annotations[kubesched.io/deletion-timestamp]: is before" in problem
