"""`simulate`'s report at any size: groups, top nodes, pods grouped by reason, -q, JSON, the seed,
and progress on stderr."""

from __future__ import annotations

import io
import json
import re
import threading
from pathlib import Path

from click.testing import CliRunner

from dumps import node, pod, write_list
from kubesched.cli.main import cli
from kubesched.cli.progress import PhaseProgress


def run(*args: str):
    return CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)


def pools(tmp_path: Path, nodes_per_group: int = 2) -> Path:
    """Two pools over two zones; five replicas too big for any node; 4 small pods."""
    nodes = [node(f"{p}-{z}-{i}", pool=p, zone=z) for p in ("general", "memory") for z in ("a", "b")
             for i in range(nodes_per_group)]
    big = [pod(f"huge-{i}", cpu="64", labels={"app": "huge"}) for i in range(5)]
    small = [pod(f"web-{i}", cpu="1") for i in range(4)]
    return write_list(tmp_path / "s.yaml", nodes + big + small)


def test_nodes_are_summed_by_pool_and_zone(tmp_path: Path):
    out = json.loads(run(str(pools(tmp_path)), "-o", "json", "--seed", "1").output)
    groups = {(g["pool"], g["zone"]): g for g in out["nodes"]["groups"]}
    assert set(groups) == {("general", "a"), ("general", "b"), ("memory", "a"), ("memory", "b")}
    assert all(g["nodes"] == 2 and g["cpuMillicores"]["allocatable"] == 8000 for g in groups.values())
    assert sum(g["newPods"] for g in groups.values()) == 4
    assert sum(g["cpuMillicores"]["requested"] for g in groups.values()) == 4000


def test_nodes_without_a_pool_label_group_by_instance_type(tmp_path: Path):
    path = write_list(tmp_path / "s.yaml", [node("n1"), node("n2", zone="z2"), pod("p")])
    out = json.loads(run(str(path), "-o", "json").output)
    assert [(g["pool"], g["zone"]) for g in out["nodes"]["groups"]] == [("m5.xlarge", "z1"), ("m5.xlarge", "z2")]


def test_the_text_report_shows_the_groups_and_only_the_most_utilised_nodes(tmp_path: Path):
    result = run(str(pools(tmp_path, nodes_per_group=4)), "--seed", "1")
    assert "Nodes by pool and zone (requested / allocatable)" in result.output
    assert "Most utilised nodes (10 of 16; --all-nodes lists every node)" in result.output
    assert len(re.findall(r"│ (general|memory)-[ab]-\d ", result.output)) == 10


def test_all_nodes_lists_every_node(tmp_path: Path):
    path = pools(tmp_path, nodes_per_group=4)
    result = run(str(path), "--all-nodes", "--seed", "1")
    assert "Nodes (requested / allocatable)" in result.output
    assert len(re.findall(r"│ (general|memory)-[ab]-\d ", result.output)) == 16
    assert len(json.loads(run(str(path), "--all-nodes", "-o", "json").output)["nodes"]["all"]) == 16


def test_the_most_utilised_nodes_come_first(tmp_path: Path):
    path = write_list(tmp_path / "s.yaml", [node(f"n{i}", cpu="4") for i in range(12)]
                      + [pod("busy", cpu="3", node_name="n7")])
    top = json.loads(run(str(path), "-o", "json").output)["nodes"]["top"]
    assert len(top) == 10 and top[0]["name"] == "n7"


def test_unschedulable_pods_are_grouped_by_message_with_examples(tmp_path: Path):
    result = run(str(pools(tmp_path)), "--seed", "1")
    assert "Unschedulable pods (5), by reason:\n  5 pods: 0/8 nodes are available: 8 Insufficient cpu." in result.output
    assert "    default/huge-0, default/huge-1, default/huge-2 and 2 more" in result.output


