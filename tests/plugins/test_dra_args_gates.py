"""DynamicResourcesArgs and the feature gates, as upstream v1.36: SetDefaults_DynamicResourcesArgs
fills a field only when its gates are on (so ``config show`` leaves it out otherwise), and
ValidateDynamicResourcesArgs refuses a field whose gate is off (its table test's cases)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.framework.config import ConfigError, parse_config
from kubesched.framework.features import Features
from kubesched.plugins.dynamicresources import DynamicResourcesArgs
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

FILTER_OFF = "enable_dra_scheduler_filter_timeout"
BINDING_OFF = "enable_dra_device_binding_conditions"
STATUS_OFF = "enable_dra_resource_claim_device_status"
FILTER_FORBIDDEN = ("filterTimeout", "Forbidden: DRASchedulingFilterTimeout feature gate is disabled")
BINDING_FORBIDDEN = ("bindingTimeout", "Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                                       "feature gate is disabled")


def gates(*off: str) -> Features:
    return Features(**{gate: False for gate in off})


@pytest.mark.parametrize(("off", "filter_timeout", "binding_timeout"), [
    ((), "10s", "10m0s"),
    ((FILTER_OFF,), None, "10m0s"),
    ((BINDING_OFF,), "10s", None),
    ((STATUS_OFF,), "10s", None),
    ((FILTER_OFF, BINDING_OFF), None, None),
])
def test_each_timeout_is_defaulted_only_with_its_gates_on(off: tuple[str, ...], filter_timeout: str | None,
                                                         binding_timeout: str | None) -> None:
    defaulted = DynamicResourcesArgs().defaulted(gates(*off))
    assert (defaulted.filter_timeout, defaulted.binding_timeout) == (filter_timeout, binding_timeout)


@pytest.mark.parametrize(("args", "off", "problems"), [
    pytest.param(DynamicResourcesArgs("10s", "10m0s"), (), [], id="valid args (default)"),
    pytest.param(DynamicResourcesArgs(), (FILTER_OFF, BINDING_OFF, STATUS_OFF), [], id="valid args (disabled)"),
    pytest.param(DynamicResourcesArgs(filter_timeout="-1s"), (),
                 [("filterTimeout", 'Invalid value: "-1s": must be zero or positive')], id="negative FilterTimeout"),
    pytest.param(DynamicResourcesArgs(filter_timeout="-1s"), (FILTER_OFF,), [FILTER_FORBIDDEN],
                 id="negative FilterTimeout, disabled"),
    pytest.param(DynamicResourcesArgs(binding_timeout="30s"), (), [], id="valid BindingTimeout"),
    pytest.param(DynamicResourcesArgs(binding_timeout="0s"), (),
                 [("bindingTimeout", 'Invalid value: "0s": must be at least 1 second')], id="BindingTimeout < 1s (0s)"),
    pytest.param(DynamicResourcesArgs(binding_timeout="-1s"), (),
                 [("bindingTimeout", 'Invalid value: "-1s": must be at least 1 second')],
                 id="BindingTimeout < 1s (negative)"),
    pytest.param(DynamicResourcesArgs(binding_timeout="1s"), (BINDING_OFF,), [BINDING_FORBIDDEN],
                 id="BindingTimeout set but DRADeviceBindingConditions disabled"),
    pytest.param(DynamicResourcesArgs(binding_timeout="1s"), (STATUS_OFF,), [BINDING_FORBIDDEN],
                 id="BindingTimeout set but DRAResourceClaimDeviceStatus disabled"),
])
def test_validation_follows_the_gates(args: DynamicResourcesArgs, off: tuple[str, ...],
                                      problems: list[tuple[str, str]]) -> None:
    assert args.problems(gates(*off)) == problems


def _config(args: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{
        "schedulerName": "default-scheduler", "pluginConfig": [{"name": "DynamicResources", "args": args}]}]}


def test_a_config_setting_a_field_whose_gate_is_off_is_refused_naming_its_path() -> None:
    with pytest.raises(ConfigError) as failure:
        parse_config(_config({"filterTimeout": "10s"}), in_tree_registry(gates(FILTER_OFF)), UPSTREAM_ONLY)
    assert ("profiles[0].pluginConfig[0].args.filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate "
            "is disabled") in str(failure.value)


def _dynamic_resources_args(*flags: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["config", "show", *flags])
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(result.stdout)
    entry = next(c for c in doc["profiles"][0]["pluginConfig"] if c["name"] == "DynamicResources")
    return dict(entry["args"])


def test_config_show_writes_both_timeouts_at_the_default_gates() -> None:
    args = _dynamic_resources_args()
    assert (args["filterTimeout"], args["bindingTimeout"]) == ("10s", "10m0s")


def test_config_show_leaves_out_the_timeouts_whose_gates_are_off() -> None:
    args = _dynamic_resources_args("--feature-gates", "DRASchedulerFilterTimeout=false,DRADeviceBindingConditions=false")
    assert args == {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DynamicResourcesArgs"}
