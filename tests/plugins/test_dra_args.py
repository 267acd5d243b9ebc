"""DynamicResourcesArgs as kube-scheduler v1.36 reads them: Go durations, upstream's
ValidateDynamicResourcesArgs messages, fields refused when their feature gate is off, and
bindingTimeout reaching PreBind's binding-condition wait."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.config import ConfigError, parse_config
from kubesched.framework.features import Features
from kubesched.plugins.dynamicresources import DynamicResourcesArgs
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

from .dra_helpers import simulate

API = "kubescheduler.config.k8s.io/v1"


def config(args: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "KubeSchedulerConfiguration", "profiles": [{
        "schedulerName": "default-scheduler", "pluginConfig": [{"name": "DynamicResources", "args": args}]}]}


@pytest.mark.parametrize(("args", "problem"), [
    ({"bindingTimeout": "500ms"}, 'bindingTimeout: Invalid value: "500ms": must be at least 1 second'),
    ({"filterTimeout": "-1s"}, 'filterTimeout: Invalid value: "-1s": must be zero or positive'),
    ({"bindingTimeout": 30}, "bindingTimeout"),
    ({"bindingTimeout": "soon"}, 'bindingTimeout: time: invalid duration "soon"'),
    ({"timeout": "1s"}, "timeout"),
])
def test_bad_args_are_refused_naming_the_field(args: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError) as failure:
        parse_config(config(args), in_tree_registry(), UPSTREAM_ONLY)
    assert problem in str(failure.value)


@pytest.mark.parametrize(("args", "seconds"), [
    ({}, 600.0), ({"bindingTimeout": "1s"}, 1.0), ({"bindingTimeout": "2m30s"}, 150.0), ({"filterTimeout": "0s"}, 600.0),
])
def test_binding_timeout_defaults_to_ten_minutes(args: dict[str, Any], seconds: float) -> None:
    parsed = parse_config(config(args), in_tree_registry(), UPSTREAM_ONLY)
    decoded = parsed.profiles[0].plugin_config.get("DynamicResources")
    assert isinstance(decoded, DynamicResourcesArgs)
    assert decoded.binding_timeout_seconds() == seconds


def test_binding_timeout_reaches_the_plugin() -> None:
    raw = config({"bindingTimeout": "45s"})
    raw["percentageOfNodesToScore"] = 100
    sim = simulate(config=raw)
    plugin = sim.scheduler.profiles["default-scheduler"].plugin("DynamicResources")
    assert plugin is not None and plugin.binding_timeout == 45.0  # type: ignore[attr-defined]


@pytest.mark.parametrize(("args", "gate", "message"), [
    (DynamicResourcesArgs(binding_timeout="5s"), "enable_dra_device_binding_conditions",
     "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"),
    (DynamicResourcesArgs(binding_timeout="5s"), "enable_dra_resource_claim_device_status",
     "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"),
    (DynamicResourcesArgs(filter_timeout="0s"), "enable_dra_scheduler_filter_timeout",
     "filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled"),
])
def test_a_field_whose_gate_is_off_is_refused(args: DynamicResourcesArgs, gate: str, message: str) -> None:
    features = Features(**{gate: False})
    with pytest.raises(ArgsError) as failure:
        args.check_gates(features)
    assert str(failure.value) == message
    DynamicResourcesArgs().check_gates(features)  # the defaults: nothing refused
