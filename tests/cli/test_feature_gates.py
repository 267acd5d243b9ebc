"""``--feature-gates`` on run, simulate and config: refused as kube-scheduler refuses, and deciding the default profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("command", [["config", "show"], ["simulate", "-"], ["run"]])
def test_an_unknown_gate_is_one_line_and_exit_2(command):
    result = invoke(*command, "--feature-gates", "NoSuchGate=true")
    assert result.exit_code == 2
    assert result.stderr.strip() == ('error: invalid argument "NoSuchGate=true" for "--feature-gates" flag: '
                                     "unrecognized feature gate: NoSuchGate")


def test_a_gate_turned_off_changes_the_default_profile():
    on = invoke("config", "show", "--extension-points")
    off = invoke("config", "show", "--extension-points", "--feature-gates",
                 "NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,InPlacePodLevelResourcesVerticalScaling=false,"
                 "InPlacePodVerticalScalingInitContainers=false,RestartAllContainersOnContainerExits=false")
    assert "NodeDeclaredFeatures" in on.stdout
    assert "NodeDeclaredFeatures" not in off.stdout


def test_simulate_without_dra_extended_resources_checks_them_as_device_plugin_resources(tmp_path: Path):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
                    "extendedResourceName": "example.com/gpu"}}
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                       "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "gpu-0"}]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"example.com/gpu": "1"}}}]}}
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, cls, slice_, pod]}))
    assert "1 scheduled" in invoke("simulate", str(path), "-q").stdout
    off = invoke("simulate", str(path), "-q", "--feature-gates", "DRAExtendedResource=false")
    assert "0 scheduled" in off.stdout


@pytest.mark.parametrize("command", [["config", "show"], ["simulate", "-"], ["run"]])
def test_a_gate_without_its_dependency_is_one_line_and_exit_2(command):
    result = invoke(*command, "--feature-gates", "GangScheduling=true")
    assert result.exit_code == 2
    assert result.stderr.strip() == ('error: invalid argument "GangScheduling=true" for "--feature-gates" flag: '
                                     "GangScheduling is enabled, but depends on features that are disabled: "
                                     "[GenericWorkload]")
