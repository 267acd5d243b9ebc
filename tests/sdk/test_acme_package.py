"""The plugin SDK end to end, as a third party meets it: an installed package of three
plugins (annotations in Filter and Permit, a quota with preemption, a plugin reading whole
node documents) beside a broken sibling package, through the command line."""

from __future__ import annotations

import pytest
from acme_plugins import node_facts, quota, window

from kubesched.framework import PluginSpec, SignFragment, Status
from kubesched.objects import PodInfo
from kubesched.testing import ContractError, assert_plugin_contract, assert_signature_covers_reads, random_clusters

from .conftest import Acme

BROKEN_WARNING = ("warning: plugin package acme-gpu-topology, entry point 'gpu_topology' (acme_broken:spec): cannot "
                  "import: ModuleNotFoundError: No module named 'acme_nvml_native'; its plugins are not available")


def node(name: str, annotations: dict | None = None, cpu: str = "4", kernel: str = "5.15.0") -> dict:
    meta: dict = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                       "nodeInfo": {"kernelVersion": kernel}}}


def pod(name: str, namespace: str = "default", annotations: dict | None = None, cpu: str = "100m",
        priority: int = 0, node_name: str = "") -> dict:
    meta: dict = {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}"}
    if annotations:
        meta["annotations"] = annotations
    spec: dict = {"priority": priority, "containers": [{"name": "c", "image": "app",
                                                        "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def cluster(*items: dict) -> dict:
    return {"apiVersion": "v1", "kind": "List", "items": list(items)}


def config(*plugins: str, plugin_config: str = "") -> str:
    enabled = "\n".join(f"      - name: {p}" for p in plugins)
    return f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled:
{enabled}
{plugin_config}"""


QUOTA_CONFIG = """\
  pluginConfig:
  - name: TeamQuota
    args:
      limits:
        team-a: {pods: 2}
"""


# -- loading ---------------------------------------------------------------------------------
def test_config_show_lists_the_packages_plugins_and_warns_once_about_the_broken_sibling(acme: Acme):
    result = acme.run("config", "show", acme.write("c.yaml", config("MaintenanceWindow", "TeamQuota")),
                      "--extension-points")
    assert result.exit_code == 0, result.stderr
    assert "- name: MaintenanceWindow" in result.stdout and "- name: TeamQuota" in result.stdout
    assert result.stderr.splitlines() == [BROKEN_WARNING]


def test_a_default_simulate_goes_on_past_the_broken_sibling(acme: Acme):
    result = acme.run("simulate", acme.write("c.json", cluster(node("n1"), pod("p"))), "-q")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [BROKEN_WARNING]


def test_a_config_enabling_the_broken_packages_plugin_fails_in_one_line(acme: Acme):
    result = acme.run("simulate", acme.write("c.json", cluster(node("n1"), pod("p"))), "--config",
                      acme.write("c.yaml", config("GPUTopology")))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ") and 'plugin "GPUTopology" does not exist; installed plugin package ' \
        "acme-gpu-topology, entry point 'gpu_topology' (acme_broken:spec): cannot import" in lines[0]


def test_bad_quota_args_name_the_map_keys_as_upstream_field_paths(acme: Acme):
    bad = QUOTA_CONFIG.replace("{pods: 2}", "{pods: -1}")
    result = acme.run("config", "check", acme.write("c.yaml", config("TeamQuota", plugin_config=bad)))
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("profiles[0].pluginConfig[0].args.limits[team-a][pods]: must not be "
                                          "negative, got -1")


# -- annotations: Filter and Permit ------------------------------------------------------------
def test_the_window_filter_reads_node_and_pod_annotations(acme: Acme):
    snapshot = cluster(node("closed", {window.WINDOW: "closed"}), node("open", {window.WINDOW: "open"}, cpu="1"),
                       pod("web", cpu="600m"), pod("web-2", cpu="600m"),
                       pod("fixer", annotations={window.TOLERATE: "tolerate"}, cpu="600m"))
    out = acme.work / "placements.txt"
    result = acme.run("simulate", acme.write("c.json", snapshot), "--config", acme.write("c.yaml", config("MaintenanceWindow")),
                      "--tie-break", "name", "--output", str(out))
    assert result.exit_code == 0, result.stderr
    assert out.read_text().splitlines() == ["default/web -> open", "default/fixer -> closed"]
    assert "default/web-2: 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were in a closed maintenance " \
           "window." in result.stdout


def test_a_pod_awaiting_approval_waits_at_permit_and_is_rejected_at_the_timeout(acme: Acme):
    snapshot = cluster(node("n1"), pod("change", annotations={window.APPROVAL: "pending"}), pod("web"))
    result = acme.run("simulate", acme.write("c.json", snapshot), "--config", acme.write("c.yaml", config("MaintenanceWindow")),
                      "--explain", str(acme.work / "x.jsonl"))
    assert result.exit_code == 0, result.stderr
    message = "rejected due to timeout after waiting 2m0s at plugin MaintenanceWindow"
    assert f"  default/change: waited for MaintenanceWindow (waiting for change approval); rejected: {message}" \
        in result.stdout
    record = acme.explain("x.jsonl")["default/change"]
    assert record["chosen"] == "n1" and record["message"] == message
    assert record["permit"]["waits"] == [{"plugin": "MaintenanceWindow", "timeout": "2m0s",
                                          "reason": "waiting for change approval"}]
    assert record["binding"]["stage"] == "Permit"
    assert acme.explain("x.jsonl")["default/web"]["binding"] == {"result": "bound"}


# -- a quota with preemption --------------------------------------------------------------------
def test_a_team_over_quota_preempts_its_own_lower_priority_pod(acme: Acme):
    snapshot = cluster(node("n1", cpu="8"),
                       pod("batch-1", "team-a", priority=1, node_name="n1"), pod("batch-2", "team-a", priority=1, node_name="n1"),
                       pod("other", "team-b", priority=0, node_name="n1"),
                       pod("urgent", "team-a", priority=100))
    result = acme.run("simulate", acme.write("c.json", snapshot), "--tie-break", "name",
                      "--config", acme.write("c.yaml", config("TeamQuota", plugin_config=QUOTA_CONFIG)))
    assert result.exit_code == 0, result.stderr
    assert "1 pod(s) preempted:\n  team-a/batch-1 on n1, for team-a/urgent" in result.stdout or \
           "1 pod(s) preempted:\n  team-a/batch-2 on n1, for team-a/urgent" in result.stdout
    assert "1 scheduled" in result.stdout.splitlines()[0]


def test_lower_priority_pods_of_other_teams_free_no_quota(acme: Acme):
    snapshot = cluster(node("n1", cpu="8"),
                       pod("batch-1", "team-a", priority=100, node_name="n1"), pod("batch-2", "team-a", priority=100, node_name="n1"),
                       pod("other", "team-b", priority=0, node_name="n1"),
                       pod("urgent", "team-a", priority=100))
    result = acme.run("simulate", acme.write("c.json", snapshot),
                      "--config", acme.write("c.yaml", config("TeamQuota", plugin_config=QUOTA_CONFIG)))
    assert result.exit_code == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("  team-a/urgent: "))
    assert line.startswith("  team-a/urgent: 0/1 nodes are available: 1 team over quota.")
    assert line.endswith("preemption: 0/1 nodes are available: 1 team over quota.")  # removing team-b's pod freed nothing


# -- whole documents ------------------------------------------------------------------------------
def test_a_plugin_declaring_needs_raw_reads_the_node_document(acme: Acme):
    snapshot = cluster(node("old", kernel="5.15.0"), node("new", kernel="6.8.0"), pod("p"))
    out = acme.work / "placements.txt"
    result = acme.run("simulate", acme.write("c.json", snapshot), "--tie-break", "name", "--output", str(out),
                      "--config", acme.write("c.yaml", config("KernelPreference").replace(
                          "- name: KernelPreference", "- name: KernelPreference\n        weight: 50")))
    assert result.exit_code == 0, result.stderr
    assert out.read_text() == "default/p -> new\n"


# -- the contract suite, as the package's own tests would run it ---------------------------------
CLUSTERS = random_clusters(20, namespaces=["team-a", "team-b"],
                           node_annotations={window.WINDOW: ["open", "closed"]},
                           pod_annotations={window.TOLERATE: ["tolerate"], window.APPROVAL: ["pending"]})


def test_the_window_plugin_meets_the_contract():
    report = assert_plugin_contract(window.spec, points=["filter", "permit"], clusters=CLUSTERS)
    assert report.permit_waits > 0


def test_the_quota_plugin_meets_the_contract_with_its_extensions():
    report = assert_plugin_contract(quota.spec, {"limits": {"team-a": {"pods": 2, "cpu": 3000}}},
                                    points=["preFilter", "filter"], clusters=CLUSTERS)
    assert report.extension_checks > 0


def test_the_kernel_plugin_meets_the_contract_on_nodes_that_keep_their_documents():
    clusters = random_clusters(5)
    for c in clusters:  # random clusters parse nodes without their documents: give them one
        for info in c.snapshot.list():
            info.node.raw = {"status": {"nodeInfo": {"kernelVersion": "6.1" if len(info.name) % 2 else "5.4"}}}
    assert_plugin_contract(node_facts.spec, points=["score"], clusters=clusters)


class ForgetsTheAnnotation(window.MaintenanceWindow):
    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [], None  # but Filter reads acme.io/maintenance


def test_a_signature_that_misses_an_annotation_the_filter_reads_fails_the_contract():
    spec = PluginSpec("MaintenanceWindow", lambda args, handle: ForgetsTheAnnotation(args),
                      args_type=window.MaintenanceWindowArgs)
    with pytest.raises(ContractError, match="annotations"):
        assert_signature_covers_reads(spec, clusters=CLUSTERS)
