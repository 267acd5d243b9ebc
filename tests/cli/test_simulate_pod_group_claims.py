"""`simulate` with DRAWorkloadResourceClaims: a gang whose PodGroup declares a claim template
shares the one claim the resourceclaim controller makes for the group, so four members
needing "a GPU" fit a node with a single GPU; with the gate off each member gets a claim of
its own and the gang does not fit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.cli.dumps import write_list
from tests.plugins.dra_helpers import gpu_class, gpu_slice, node, template
from tests.plugins.test_dra_pod_group_claims import member, pod_group

GATES = "GenericWorkload=true,GangScheduling=true"


def _simulate(tmp_path: Path, gates: str) -> dict[str, Any]:
    items = [node("a"), node("b"), gpu_slice("b", 1), gpu_class(), template("gpu-template"),
             pod_group(4, [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]),
             *[member(f"w{i}", templates={"gpu": "gpu-template"}) for i in range(4)]]
    cluster = write_list(tmp_path / "gang.yaml", items)
    result = CliRunner().invoke(cli, ["simulate", str(cluster), "--feature-gates", gates, "-o", "json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.output)
    return doc


def test_a_gang_sharing_its_podgroups_claim_lands_whole_on_the_one_gpu_node(tmp_path: Path) -> None:
    [group] = _simulate(tmp_path, GATES + ",DRAWorkloadResourceClaims=true")["podGroups"]
    assert group["placed"] == {f"default/w{i}": "b" for i in range(4)}


def test_a_gang_with_a_claim_per_member_does_not_fit_one_gpu_with_the_gate_off(tmp_path: Path) -> None:
    [group] = _simulate(tmp_path, GATES)["podGroups"]
    assert group["placed"] == {}
