"""``--feature-gates``: v1.36's defaults, kube-scheduler's refusals, and the default profile they decide."""

from __future__ import annotations

import pytest

from kubesched.framework.features import (
    DEFAULT_FEATURES,
    GATE_DEPENDENCIES,
    GATES,
    FeatureGateError,
    Features,
    GateSpec,
    parse_feature_gates,
)
from kubesched.plugins.registry import default_plugins


def test_defaults_are_v1_36s():
    assert DEFAULT_FEATURES.enable_dynamic_resource_allocation
    assert DEFAULT_FEATURES.enable_dra_extended_resource
    assert DEFAULT_FEATURES.enable_node_declared_features
    assert not DEFAULT_FEATURES.enable_dra_device_taint_rules
    assert not DEFAULT_FEATURES.enable_dra_list_type_attributes
    assert not DEFAULT_FEATURES.enable_storage_capacity_scoring


NODE_DECLARED_FEATURES_OFF = ("NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,"
                              "InPlacePodLevelResourcesVerticalScaling=false,InPlacePodVerticalScalingInitContainers=false,"
                              "RestartAllContainersOnContainerExits=false")


def test_a_gate_set_false_reaches_the_struct():
    features = Features.from_gates(parse_feature_gates(["DRAExtendedResource=false", NODE_DECLARED_FEATURES_OFF]))
    assert not features.enable_dra_extended_resource
    assert not features.enable_node_declared_features
    assert features.enabled("DRAExtendedResource") is False


def test_repeated_flags_apply_in_order():
    assert parse_feature_gates(["DRADeviceTaints=false", "DRADeviceTaints=true"]) == {"DRADeviceTaints": True}


def test_all_alpha_switches_every_unlocked_alpha_gate():
    gates = parse_feature_gates(["AllAlpha=true"])
    assert gates["DRAListTypeAttributes"] is True
    assert "DRAExtendedResource" not in gates  # beta


