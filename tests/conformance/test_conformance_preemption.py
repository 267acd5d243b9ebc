"""Upstream kube-scheduler v1.36.2's decisions with preemption on, reproduced field by field.

Each scenario (``cases-preemption/``, see its README) runs through kubesched's simulator
with the default profile (DefaultPreemption included), percentageOfNodesToScore 100 and
the name tie-break. Each queued pod's first attempt must match upstream's: filter
results, scores, the chosen node, the whole FitError message with its preemption part,
and what PostFilter did: its code and message, the nominated node, the exact victims
and the candidates still tied after upstream's five criteria. DynamicResources' PostFilter
runs first, as upstream's, and its "no new claims to deallocate" joins the message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.conformance import compare, load_case
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.explain import attempt_record
from kubesched.scheduler.scheduler import Attempt

CASES = sorted((Path(__file__).parent / "cases-preemption").glob("scn-*.json.gz"))
CONFIG = {"apiVersion": API_VERSION, "kind": KIND, "percentageOfNodesToScore": 100,
          "profiles": [{"schedulerName": "default-scheduler"}]}
PLUGIN_KINDS = frozenset({"PodDisruptionBudget"})


def run_scenario(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """First-attempt records of the queued pods, in queue order."""
    objects = [("scenario", {**n, "kind": "Node"}) for n in scenario.get("nodes", [])]
    objects += [("scenario", {**ns, "kind": "Namespace"}) for ns in scenario.get("namespaces", []) or []]
    objects += [("scenario", {**pc, "kind": "PriorityClass"}) for pc in scenario.get("priorityClasses", []) or []]
    objects += [("scenario", {**pdb, "kind": "PodDisruptionBudget"}) for pdb in scenario.get("pdbs", []) or []]
    objects += [("scenario", {**p, "kind": "Pod"}) for p in scenario.get("pods", [])]
    snapshot = snapshot_from_objects(objects, plugin_kinds=PLUGIN_KINDS)
    queue = []
    for p in scenario.get("queue", []):
        queue.extend(snapshot_from_objects([("scenario", {**p, "kind": "Pod"})]).pending_pods)
    snapshot.pending_pods = queue
    registry = in_tree_registry()
    config = parse_config(CONFIG, registry, UPSTREAM_ONLY)
    records: dict[str, dict[str, Any]] = {}
    sims: list[Simulation] = []

    def on_attempt(attempt: Attempt) -> None:
        if attempt.attempt == 1 and attempt.pod.key not in records:
            records[attempt.pod.key] = attempt_record(attempt, sims[0].scheduler.cache.table.order.tolist())

    sim = Simulation(snapshot, config, registry, tie_break="name", on_attempt=on_attempt)
    sims.append(sim)
    sim.run()
    return [records.get(p.key, {"pod": p.key, "missing": True}) for p in queue]


def compare_post_filter(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    pod = expected["pod"]
    e, a = expected.get("postFilter"), actual.get("postFilter")
    if e is None or a is None:
        return [] if e is a else [f"{pod}: postFilter: expected {e!r}, got {a!r}"]
    diffs = []
    for key in ("code", "message", "nominatedNode", "victims", "tiedCandidates"):
        want = e.get(key)
        if want != a.get(key):
            diffs.append(f"{pod}: postFilter.{key}: expected {want!r}, got {a.get(key)!r}")
    return diffs


def _param(path: Path):
    return pytest.param(path, id=path.name.split(".")[0])


def test_the_corpus_is_complete():
    assert len(CASES) == 97


@pytest.mark.parametrize("path", [_param(p) for p in CASES])
def test_first_attempts_match_upstream_with_preemption(path: Path):
    case = load_case(path)
    expected = case["expected"]["results"]
    actual = run_scenario(case["scenario"])
    assert len(actual) == len(expected)
    differences = []
    for e, a in zip(expected, actual):
        differences += compare(e, a)
        differences += compare_post_filter(e, a)
    assert not differences, "\n".join(differences[:20])
