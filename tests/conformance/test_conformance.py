"""Upstream kube-scheduler v1.36.2's decisions on 100 scenarios, reproduced field by field.

Each scenario runs through kubesched's simulator with the default profile,
preemption disabled, percentageOfNodesToScore 100 and the name tie-break; each
queued pod's first attempt must match upstream's: feasible nodes, every filtered
node's plugin, code and reasons, per-plugin weighted scores and totals, the best
nodes, the chosen node and the "0/N nodes are available" message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.conformance import compare, load_case, run_scenario

CASES = sorted((Path(__file__).parent / "cases").glob("scn-*.json.gz"))

def _param(path: Path):
    return pytest.param(path, id=path.name.split(".")[0])


def test_the_corpus_is_complete():
    assert len(CASES) == 100


@pytest.mark.parametrize("path", [_param(p) for p in CASES])
def test_first_attempts_match_upstream(path: Path):
    case = load_case(path)
    expected = case["expected"]["results"]
    actual = run_scenario(case["scenario"])
    assert len(actual) == len(expected)
    differences = [line for e, a in zip(expected, actual) for line in compare(e, a)]
    assert not differences, "\n".join(differences[:20])
