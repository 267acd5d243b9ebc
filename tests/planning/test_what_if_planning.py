"""`capacity` and `compare` with what-if edits (--drain, --add, --remove): the edits are applied
to the snapshot before they run, named on stderr and in the report's snapshot name."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.cli.dumps import node, pod, write_list


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def cluster(tmp_path: Path) -> str:
    return str(write_list(tmp_path / "s.yaml", [node("n1", cpu="4"), node("n2", cpu="4"),
                                                pod("web-0", cpu="1", node_name="n2", owner="web")]))


def spec(tmp_path: Path) -> str:
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod("more", cpu="1")))
    return str(path)


def test_capacity_counts_what_fits_after_a_drain(tmp_path: Path):
    snap = cluster(tmp_path)
    before = invoke("capacity", snap, spec(tmp_path), "-o", "json", "--seed", "1")
    after = invoke("capacity", snap, spec(tmp_path), "--drain", "n2", "-o", "json", "--seed", "1")
    assert json.loads(before.stdout)["replicas"] == 7
    assert json.loads(after.stdout)["replicas"] == 3  # n1 only, web-0 moved there
    assert "What-if edits, applied before scheduling:\n  drain node n2\n" in after.stderr


def test_capacity_counts_an_added_node(tmp_path: Path):
    extra = write_list(tmp_path / "more.yaml", [node("n3", cpu="4")])
    out = invoke("capacity", cluster(tmp_path), spec(tmp_path), "--add", str(extra), "-o", "json", "--seed", "1")
    assert json.loads(out.stdout)["replicas"] == 11


def test_compare_schedules_the_drained_pods_under_each_configuration(tmp_path: Path):
    out = invoke("compare", cluster(tmp_path), "--config", "default", "--config", "default", "--drain", "n2",
                 "--json", "-", "--seed", "1")
    doc = json.loads(out.stdout)
    assert doc["pending"] == 1
    assert doc["snapshot"].endswith("(edited: drain node n2)")


def test_an_edit_naming_nothing_stops_capacity_with_one_line(tmp_path: Path):
    out = invoke("capacity", cluster(tmp_path), spec(tmp_path), "--remove", "node/n9")
    assert out.exit_code == 2
    assert out.stderr.splitlines() == ["error: --remove node/n9: no such object in the snapshot"]