def test_json_lists_every_pod_of_a_group(tmp_path: Path):
    out = json.loads(run(str(pools(tmp_path)), "--format", "json").output)
    [group] = out["unschedulable"]
    assert group["count"] == 5 and group["pods"] == [f"default/huge-{i}" for i in range(5)]
    assert group["message"].startswith("0/8 nodes are available: 8 Insufficient cpu.")
    assert out["pods"] == {"pending": 9, "scheduled": 4, "unschedulable": 5, "gated": 0, "preempted": 0,
                           "otherSchedulers": 0}


def test_quiet_prints_the_summary_line_only(tmp_path: Path):
    result = run(str(pools(tmp_path)), "-q")
    assert result.output.splitlines() == [
        f"{tmp_path / 's.yaml'}: 9 pending pod(s) on 8 node(s): 4 scheduled, 5 unschedulable, 0 gated "
        "(9 attempt(s), 0s virtual time, upstream's tie-break)"]


def test_a_random_seed_is_chosen_printed_and_repeats_the_run(tmp_path: Path):
    path = write_list(tmp_path / "s.yaml", [node(f"n{i}") for i in range(8)] + [pod(f"p{i}") for i in range(20)])
    out1, out2 = tmp_path / "1.txt", tmp_path / "2.txt"
    first = run(str(path), "-q", "--output", str(out1), "--tie-break", "random")
    seed = re.search(r"seed (\d+)\)$", first.output.strip())
    assert seed is not None
    assert run(str(path), "-q", "--output", str(out2), "--tie-break", "random", "--seed", seed[1]).exit_code == 0
    assert out1.read_text() == out2.read_text()
    assert json.loads(run(str(path), "-o", "json", "--tie-break", "random", "--seed", seed[1]).output)["seed"] == int(seed[1])


def test_the_name_tie_break_prints_no_seed(tmp_path: Path):
    result = run(str(pools(tmp_path)), "-q", "--tie-break", "name")
    assert result.output.rstrip().endswith("ties broken by name)")


def test_gated_pods_and_other_schedulers_pods_are_named_in_groups(tmp_path: Path):
    gate = {"schedulingGates": [{"name": "example.com/quota"}]}
    items = [node("n1"), pod("g1", **gate), pod("g2", **gate), pod("x1", schedulerName="volcano"),
             pod("x2", schedulerName="volcano"), pod("y1", schedulerName="yunikorn")]
    result = run(str(write_list(tmp_path / "s.yaml", items)))
    assert ("Pods waiting for scheduling gates (2):\n  2 pods: waiting for scheduling gates: [example.com/quota]\n"
            "    default/g1, default/g2") in result.output
    assert ("Pending pods left to other schedulers (3), by scheduler:\n  2 pods: volcano\n    default/x1, default/x2\n"
            "  default/y1: yunikorn") in result.output


# -- progress ------------------------------------------------------------------------------


def _wait_for(stream: io.StringIO, text: str) -> None:
    done = threading.Event()
    for _ in range(500):  # a generous bound against a hang, not a timing assertion
        if text in stream.getvalue():
            return
        done.wait(0.01)
    raise AssertionError(f"{text!r} never appeared in {stream.getvalue()!r}")


def test_a_phase_that_ends_before_the_delay_prints_nothing():
    stream = io.StringIO()
    progress = PhaseProgress(stream, terminal=False, delay=3600)
    progress.start("loading dump.yaml")
    progress.finish()
    assert stream.getvalue() == ""


def test_a_slow_phase_prints_a_few_plain_lines_off_a_terminal():
    stream = io.StringIO()
    progress = PhaseProgress(stream, terminal=False, delay=0, every=3600)
    progress.start("scheduling", total=100, unit="pods placed")
    _wait_for(stream, "scheduling... 0/100 pods placed\n")
    progress.update(50)  # within `every` of the last line: no new line
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "scheduling... 0/100 pods placed"
    assert re.fullmatch(r"scheduling: done in \d+\.\ds", lines[1]) and len(lines) == 2


def test_quiet_progress_prints_nothing():
    stream = io.StringIO()
    progress = PhaseProgress(stream, terminal=False, delay=0, enabled=False)
    progress.start("loading")
    progress.finish()
    assert stream.getvalue() == ""
