"""The workload-aware scenarios (``cases-workloads/``) and how the tests run them through
``simulate``: a kubectl ``List`` of the nodes, bound pods, Workloads, PodGroups and queued
pods (queue order), a configuration with ``parallelism: 1``, the scenario's feature gates,
``--output`` for the bindings and ``--explain`` for the cycles."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import cli

__all__ = ["CASES", "Run", "cycles_of", "load_case", "simulate_workload"]

CASES = sorted((Path(__file__).parent / "cases-workloads").glob("*.json.gz"))

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 1}


def load_case(path: Path) -> dict[str, Any]:
    with gzip.open(path) as fh:
        data: dict[str, Any] = json.load(fh)
    return data


class Run:
    """What ``simulate`` did with one scenario: each pod's binding and every explain record."""

    def __init__(self, bound: dict[str, str], records: list[dict[str, Any]]) -> None:
        self.bound = bound
        self.records = records


def simulate_workload(case: dict[str, Any], tmp: Path, *extra: str) -> Run:
    scenario = case["scenario"]
    items: list[dict[str, Any]] = []
    items += scenario["nodes"]
    items += scenario["pods"]
    # No Workload: the scheduler reads none (see test_conformance_workloads.py).
    items += scenario.get("podGroups") or []
    items += scenario["queue"]
    (tmp / "list.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    (tmp / "config.json").write_text(json.dumps(CONFIG))
    args = ["simulate", str(tmp / "list.json"), "--config", str(tmp / "config.json"),
            "--feature-gates", case["featureGates"], "--output", str(tmp / "out.txt"),
            "--explain", str(tmp / "explain.jsonl"), "--quiet", *extra]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    bound: dict[str, str] = {}
    for line in (tmp / "out.txt").read_text().splitlines():
        pod, _, node = line.partition(" -> ")
        bound[pod] = node
    records = [json.loads(line) for line in (tmp / "explain.jsonl").read_text().splitlines()]
    return Run(bound, records)


def cycles_of(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scheduling cycles the explain records tell of, in order, in the shape of the
    corpus's ``expected.cycles``: a pod alone, or a pod group's pods in the order tried,
    each with its node or message."""
    cycles: list[dict[str, Any]] = []
    groups: dict[tuple[str, int], dict[str, Any]] = {}
    for record in records:
        group = record.get("podGroup")
        result = {"pod": record["pod"], "node": record.get("chosen"), "attempt": record["attempt"],
                  "outcome": "placed" if record.get("chosen") else "unschedulable"}
        if not record.get("chosen"):
            result["message"] = record.get("message")
        if group is None:
            cycles.append({"start": record.get("walk", {}).get("start"), "results": [result]})
            continue
        key = (group["group"], group["cycle"])
        cycle = groups.get(key)
        if cycle is None:
            cycle = groups[key] = {"group": group["group"], "order": group["order"], "results": [],
                                   "placements": group.get("placements"), "condition": group.get("condition")}
            cycles.append(cycle)
        cycle["results"].append(result)
    for cycle in cycles:
        if "order" in cycle:
            rank = {pod: i for i, pod in enumerate(cycle["order"])}
            cycle["results"].sort(key=lambda r: rank.get(r["pod"], len(rank)))
    return cycles
