"""Upstream kube-scheduler v1.36.2's decisions on 75 scenarios with volumes, reproduced field by field.

As ``test_conformance.py``, with PersistentVolumes, claims, StorageClasses and CSI
objects in the scenario: each runs through the simulator (default profile, preemption
disabled, percentageOfNodesToScore 100, name tie-break), the simulated cluster playing
the PV controller's part between pods, and each queued pod's first attempt must match
upstream's (see ``cases-volumes/README.md``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.conformance import compare, load_case, run_scenario

CASES = sorted((Path(__file__).parent / "cases-volumes").glob("scn-*.json.gz"))


def test_the_volume_corpus_is_complete():
    assert len(CASES) == 75


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name.split(".")[0]) for p in CASES])
def test_first_attempts_with_volumes_match_upstream(path: Path):
    case = load_case(path)
    expected = case["expected"]["results"]
    actual = run_scenario(case["scenario"])
    assert len(actual) == len(expected)
    differences = [line for e, a in zip(expected, actual) for line in compare(e, a)]
    assert not differences, "\n".join(differences[:20])
