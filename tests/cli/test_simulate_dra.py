"""simulate with DRA objects: pods with claims are placed, and the terminal explanation names their devices."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubesched.cli.main import cli

API = "resource.k8s.io/v1"


def test_explain_pods_names_the_devices_a_scheduled_pod_got(tmp_path: Path):
    items = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
        {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}},
        {"apiVersion": API, "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": "default"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "i"}],
                  "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "one-gpu"}]}},
    ]
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    result = CliRunner().invoke(cli, ["simulate", str(path), "--explain-pods", "trainer"])
    assert result.exit_code == 0, result.output
    assert "default/trainer: scheduled on n1" in result.output
    assert "  device default/trainer-dev-" in result.output
    assert " gpu: gpu.example.com/n1/gpu-0" in result.output
