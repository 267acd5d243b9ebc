"""``simulate --kubeconfig`` lists workload-aware scheduling's PodGroups and Workloads
(``scheduling.k8s.io/v1alpha2``), and still works on a cluster that does not serve that alpha API."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.cluster.live_snapshot import listed_kinds
from kubesched.framework.config import default_config
from kubesched.framework.features import Features
from kubesched.plugins.registry import in_tree_registry
from tests.apiserver import APIServer
from tests.cli.dumps import node

GATES = "GenericWorkload=true"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_pod_groups_and_workloads_are_listed_before_pods() -> None:
    registry = in_tree_registry()
    kinds = [(k.api_version, k.plural) for k in listed_kinds(default_config(registry), registry)]
    assert ("scheduling.k8s.io/v1alpha2", "podgroups") in kinds
    assert ("scheduling.k8s.io/v1alpha2", "workloads") in kinds
    assert kinds[-1] == ("v1", "pods")


def test_with_generic_workload_off_they_are_quiet() -> None:
    off, on = in_tree_registry(), in_tree_registry(Features.from_gates({"GenericWorkload": True}))
    quiet = {k.plural: k.quiet for k in listed_kinds(default_config(off), off)}
    loud = {k.plural: k.quiet for k in listed_kinds(default_config(on), on)}
    assert quiet["podgroups"] and quiet["workloads"]
    assert not loud["podgroups"] and not loud["workloads"]


@pytest.mark.parametrize("gates, noted", [((), False), (("--feature-gates", GATES), True)])
def test_a_cluster_without_the_alpha_api_still_gives_a_snapshot(server: APIServer, kubeconfig: Path,
                                                                gates: tuple[str, ...], noted: bool) -> None:
    server.load([node("n1")])
    server.faults.add(method="GET", path="^/apis/scheduling.k8s.io/v1alpha2/", status=404, times=None)
    result = invoke("simulate", "--kubeconfig", str(kubeconfig), "-q", *gates)
    assert result.exit_code == 0, result.output
    note = "note: podgroups (scheduling.k8s.io/v1alpha2): not served by this API server"
    assert (note in result.stderr) is noted


def test_a_role_without_the_new_kinds_is_a_note_when_nothing_reads_them(server: APIServer, kubeconfig: Path) -> None:
    server.load([node("n1")])
    server.faults.add(method="GET", path="^/apis/scheduling.k8s.io/v1alpha2/", status=403, times=None)
    result = invoke("simulate", "--kubeconfig", str(kubeconfig), "-q")
    assert result.exit_code == 0, result.output
    assert "note: podgroups (scheduling.k8s.io/v1alpha2): not listed: 403 Forbidden" in result.stderr
    refused = invoke("simulate", "--kubeconfig", str(kubeconfig), "-q", "--feature-gates", GATES)
    assert refused.exit_code == 2 and "listing podgroups: 403 Forbidden" in refused.output
