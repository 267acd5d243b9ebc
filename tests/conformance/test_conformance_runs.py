"""Whole runs against upstream v1.36.2 (``cases-runs/README.md``): ``kubesched simulate``
schedules each workload's queue and every queued pod must land where upstream's real
scheduling cycle (``scheduler.New`` and ``ScheduleOne`` per pod, ``parallelism: 1``) bound
it: the heap tie-break, the adaptive node walk with its rotating start index, the node
tree order, OpportunisticBatching and preemption, all at their defaults.

Each workload runs the way the README says: a kubectl ``List`` of its namespaces, nodes,
bound pods and queued pods (queue order), its ``config`` in a file, ``simulate --output``,
with the default tie-break. The explain records must also show upstream's walk for every
pod's first attempt: the start index, how far the walk moved it, the feasible nodes kept,
and whether a batch hint placed the pod.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.runs import CASES, load_case, simulate_run


@pytest.fixture(scope="module", params=CASES, ids=[p.name.removesuffix(".json.gz") for p in CASES])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, str], dict[str, dict[str, Any]]]:
    case = load_case(request.param)
    bound, first = simulate_run(case, tmp_path_factory.mktemp("run"))
    return case, bound, first


def test_every_pod_is_bound_where_upstream_bound_it(run: tuple[dict[str, Any], dict[str, str], dict[str, dict[str, Any]]]) -> None:
    case, bound, _ = run
    wrong = []
    for expected in case["expected"]["results"]:
        # A pod that preempted was only nominated upstream (not retried): binding it to
        # its nominated node on a retry is the same decision.
        want = expected.get("node") or expected.get("nominated")
        got = bound.get(expected["pod"])
        if got != want:
            wrong.append(f"{expected['pod']}: upstream {want}, kubesched {got}")
    assert not wrong, f"{len(wrong)} of {len(case['expected']['results'])} pods differ; first: {wrong[:5]}"


def test_every_first_attempt_walks_as_upstream(run: tuple[dict[str, Any], dict[str, str], dict[str, dict[str, Any]]]) -> None:
    case, _, first = run
    wrong = []
    for expected in case["expected"]["results"]:
        if expected["outcome"] == "gated":
            assert expected["pod"] not in first  # never attempted
            continue
        walk = first[expected["pod"]]["walk"]
        want = {"start": expected["start"], "feasibleFound": expected["feasibleFound"], "hint": expected["hint"],
                "signed": "sig" in expected}
        got = {"start": walk["start"], "feasibleFound": walk["feasibleFound"], "hint": walk["hint"],
               "signed": "signature" in walk}
        if expected["outcome"] == "placed":  # a hint moves nothing; upstream reports 1 node evaluated
            want["evaluated"] = expected["evaluated"]
            got["evaluated"] = 1 if walk["hint"] == "used" else walk["evaluated"]
        if got != want:
            wrong.append(f"{expected['pod']}: upstream {want}, kubesched {got}")
    assert not wrong, f"{len(wrong)} pods walked differently; first: {wrong[:5]}"


def test_batching_workloads_use_hints_only_with_list_defaulting(run: tuple[dict[str, Any], dict[str, str], dict[str, dict[str, Any]]]) -> None:
    case, _, first = run
    used = sum(1 for r in first.values() if r.get("walk", {}).get("hint") == "used")
    assert used == case["expected"]["counts"]["hintUsed"]
    if case["expected"]["settings"]["podTopologySpreadDefaulting"] == "System":
        assert used == 0  # the default profile's system constraints sign no pod
