"""The earlier corpora with the workload-aware gates on: GenericWorkload, GangScheduling and
TopologyAwareWorkloadScheduling change nothing for pods that name no pod group. Their
plugins join the default profile (GangScheduling at PreEnqueue and Permit, the placement
plugins at points ordinary pods never reach) and the queue, cache and cycle learn of pod
groups; the first attempts of ``cases/`` and the whole runs of ``cases-runs/`` must still be
upstream's, field by field and pod for pod.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.conformance import compare, load_case, run_scenario
from kubesched.framework.features import Features
from tests.conformance.runs import CASES as RUN_CASES
from tests.conformance.runs import load_case as load_run
from tests.conformance.runs import simulate_run

GATES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
GATES_FLAG = ",".join(f"{name}=true" for name in GATES)
SCENARIOS = sorted((Path(__file__).parent / "cases").glob("scn-*.json.gz"))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name.split(".")[0] for p in SCENARIOS])
def test_first_attempts_match_upstream_with_the_workload_gates_on(path: Path) -> None:
    case = load_case(path)
    actual = run_scenario(case["scenario"], Features.from_gates(GATES))
    expected = case["expected"]["results"]
    assert len(actual) == len(expected)
    differences = [line for e, a in zip(expected, actual) for line in compare(e, a)]
    assert not differences, "\n".join(differences[:20])


@pytest.mark.parametrize("path", RUN_CASES, ids=[p.name.removesuffix(".json.gz") for p in RUN_CASES])
def test_whole_runs_bind_as_upstream_with_the_workload_gates_on(path: Path, tmp_path: Path) -> None:
    case: dict[str, Any] = load_run(path)
    bound, _ = simulate_run(case, tmp_path, "--feature-gates", GATES_FLAG)
    wrong = []
    for expected in case["expected"]["results"]:
        want = expected.get("node") or expected.get("nominated")
        if bound.get(expected["pod"]) != want:
            wrong.append(f"{expected['pod']}: upstream {want}, kubesched {bound.get(expected['pod'])}")
    assert not wrong, f"{len(wrong)} pods differ; first: {wrong[:5]}"
