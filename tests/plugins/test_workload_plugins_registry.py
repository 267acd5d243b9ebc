"""The workload-aware plugins in the registry and the default profile (upstream's applyFeatureGates):
absent with their gates off (the default profile unchanged), GangScheduling appended with its gate,
TopologyPlacementGenerator and PodGroupPodsCount (weight 1) appended after it with
TopologyAwareWorkloadScheduling, and NodeResourcesFit scoring placements only then; and
``MatchingSchedulingGroup`` (upstream's helper/podgroup_test.go)."""

from __future__ import annotations

import pytest

from kubesched.framework.features import DEFAULT_FEATURES, Features
from kubesched.framework.profile import build_profiles
from kubesched.framework.config import default_config
from kubesched.objects.pod import PodInfo
from kubesched.plugins.helper import matching_scheduling_group
from kubesched.plugins.registry import UPSTREAM_ONLY, default_plugins, in_tree_registry

from ..helpers import Cluster
from .podgroup_fakes import member

ALL_ON = Features(enable_generic_workload=True, enable_gang_scheduling=True, enable_topology_aware_workload_scheduling=True)
WORKLOAD = ("GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount")


def names(features: Features) -> list[str]:
    return [p.name for p in default_plugins(features)]


def test_with_the_gates_off_the_default_profile_has_none_of_them() -> None:
    assert not set(WORKLOAD) & set(names(DEFAULT_FEATURES))
    assert names(Features(enable_generic_workload=True)) == names(DEFAULT_FEATURES)


def test_with_the_gates_on_they_come_last_in_upstreams_order() -> None:
    plugins = default_plugins(ALL_ON)
    assert [(p.name, p.weight) for p in plugins[-3:]] == [
        ("GangScheduling", 0), ("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1)]
    assert [p.name for p in plugins[:-3]] == names(DEFAULT_FEATURES)


def test_gang_scheduling_alone_adds_only_its_plugin() -> None:
    gang = Features(enable_generic_workload=True, enable_gang_scheduling=True)
    assert names(gang) == names(DEFAULT_FEATURES) + ["GangScheduling"]


def test_they_are_implemented_so_a_config_may_enable_them() -> None:
    registry = in_tree_registry()
    assert all(name in registry for name in WORKLOAD)
    assert not set(WORKLOAD) & UPSTREAM_ONLY


def points(features: Features) -> dict[str, list[dict[str, object]]]:
    registry = in_tree_registry(features)
    cluster = Cluster()
    fwk = build_profiles(default_config(registry), registry, lambda name: cluster.handle)["default-scheduler"]
    return fwk.list_plugins()


def test_the_default_profile_runs_them_at_upstreams_points() -> None:
    # (the handle's gates are the default ones here: NodeResourcesFit scores placements by the
    # handle's gates, the default profile's list by the registry's)
    resolved = points(ALL_ON)
    assert resolved["preEnqueue"][-1] == {"name": "GangScheduling"}
    assert resolved["permit"] == [{"name": "GangScheduling"}]
    assert resolved["placementGenerate"] == [{"name": "TopologyPlacementGenerator"}]
    assert {"name": "PodGroupPodsCount", "weight": 1} in resolved["placementScore"]


def test_with_the_gates_off_the_profile_has_no_placement_points() -> None:
    resolved = points(DEFAULT_FEATURES)
    assert "placementGenerate" not in resolved and "placementScore" not in resolved
    assert "permit" not in resolved


@pytest.mark.parametrize("a, b, expected", [
    pytest.param(member("pod1", "name", namespace="test"), member("pod1", "name", namespace="test"), True,
                 id="same pod with schedulingGroup"),
    pytest.param(member("pod1", "name", namespace="test"), member("pod2", "name", namespace="test"), True,
                 id="different pods, same schedulingGroup"),
    pytest.param(member("pod1", None, namespace="test"), member("pod1", None, namespace="test"), False,
                 id="same pod but no schedulingGroup"),
    pytest.param(member("pod1", "name", namespace="test"), member("pod2", None, namespace="test"), False,
                 id="different pods, only one with schedulingGroup"),
    pytest.param(member("pod1", "name", namespace="test1"), member("pod2", "name", namespace="test2"), False,
                 id="same schedulingGroup but different namespaces"),
    pytest.param(member("pod1", "name1", namespace="test"), member("pod2", "name2", namespace="test"), False,
                 id="same namespace but different pod group"),
])
def test_matching_scheduling_group(a: PodInfo, b: PodInfo, expected: bool) -> None:
    assert matching_scheduling_group(a, b) is expected
