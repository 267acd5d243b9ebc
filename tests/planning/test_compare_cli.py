"""`kubesched compare` on the command line: the terminal table, the HTML and JSON reports, bad input (exit 2)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from kubesched.cli import compare_cmd
from kubesched.cli.main import cli
from tests.helpers import node
from tests.planning.clusters import copies, small_pod, write

DATA = Path(__file__).parent / "data"
MOST_ALLOCATED = str(DATA / "most-allocated.yaml")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["compare", *args])


def _cluster(tmp_path: Path) -> str:
    nodes = [node(f"n{i}", cpu="8", memory="32Gi") for i in range(3)]
    return write(tmp_path / "cluster.yaml", *nodes, *copies(small_pod("web"), 3, "web"))


def _one_error(result: Result) -> str:
    assert result.exit_code == 2, result.output
    found = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(found) == 1, result.output
    assert "Traceback" not in result.output
    return found[0]


def test_the_table_puts_configs_side_by_side(tmp_path: Path) -> None:
    result = run(_cluster(tmp_path), "--config", "default", "--config", MOST_ALLOCATED, "--seed", "2")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "3 pending pod(s) on 3 node(s) under 2 configurations (seed 2)" in out
    assert "most-allocated.yaml" in out and "(baseline)" in out
    assert "nodes given new pods" in out and "free cpu stranded" in out
    assert "Pods placed differently" in out


def test_html_and_json_reports_are_written(tmp_path: Path) -> None:
    html, data = tmp_path / "report.html", tmp_path / "compare.json"
    result = run(_cluster(tmp_path), "--config", "default", "--config", MOST_ALLOCATED,
                 "--report", str(html), "--json", str(data))
    assert result.exit_code == 0, result.output
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('src="data:image/png;base64,') == 3  # self-contained: the plots are inline
    assert "most-allocated.yaml" in page and "Pods placed differently" in page
    doc = orjson.loads(data.read_bytes())
    assert [c["label"] for c in doc["configs"]] == ["default", "most-allocated.yaml"]
    assert doc["configs"][1]["nodesWithNewPods"] == 1
    assert doc["configs"][0]["fragmentation"]["shape"] == {"cpu": 1000, "memory": 2**30}
    assert f"wrote {html}" in result.output


def test_json_to_standard_output_is_the_whole_output(tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    result = run(_cluster(tmp_path), "--config", "default", "--config", "default", "--json", "-", "--report", str(html))
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.output)["pods"] == []
    assert html.exists()


def test_one_config_is_not_a_comparison(tmp_path: Path) -> None:
    assert "two or more --config" in _one_error(run(_cluster(tmp_path), "--config", "default"))


def test_a_missing_config_file_is_one_line(tmp_path: Path) -> None:
    line = _one_error(run(_cluster(tmp_path), "--config", "default", "--config", str(tmp_path / "nope.yaml")))
    assert "nope.yaml" in line


def test_an_invalid_config_names_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n  - schedulerName: default-scheduler\n    plugins:\n      score:\n"
                   "        enabled:\n          - name: NoSuchPlugin\n")
    result = run(_cluster(tmp_path), "--config", "default", "--config", str(bad))
    assert result.exit_code == 2
    assert all(line.startswith(f"error: {bad}: ") for line in result.output.splitlines() if line.strip())
    assert "NoSuchPlugin" in result.output


def test_a_config_that_is_not_yaml_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("profiles: [unclosed\n")
    assert str(bad) in _one_error(run(_cluster(tmp_path), "--config", "default", "--config", str(bad)))


def test_a_missing_snapshot_is_one_line(tmp_path: Path) -> None:
    line = _one_error(run(str(tmp_path / "none.yaml"), "--config", "default", "--config", "default"))
    assert "none.yaml" in line


def test_a_report_in_a_missing_directory_fails_before_the_run(tmp_path: Path) -> None:
    line = _one_error(run(_cluster(tmp_path), "--config", "default", "--config", "default",
                          "--report", str(tmp_path / "no" / "r.html")))
    assert "no such directory" in line


def test_a_report_without_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(compare_cmd.importlib.util, "find_spec",
                        lambda name, *args: None if name == "matplotlib" else real(name, *args))
    line = _one_error(run(_cluster(tmp_path), "--config", "default", "--config", "default",
                          "--report", str(tmp_path / "r.html")))
    assert "pip install 'kubesched[research]'" in line
    assert not (tmp_path / "r.html").exists()
