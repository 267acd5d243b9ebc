"""``--explain`` and the report say what became of a pod after its node was chosen:
Permit (a plugin's Wait, its reason, how the wait ended) and the binding cycle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli

TUTORIAL = Path(__file__).resolve().parents[2] / "examples" / "tutorial"

PAIR = "tutorial.kubesched.io/pair"
NODE = {"kind": "Node", "metadata": {"name": "node-a"}, "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: WaitForSibling
"""


def _pod(name: str, pair: str) -> dict:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": {PAIR: pair}},
            "spec": {"containers": [{"name": "c", "image": "app"}]}}


@pytest.fixture()
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(TUTORIAL))
    (tmp_path / "cluster.json").write_text(json.dumps({"kind": "List", "items": [
        NODE, _pod("left", "x"), _pod("alone", "y"), _pod("right", "x")]}))
    (tmp_path / "config.yaml").write_text(CONFIG)

    def invoke(*extra: str):
        return CliRunner().invoke(cli, ["simulate", str(tmp_path / "cluster.json"), "--config", str(tmp_path / "config.yaml"),
                                        "--plugin", "wait_for_sibling:spec", "--tie-break", "name", *extra])
    return invoke


def _records(path: Path) -> dict[str, dict]:
    return {r["pod"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_explain_records_a_wait_that_ended_in_a_timeout(run, tmp_path: Path):
    assert run("--explain", str(tmp_path / "x.jsonl")).exit_code == 0
    alone = _records(tmp_path / "x.jsonl")["default/alone"]
    message = "rejected due to timeout after waiting 1m0s at plugin WaitForSibling"
    assert alone["chosen"] == "node-a" and alone["message"] == message
    assert alone["permit"] == {"code": "Wait", "waits": [{"plugin": "WaitForSibling", "timeout": "1m0s",
                                                          "reason": "waiting for a sibling"}],
                               "outcome": "rejected", "waited": 60.0, "plugin": "WaitForSibling", "message": message}
    assert alone["binding"] == {"result": "unschedulable", "stage": "Permit", "plugin": "WaitForSibling",
                                "message": message}


def test_explain_records_a_wait_that_was_allowed_and_a_pod_that_did_not_wait(run, tmp_path: Path):
    assert run("--explain", str(tmp_path / "x.jsonl")).exit_code == 0
    records = _records(tmp_path / "x.jsonl")
    assert records["default/left"]["permit"]["outcome"] == "allowed"
    assert records["default/left"]["binding"] == {"result": "bound"}
    assert records["default/right"]["permit"] == {"code": "Success"}
    assert records["default/right"]["message"] is None


def test_the_report_lists_pods_that_waited_at_permit_by_outcome(run):
    out = run().stdout
    assert "Pods that waited at Permit (2), by outcome:\n" in out
    assert "  default/left: waited for WaitForSibling (waiting for a sibling); allowed\n" in out
    assert ("  default/alone: waited for WaitForSibling (waiting for a sibling); rejected: rejected due to timeout "
            "after waiting 1m0s at plugin WaitForSibling\n") in out


def test_the_json_report_lists_them_too(run):
    document = json.loads(run("-o", "json").stdout)
    assert {g["outcome"]: g["pods"] for g in document["permit"]} == {
        "waited for WaitForSibling (waiting for a sibling); allowed": ["default/left"],
        "waited for WaitForSibling (waiting for a sibling); rejected: rejected due to timeout after waiting 1m0s "
        "at plugin WaitForSibling": ["default/alone"]}


def test_explain_pods_on_the_terminal_says_a_pod_waited_and_how_it_ended(run):
    out = run("--explain-pods", "default/*").stdout
    assert ("default/alone: pending after 1 attempt(s): node node-a was chosen, then Permit failed: rejected due to "
            "timeout after waiting 1m0s at plugin WaitForSibling\n"
            "  Permit: waited 60.0s for WaitForSibling (waiting for a sibling, timeout 1m0s): rejected\n") in out
    assert ("default/left: scheduled on node-a (attempt 1, 1 of 1 evaluated node(s) feasible)\n"
            "  Permit: waited 0.0s for WaitForSibling (waiting for a sibling, timeout 1m0s): allowed\n") in out
