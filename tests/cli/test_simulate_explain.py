"""`simulate --explain`: JSON Lines written as the run goes, and the filters that narrow it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.explain_stream import ExplainStream
from kubesched.cli.label_query import LabelQueryError, parse_label_query
from kubesched.cli.main import cli
from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import default_config
from kubesched.plugins.registry import in_tree_registry

from dumps import node, pod, read_explain, write_list


def _run(*args: str):
    return CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)


def _labelled(name: str, cpu: str = "1", **labels: str) -> dict:
    p = pod(name, cpu=cpu)
    p["metadata"]["labels"] = dict(labels)
    return p


@pytest.fixture()
def snapshot(tmp_path: Path) -> Path:
    return write_list(tmp_path / "s.yaml", [
        node("n1", cpu="3"),
        _labelled("web-1", app="web"), _labelled("web-2", app="web"),
        _labelled("db-1", cpu="8", app="db"),  # fits no node
        _labelled("batch-1", cpu="100m", app="batch", tier="low"),
    ])


def test_every_attempt_is_one_json_object_per_line(snapshot: Path, tmp_path: Path):
    explain = tmp_path / "e.jsonl"
    assert _run(str(snapshot), "--explain", str(explain), "--tie-break", "name").exit_code == 0
    lines = explain.read_text().splitlines()
    assert len(lines) == 4
    records = [json.loads(line) for line in lines]
    assert {r["pod"] for r in records} == {"default/web-1", "default/web-2", "default/db-1", "default/batch-1"}
    assert all({"pod", "attempt", "profile", "feasible", "filtered", "scores", "best", "chosen", "message"} <= r.keys()
               for r in records)


def test_failed_only_keeps_the_attempts_that_found_no_node(snapshot: Path, tmp_path: Path):
    explain = tmp_path / "e.jsonl"
    assert _run(str(snapshot), "--explain", str(explain), "--explain-failed").exit_code == 0
    assert [(r["pod"], r["chosen"]) for r in read_explain(explain)] == [("default/db-1", None)]


def test_a_label_selector_keeps_the_matching_pods(snapshot: Path, tmp_path: Path):
    explain = tmp_path / "e.jsonl"
    assert _run(str(snapshot), "--explain", str(explain), "--explain-selector", "app in (web,batch),tier!=low").exit_code == 0
    assert sorted(r["pod"] for r in read_explain(explain)) == ["default/web-1", "default/web-2"]


def test_a_name_pattern_keeps_the_matching_pods(snapshot: Path, tmp_path: Path):
    explain = tmp_path / "e.jsonl"
    assert _run(str(snapshot), "--explain", str(explain), "--explain-pods", "web-*").exit_code == 0
    assert sorted(r["pod"] for r in read_explain(explain)) == ["default/web-1", "default/web-2"]


def test_a_name_pattern_with_a_slash_matches_namespace_and_name(snapshot: Path, tmp_path: Path):
    explain = tmp_path / "e.jsonl"
    assert _run(str(snapshot), "--explain", str(explain), "--explain-pods", "other/*").exit_code == 0
    assert read_explain(explain) == []


def test_a_bad_selector_is_one_line_and_exit_2(snapshot: Path, tmp_path: Path):
    result = _run(str(snapshot), "--explain", str(tmp_path / "e.jsonl"), "--explain-selector", "app=(")
    assert result.exit_code == 2
    assert [line for line in result.output.splitlines() if line.startswith("error:")] == [
        "error: --explain-selector: invalid label selector 'app=(': cannot parse 'app=('"]


def test_explain_failed_alone_is_an_error(snapshot: Path):
    result = _run(str(snapshot), "--explain-failed")
    assert result.exit_code == 2
    assert [line for line in result.output.splitlines() if line.startswith("error:")] == [
        "error: --explain-failed narrows --explain FILE, --explain-pods or --explain-selector: give one of them too"]


@pytest.mark.parametrize("text, labels, expected", [
    ("app=web", {"app": "web"}, True),
    ("app==web", {"app": "db"}, False),
    ("app!=web", {}, True),
    ("app", {"app": ""}, True),
    ("!app", {"app": "x"}, False),
    ("env notin (a, b)", {"env": "c"}, True),
    ("env in (a,b),app", {"env": "a"}, False),
    ("", {"anything": "x"}, True),
])
def test_label_selectors_read_as_kubectl_reads_them(text: str, labels: dict, expected: bool):
    assert parse_label_query(text).matches(labels) is expected


def test_label_selector_text_that_does_not_parse_is_an_error():
    with pytest.raises(LabelQueryError):
        parse_label_query("a b c")


def test_each_line_is_written_during_its_attempt_not_after_the_run():
    from_objects = [node("n1", cpu="3"), _labelled("a"), _labelled("b"), _labelled("c", cpu="8")]
    registry = in_tree_registry()
    sims: list[Simulation] = []

    class Sink(io.BytesIO):
        """Notes how many attempts the simulation had made at each line written."""

        def __init__(self) -> None:
            super().__init__()
            self.at: list[int] = []

        def write(self, data) -> int:  # type: ignore[override]
            if data != b"\n":
                self.at.append(sims[0].attempts)
            return super().write(data)

    sink = Sink()
    stream = ExplainStream(sink, lambda: sims[0].scheduler.cache.table.order.tolist())
    snap = snapshot_from_objects([("t", o) for o in from_objects])
    sims.append(Simulation(snap, default_config(registry), registry, tie_break="name", on_attempt=stream))
    sims[0].run()
    assert sink.at == [1, 2, 3]
    assert [json.loads(line)["pod"] for line in sink.getvalue().splitlines()] == ["default/a", "default/b", "default/c"]


def test_explain_pods_without_a_file_says_why_each_matching_pod_is_pending(snapshot: Path):
    result = _run(str(snapshot), "--explain-pods", "default/db-*", "--tie-break", "name")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("default/db-1: pending after 1 attempt(s): 0/1 nodes are available: 1 Insufficient cpu."))
    assert lines[start + 1:start + 3] == [
        "  1 node(s): NodeResourcesFit: Insufficient cpu (e.g. n1)",
        "  preemption would not help: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]
    assert not any(line.startswith("default/web-1:") for line in lines)


def test_explain_pods_without_a_file_says_when_preemption_would_help(tmp_path: Path):
    low = pod("low", cpu="3", node_name="n1")
    low["spec"]["priority"] = 0
    high = _labelled("urgent", cpu="2", app="urgent")
    high["spec"]["priority"] = 1000
    snap = write_list(tmp_path / "s.yaml", [node("n1", cpu="4"), low, high])
    result = _run(str(snap), "--explain-selector", "app=urgent", "--tie-break", "name")
    assert result.exit_code == 0
    assert ("  an earlier attempt found no node; preemption helped: node n1 after evicting 1 pod(s): default/low"
            in result.output.splitlines())


def test_explain_pods_says_why_a_matching_pod_was_never_attempted(tmp_path: Path):
    gated = pod("gated-1", schedulingGates=[{"name": "example.com/quota"}])
    other = pod("mine-1", schedulerName="my-scheduler")
    snap = write_list(tmp_path / "s.yaml", [node("n1"), gated, other])
    lines = _run(str(snap), "--explain-pods", "default/*").output.splitlines()
    assert any(line.startswith("default/gated-1: pending, never attempted: waiting for scheduling gates: ")
               for line in lines)
    assert ("default/mine-1: pending, never attempted: left to another scheduler (my-scheduler): no profile of this "
            "configuration is named so") in lines
