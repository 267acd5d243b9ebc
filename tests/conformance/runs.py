"""The whole-run workloads (``cases-runs/``) and how the tests run them through ``simulate``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import cli

__all__ = ["CASES", "load_case", "simulate_run"]

CASES = sorted((Path(__file__).parent / "cases-runs").glob("*.json.gz"))


def load_case(path: Path) -> dict[str, Any]:
    with gzip.open(path) as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def simulate_run(case: dict[str, Any], tmp: Path, *extra: str) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Run ``simulate`` on the workload as the README says (a kubectl ``List`` of its
    namespaces, nodes, bound and queued pods, its config in a file, the default tie-break):
    each pod's last binding, and its first attempt's explain record. ``extra``: more
    ``simulate`` arguments (``--feature-gates ...``)."""
    scenario = case["scenario"]
    items = [{"apiVersion": "v1", "kind": "Namespace", **ns} for ns in scenario.get("namespaces") or []]
    items += [{"apiVersion": "v1", "kind": "Node", **n} for n in scenario["nodes"]]
    items += [{"apiVersion": "v1", "kind": "Pod", **p} for p in scenario["pods"] + scenario["queue"]]
    (tmp / "list.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    (tmp / "config.json").write_text(json.dumps(case["config"]))
    result = CliRunner().invoke(cli, ["simulate", str(tmp / "list.json"), "--config", str(tmp / "config.json"),
                                      "--output", str(tmp / "out.txt"), "--explain", str(tmp / "explain.jsonl"),
                                      "--quiet", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    bound: dict[str, str] = {}
    for line in (tmp / "out.txt").read_text().splitlines():
        pod, _, node = line.partition(" -> ")
        bound[pod] = node
    first: dict[str, dict[str, Any]] = {}
    for line in (tmp / "explain.jsonl").read_text().splitlines():
        record = json.loads(line)
        first.setdefault(record["pod"], record)
    return bound, first
