"""The contract suite on every in-tree plugin: the ones with both forms of Filter or Score
must agree row by row, every score must be in range, declarations must hold."""

from __future__ import annotations

import pytest

from kubesched.framework import BatchFilterPlugin, BatchScorePlugin, FilterPlugin, PluginSpec, ScorePlugin
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import (
    assert_declarations,
    assert_forms_agree,
    assert_plugin_contract,
    assert_unreserve_idempotent,
    random_clusters,
)

CLUSTERS = random_clusters(40, seed=1)
REGISTRY = in_tree_registry()

# Plugins whose both forms the suite must compare: if one lost a form, this list says so.
BOTH_FILTER_FORMS = {"NodeUnschedulable", "NodeName", "NodePorts", "TaintToleration", "NodeAffinity",
                     "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "NodeDeclaredFeatures",
                     "DynamicResources", "NodeVolumeLimits", "VolumeBinding"}
BOTH_SCORE_FORMS = {"TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity", "DynamicResources"}

# Non-default args worth their own run.
ARGS: list[tuple[str, object]] = [
    ("NodeAffinity", {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["hdd"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 7, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["fast"]}]}}],
    }}),
    ("NodeResourcesFit", {"ignoredResourceGroups": ["example.com"]}),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}}),
    ("PodTopologySpread", {"defaultingType": "List"}),  # signs the pods without constraints
]


def spec(name: str) -> PluginSpec[object]:
    found = REGISTRY.get(name)
    assert found is not None, name
    return found


def forms(name: str) -> tuple[bool, bool]:
    plugin = spec(name).build(spec(name).decode(None), CLUSTERS[0].handle)
    return (isinstance(plugin, BatchFilterPlugin) and isinstance(plugin, FilterPlugin),
            isinstance(plugin, BatchScorePlugin) and isinstance(plugin, ScorePlugin))


def test_the_plugins_with_both_forms_are_the_expected_ones() -> None:
    filters = {n for n in REGISTRY.names() if forms(n)[0]}
    scores = {n for n in REGISTRY.names() if forms(n)[1]}
    assert filters == BOTH_FILTER_FORMS
    assert scores == BOTH_SCORE_FORMS


# Plugins whose PreScore skips every pod under v1.36's feature gates (VolumeBinding without
# StorageCapacityScoring): no score to range-check; the rest of the contract still applies.
NEVER_SCORE = {"VolumeBinding"}
# Plugins whose PreFilter skips every pod random_clusters makes (no pod there needs a node
# feature, has a ResourceClaim or a PVC): their forms are compared in their own specs
# (tests/plugins/test_nodedeclaredfeatures.py, test_dynamicresources.py, and for the storage
# filters test_volume_filter_forms.py, on random clusters with claims); the rest applies here.
NOTHING_TO_FILTER = {"NodeDeclaredFeatures", "DynamicResources", "NodeVolumeLimits", "VolumeBinding"}


@pytest.mark.parametrize("name", REGISTRY.names())
def test_in_tree_plugin_meets_the_contract(name: str) -> None:
    if name in NEVER_SCORE or name in NOTHING_TO_FILTER:
        assert_declarations(spec(name), None, (), CLUSTERS)
        if hasattr(spec(name).build(None, CLUSTERS[0].handle), "unreserve"):
            assert_unreserve_idempotent(spec(name), None, CLUSTERS)
        return
    report = assert_plugin_contract(spec(name), None, clusters=CLUSTERS)
    if name in BOTH_FILTER_FORMS:
        assert report.filter_rows_compared >= 100 and report.filter_rows_rejected >= 10, report
    if name in BOTH_SCORE_FORMS:
        assert report.score_rows_compared >= 50 and len(report.score_values) >= 2, report


@pytest.mark.parametrize(("name", "args"), ARGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ARGS)])
def test_in_tree_plugin_with_args_meets_the_contract(name: str, args: object) -> None:
    assert_plugin_contract(spec(name), args, clusters=CLUSTERS)


def test_forms_agree_on_clusters_with_more_pods_per_cluster() -> None:
    crowded = random_clusters(10, seed=7, max_nodes=20, pending_pods=20)
    for name in sorted((BOTH_FILTER_FORMS | BOTH_SCORE_FORMS) - NOTHING_TO_FILTER):
        assert_forms_agree(spec(name), None, crowded)
