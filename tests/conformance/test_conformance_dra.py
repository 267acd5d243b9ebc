"""Upstream kube-scheduler v1.36.2's decisions on 100 scenarios with Dynamic Resource Allocation.

As ``test_conformance.py``, with DeviceClasses, ResourceSlices, ResourceClaims and
templates in the scenario, pods using claims or DRA-backed extended resources, and nodes
declaring features: the simulator plays the resourceclaim controller first, writes each
allocation back between pods, and each queued pod's first attempt must match upstream's,
the devices allocated to its claims included (see ``cases-dra/README.md``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.conformance import compare, load_case, run_scenario

CASES = sorted((Path(__file__).parent / "cases-dra").glob("scn-*.json.gz"))


def test_the_dra_corpus_is_complete():
    assert len(CASES) == 100


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name.split(".")[0]) for p in CASES])
def test_first_attempts_with_dra_match_upstream(path: Path):
    case = load_case(path)
    expected = case["expected"]["results"]
    actual = run_scenario(case["scenario"])
    assert len(actual) == len(expected)
    differences = [line for e, a in zip(expected, actual) for line in compare(e, a)]
    assert not differences, "\n".join(differences[:20])