@pytest.mark.parametrize("value, message", [
    ("Foo=true", 'invalid argument "Foo=true" for "--feature-gates" flag: unrecognized feature gate: Foo'),
    ("DRADeviceTaints", 'invalid argument "DRADeviceTaints" for "--feature-gates" flag: missing bool value for DRADeviceTaints'),
    ("DRADeviceTaints=yes", 'invalid argument "DRADeviceTaints=yes" for "--feature-gates" flag: invalid value of '
                            'DRADeviceTaints=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'),
    ("DynamicResourceAllocation=false", 'invalid argument "DynamicResourceAllocation=false" for "--feature-gates" flag: '
                                        "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
])
def test_refused_as_kube_scheduler_refuses(value, message):
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates([value])
    assert str(err.value) == message


WL = "GenericWorkload=true"


@pytest.mark.parametrize("values, message", [
    (["GangScheduling=true"], "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    (["TopologyAwareWorkloadScheduling=true"],
     "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ([f"{WL},WorkloadAwarePreemption=true"],
     "WorkloadAwarePreemption is enabled, but depends on features that are disabled: [GangScheduling]"),
    (["DRAWorkloadResourceClaims=true"],
     "DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: [GenericWorkload]"),
    (["WorkloadAwarePreemption=true"],
     "WorkloadAwarePreemption is enabled, but depends on features that are disabled: [GangScheduling]"),
    (["GangScheduling=true,TopologyAwareWorkloadScheduling=true"],
     "[GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload], "
     "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]]"),
    (["DRAResourceClaimDeviceStatus=false"],
     "[DRADeviceBindingConditions is enabled, but depends on features that are disabled: [DRAResourceClaimDeviceStatus], "
     "DRAResourceClaimGranularStatusAuthorization is enabled, but depends on features that are disabled: "
     "[DRAResourceClaimDeviceStatus]]"),
    (["PodLevelResources=false"], "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that "
                                  "are disabled: [PodLevelResources]"),
    (["MatchLabelKeysInPodTopologySpread=false"], "MatchLabelKeysInPodTopologySpreadSelectorMerge is enabled, but "
                                                  "depends on features that are disabled: [MatchLabelKeysInPodTopologySpread]"),
], ids=["gang without generic workload", "topology without generic workload", "preemption without gang",
        "workload claims without generic workload", "preemption alone", "two refusals together",
        "a default-on gate whose dependency is turned off", "one default-on dependent",
        "selector merge without match label keys"])
def test_a_gate_enabled_without_its_dependency_is_refused(values, message):
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates(values)
    assert str(err.value) == f'invalid argument "{values[-1]}" for "--feature-gates" flag: {message}'


def test_node_declared_features_off_alone_is_refused_for_the_gates_on_by_default_that_need_it():
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates(["NodeDeclaredFeatures=false"])
    assert str(err.value) == (
        'invalid argument "NodeDeclaredFeatures=false" for "--feature-gates" flag: ['
        "ExtendWebSocketsToKubelet is enabled, but depends on features that are disabled: [NodeDeclaredFeatures], "
        "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: "
        "[NodeDeclaredFeatures], "
        "InPlacePodVerticalScalingInitContainers is enabled, but depends on features that are disabled: "
        "[NodeDeclaredFeatures], "
        "RestartAllContainersOnContainerExits is enabled, but depends on features that are disabled: "
        "[NodeDeclaredFeatures]]")


@pytest.mark.parametrize("values", [
    [f"{WL},GangScheduling=true"],
    [f"{WL},GangScheduling=true,TopologyAwareWorkloadScheduling=true,WorkloadAwarePreemption=true"],
    [f"{WL},DRAWorkloadResourceClaims=true"],
    ["GangScheduling=true,GenericWorkload=true"],  # the order inside one value does not matter
    ["AllAlpha=true"],
    ["AllBeta=false"],
    [NODE_DECLARED_FEATURES_OFF],
    [WL, "GangScheduling=true"],
], ids=["gang", "every workload gate", "workload claims", "dependency named after", "all alpha", "no beta",
        "node declared features off with its dependents", "dependency in an earlier flag"])
def test_gates_with_their_dependencies_are_accepted(values):
    parse_feature_gates(values)


def test_each_occurrence_of_the_flag_is_checked_with_the_ones_before_it():
    with pytest.raises(FeatureGateError) as err:  # kube-scheduler's first Set already refuses it
        parse_feature_gates(["GangScheduling=true", WL])
    assert str(err.value).startswith('invalid argument "GangScheduling=true" for "--feature-gates" flag: ')


def test_turning_a_dependency_off_later_refuses_the_flag_that_does_it():
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates([f"{WL},GangScheduling=true", "GenericWorkload=false"])
    assert str(err.value) == ('invalid argument "GenericWorkload=false" for "--feature-gates" flag: '
                              "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]")


def test_every_dependency_is_a_gate_kubesched_accepts():
    for gate, dependencies in GATE_DEPENDENCIES.items():
        assert gate in GATES and set(dependencies) <= set(GATES), gate
        assert list(dependencies) == sorted(dependencies)


def test_the_workload_gates_are_alpha_and_off_by_default():
    for gate in ("GenericWorkload", "GangScheduling", "TopologyAwareWorkloadScheduling", "WorkloadAwarePreemption",
                 "DRAWorkloadResourceClaims"):
        assert GATES[gate] == GateSpec(False, "Alpha") and not DEFAULT_FEATURES.enabled(gate)


def test_node_declared_features_leaves_the_default_profile_with_its_gate():
    off = Features.from_gates({"NodeDeclaredFeatures": False})
    assert "NodeDeclaredFeatures" in [p.name for p in default_plugins()]
    assert "NodeDeclaredFeatures" not in [p.name for p in default_plugins(off)]


def test_node_declared_features_comes_last_in_the_default_profile():
    assert default_plugins()[-1].name == "NodeDeclaredFeatures"
