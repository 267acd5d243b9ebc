"""``--feature-gates``: v1.36's defaults, kube-scheduler's refusals, and the default profile they decide."""

from __future__ import annotations

import pytest

from kubesched.framework.features import DEFAULT_FEATURES, FeatureGateError, Features, parse_feature_gates
from kubesched.plugins.registry import default_plugins


def test_defaults_are_v1_36s():
    assert DEFAULT_FEATURES.enable_dynamic_resource_allocation
    assert DEFAULT_FEATURES.enable_dra_extended_resource
    assert DEFAULT_FEATURES.enable_node_declared_features
    assert not DEFAULT_FEATURES.enable_dra_device_taint_rules
    assert not DEFAULT_FEATURES.enable_dra_list_type_attributes
    assert not DEFAULT_FEATURES.enable_storage_capacity_scoring


def test_a_gate_set_false_reaches_the_struct():
    features = Features.from_gates(parse_feature_gates(["DRAExtendedResource=false,NodeDeclaredFeatures=false"]))
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


def test_node_declared_features_leaves_the_default_profile_with_its_gate():
    off = Features.from_gates({"NodeDeclaredFeatures": False})
    assert "NodeDeclaredFeatures" in [p.name for p in default_plugins()]
    assert "NodeDeclaredFeatures" not in [p.name for p in default_plugins(off)]


def test_node_declared_features_comes_last_in_the_default_profile():
    assert default_plugins()[-1].name == "NodeDeclaredFeatures"
